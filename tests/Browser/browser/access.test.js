'use strict';
// jquery.laharsub.js against a server in Jwt mode: the accessToken option in each of its forms, the
// refresh after a 401, a 403 that reaches onError, and the demo page with ?token=.
const { describe, test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { startServer } = require('../support/server');
const { tokenIssuer } = require('../support/tokens');
const { launchBrowser, newPage, openHarness, serveHarness, eventually } = require('../support/browser');

const key = 'browser-test-signing-key-0123456789abcdef';
const issuer = 'https://issuer.test';
const audience = 'laharsub-browser-tests';
const everything = { create: true, publish: true, subscribe: true, list: true, delete: true };

const token = tokenIssuer({ key, issuer, audience });

describe('jquery.laharsub.js with access tokens', () => {
  let server;
  let browser;
  const admin = token(everything, { subject: 'admin' });

  const call = async (method, path, body, bearer = admin) => {
    const headers = { Authorization: `Bearer ${bearer}` };
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
    }
    const response = await fetch(server.api + path, {
      method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(10000),
    });
    const text = await response.text();
    assert.ok(response.ok, `${method} ${path} answered ${response.status}: ${text}`);
    return text ? JSON.parse(text) : undefined;
  };

  before(async () => {
    [server, browser] = await Promise.all([startServer({
      settings: { 'Auth:Mode': 'Jwt', 'Auth:Jwt:SigningKey': key, 'Auth:Jwt:Issuer': issuer, 'Auth:Jwt:Audience': audience },
    }), launchBrowser()]);
  });

  const harnesses = [];

  after(async () => {
    await browser?.close();
    for (const harness of harnesses) {
      await harness.close();
    }
    await server?.stop();
  });

  /**
   * A harness page whose client is built in the page with `accessToken` made by `script` (page-side
   * code) and the given client options. With `served`, the page comes from a loopback origin of its
   * own, as a WebSocket needs (Local Network Access refuses one to a route-fulfilled page).
   */
  const openWith = async (version, script, tokens, { options = {}, served = false } = {}) => {
    const page = await newPage(browser);
    let api = '/ps';
    if (served) {
      const harness = { scriptBase: `${server.url}/demo`, api: server.api, version };
      const origin = await serveHarness(harness);
      harnesses.push(origin);
      await openHarness(page, { origin: origin.origin, served: true, ...harness });
      api = server.api;
    } else {
      await openHarness(page, { origin: server.url, scriptBase: '/demo', api, version });
    }
    await page.evaluate(({ script, tokens, api, options }) => {
      window.tokens = tokens;
      window.tokenCalls = 0;
      window.client.close();
      // eslint-disable-next-line no-new-func
      window.client = $.laharsub(api, $.extend({
        retryDelay: 200, maxRetryDelay: 1000, accessToken: new Function(script)(),
        onStatus: function (status) { window.statuses.push(status); },
        onTransport: function (transport) { window.transports.push(transport); }
      }, options));
    }, { script, tokens, api, options });
    return page;
  };

  // Each form of the option: page-side code returning the accessToken value, given window.tokens.
  const forms = {
    'a string': 'return window.tokens[0];',
    'a function returning a string': 'return function () { window.tokenCalls++; return window.tokens[0]; };',
    'a function returning a native promise':
      'return function () { window.tokenCalls++; return new Promise(function (r) { setTimeout(function () { r(window.tokens[0]); }, 10); }); };',
    'a function returning a jQuery promise': 'return function () { window.tokenCalls++; return $.Deferred().resolve(window.tokens[0]).promise(); };',
  };

  for (const version of ['3.7.1', '4.0.0']) {
    for (const [form, script] of Object.entries(forms)) {
      test(`jQuery ${version}: accessToken as ${form} carries the token on publishes and polls`, async () => {
        const topic = (await call('POST', '/topics')).topicId;
        const page = await openWith(version, script, [token({ publish: [String(topic)], subscribe: [String(topic)] })]);

        await page.evaluate((id) => window.track(id, 1), topic);
        await page.evaluate((id) => window.client.publish(id, { hello: 'with a token' }), topic);

        const messages = await eventually(async () => {
          const found = await page.evaluate(() => window.events.filter((e) => e.type === 'message'));
          return found.length ? found : null;
        }, 'the message published with the token');
        assert.deepEqual(messages[0].data, { hello: 'with a token' });
        assert.deepEqual(await page.evaluate(() => window.events.filter((e) => e.type === 'error')), []);
        await page.context().close();
      });
    }
  }

  test('an expired token is refreshed once after a 401 and the request goes through', async () => {
    const topic = (await call('POST', '/topics')).topicId;
    const grant = { publish: [String(topic)] };
    const page = await openWith('4.0.0', 'return function () { return window.tokens[Math.min(window.tokenCalls++, window.tokens.length - 1)]; };',
      [token(grant, { expiresIn: -3600 }), token(grant)]);

    const published = await page.evaluate((id) => window.client.publish(id, 'after a refresh'), topic);

    assert.equal(published.messageId, 1);
    assert.equal(await page.evaluate(() => window.tokenCalls), 2);
    await page.context().close();
  });

  test('a poll whose token expired is refreshed once and the subscription goes on', async () => {
    const topic = (await call('POST', '/topics')).topicId;
    await call('POST', `/topics/${topic}`, { before: 'the refresh' });
    const grant = { subscribe: [String(topic)] };
    const page = await openWith('4.0.0', 'return function () { return window.tokens[Math.min(window.tokenCalls++, window.tokens.length - 1)]; };',
      [token(grant, { expiresIn: -3600 }), token(grant)], { options: { transports: ['longpoll'] } });
    const pollStatuses = [];
    page.on('response', (r) => { if (r.url().includes('/ps/subscriptions')) { pollStatuses.push(r.status()); } });

    // From message 1 the subscription starts with a poll, so the expired token meets the poll first.
    await page.evaluate((id) => window.track(id, 1), topic);
    const messages = await eventually(async () => {
      const found = await page.evaluate(() => window.events.filter((e) => e.type === 'message'));
      return found.length ? found : null;
    }, 'the message polled with the refreshed token');

    assert.deepEqual(messages[0].data, { before: 'the refresh' });
    assert.deepEqual(pollStatuses.slice(0, 2), [401, 200]);
    assert.equal(await page.evaluate(() => window.tokenCalls) >= 2, true);
    assert.deepEqual(await page.evaluate(() => window.events.filter((e) => e.type === 'error')), []);
    await page.context().close();
  });

  for (const transport of ['websocket', 'sse']) {
    test(`${transport === 'sse' ? 'an SSE stream carries its token in its Authorization header' : 'a WebSocket stream carries its token as access_token'}, and one whose token expired is opened again with a fresh one`, async () => {
      const topic = (await call('POST', '/topics')).topicId;
      await call('POST', `/topics/${topic}`, { before: 'the refresh' });
      const grant = { subscribe: [String(topic)], publish: [String(topic)] };
      const tokens = [token(grant, { expiresIn: -3600 }), token(grant)];
      const page = await openWith('4.0.0', 'return function () { return window.tokens[Math.min(window.tokenCalls++, window.tokens.length - 1)]; };',
        tokens, { options: { transports: [transport] }, served: true });
      // A WebSocket carries its token in the URL (a browser cannot set its headers); an event stream, read with
      // fetch since the plugin runs on the laharsub module, in the Authorization header, out of the server's logs.
      const sentTokens = [];
      page.on('websocket', (socket) => sentTokens.push(new URL(socket.url()).searchParams.get('access_token')));
      page.on('request', (r) => {
        if (/text\/event-stream/.test(r.headers().accept || '')) {
          sentTokens.push((r.headers().authorization || '').replace(/^Bearer /, ''));
        }
      });

      // The stream with the expired token is refused; the poll that checks why gets the 401; the
      // stream is opened again with the next token, on the same transport.
      await page.evaluate((id) => window.track(id, 1), topic);
      await page.waitForFunction(() => window.client.transport !== null && window.statuses.at(-1) === 'connected');
      await page.evaluate((id) => Promise.resolve(window.client.publish(id, { after: 'the refresh' })), topic);
      const messages = await eventually(async () => {
        const found = await page.evaluate(() => window.events.filter((e) => e.type === 'message'));
        return found.length === 2 ? found : null;
      }, 'the messages over the stream with the fresh token');

      assert.deepEqual(messages.map((m) => m.data), [{ before: 'the refresh' }, { after: 'the refresh' }]);
      assert.equal(await page.evaluate(() => window.client.transport), transport);
      assert.deepEqual(await page.evaluate(() => window.transports), [transport]);
      assert.deepEqual(sentTokens.slice(0, 2), tokens, 'the expired token, then the fresh one');
      assert.deepEqual(await page.evaluate(() => window.events.filter((e) => e.type === 'error')), []);
      await page.context().close();
    });
  }

  test('a token that stays bad fails with 401 after one refresh, and onError gets the problem', async () => {
    const topic = (await call('POST', '/topics')).topicId;
    const page = await openWith('4.0.0', 'return function () { window.tokenCalls++; return window.tokens[0]; };',
      [token({ publish: [String(topic)] }, { expiresIn: -3600 })]);

    const failure = await page.evaluate((id) => window.client.publish(id, 'refused').then(
      () => null, (e) => ({ status: e.status, title: e.problem && e.problem.title })), topic);

    assert.deepEqual(failure, { status: 401, title: 'Token refused' });
    assert.equal(await page.evaluate(() => window.tokenCalls), 2);
    assert.equal((await call('GET', `/topics/${topic}`)).lastMessageId, 0);
    await page.context().close();
  });

  test('a forbidden topic gets a 403 in its onError while the allowed one keeps its messages', async () => {
    const allowed = (await call('POST', '/topics')).topicId;
    const forbidden = (await call('POST', '/topics')).topicId;
    const page = await openWith('4.0.0', 'return window.tokens[0];', [token({ subscribe: [String(allowed)] })]);

    // From message 1: the subscriptions start without asking for the topics' info, so the poll meets the 403.
    await page.evaluate((ids) => Promise.all(ids.map((id) => window.track(id, 1))), [allowed, forbidden]);
    const error = await eventually(async () => (await page.evaluate(() => window.events.filter((e) => e.type === 'error')))[0],
      'the 403 in the forbidden subscription\'s onError');
    await call('POST', `/topics/${allowed}`, { still: 'here' });
    await eventually(async () => (await page.evaluate(() => window.events.filter((e) => e.type === 'message'))).length === 1,
      'the allowed topic\'s message');

    assert.equal(error.topicId, forbidden);
    assert.equal(error.status, 403);
    assert.match(error.detail, new RegExp(`subscribe to topic ${forbidden}`));
    await page.context().close();
  });

  test('the demo chat works in Jwt mode when opened with ?token=', async () => {
    const page = await newPage(browser);
    await page.goto(`${server.url}/demo/?token=${encodeURIComponent(token(everything, { subject: 'demo' }))}`);
    await page.locator('#welcome-create').click();
    const title = await eventually(async () => /Room #(\d+)/.exec(await page.locator('#room-title').textContent()), 'the new room');
    await page.locator('#message-input').fill('Hello with a token');
    await page.locator('#message-input').press('Enter');
    await page.locator('.message .text', { hasText: 'Hello with a token' }).waitFor();

    assert.equal((await call('GET', `/topics/${Number(title[1])}`)).lastMessageId, 1);
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });
});
