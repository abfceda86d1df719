'use strict';
// jquery.laharsub.js in headless Chromium against the real server: one poll for many topics,
// unsubscribe, payloads, errors, and cross-origin use.
const { describe, test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { startServer, api } = require('../support/server');
const { launchBrowser, newPage, openHarness, serveHarness, trackPolls, eventually } = require('../support/browser');

const versions = ['3.7.1', '4.0.0'];

const messagesOf = (page, topicId) =>
  page.evaluate((id) => window.events.filter((e) => e.type === 'message' && e.topicId === id), topicId);

describe('jquery.laharsub.js in a real browser', () => {
  let server;
  let browser;

  before(async () => {
    [server, browser] = await Promise.all([startServer(), launchBrowser()]);
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  const open = async (version, options) => {
    const page = await newPage(browser);
    await openHarness(page, { origin: server.url, scriptBase: '/demo', api: '/ps', version, options });
    return page;
  };

  const waitingPolls = async (topicId) => (await api(server, 'GET', `/topics/${topicId}`)).waitingPolls;

  for (const version of versions) {
    describe(`with jQuery ${version}`, () => {
      test('a page subscribed to three topics keeps exactly one poll outstanding and gets messages from all three', async () => {
        const topics = [];
        for (let i = 0; i < 3; i++) {
          topics.push((await api(server, 'POST', '/topics')).topicId);
        }
        const page = await newPage(browser);
        const polls = trackPolls(page);
        // The long poll's own behaviour (the default transports start with a WebSocket: streams.test.js).
        await openHarness(page, { origin: server.url, scriptBase: '/demo', api: '/ps', version, options: { transports: ['longpoll'] } });
        await page.evaluate((ids) => Promise.all(ids.map((id) => window.track(id))), topics);

        const settled = async () => polls.outstanding() === 1 &&
          (await Promise.all(topics.map(waitingPolls))).every((n) => n === 1);
        await eventually(settled, 'one poll waiting on all three topics');
        assert.equal(polls.outstanding(), 1, `outstanding polls: ${polls.urls().join(' ')}`);
        // The module's compact form (topics=14:1~epoch,15:1~epoch); the plugin sent the indexed one before it ran on the module.
        const named = new URL(polls.urls()[0]).searchParams.get('topics').split(',').map((part) => Number(part.split(':')[0]));
        assert.deepEqual(named, topics, polls.urls()[0]);

        for (const [index, id] of topics.entries()) {
          await api(server, 'POST', `/topics/${id}`, { n: index });
        }
        for (const [index, id] of topics.entries()) {
          await eventually(async () => (await messagesOf(page, id)).length === 1, `the message of topic ${id}`);
          assert.deepEqual((await messagesOf(page, id))[0].data, { n: index });
        }
        await eventually(settled, 'one poll waiting again after the deliveries');
        assert.ok(polls.started() < 12, `${polls.started()} polls were sent for 3 subscriptions and 3 messages`);
        await page.context().close();
      });

      test('unsubscribing stops deliveries for that topic only', async () => {
        const first = (await api(server, 'POST', '/topics')).topicId;
        const second = (await api(server, 'POST', '/topics')).topicId;
        const page = await open(version);
        await page.evaluate((ids) => Promise.all(ids.map((id) => window.track(id))), [first, second]);
        await eventually(async () => await waitingPolls(first) === 1 && await waitingPolls(second) === 1, 'the poll on both topics');

        await page.evaluate((id) => window.handles[id].unsubscribe(), first);
        await eventually(async () => await waitingPolls(first) === 0 && await waitingPolls(second) === 1, 'the poll on the second topic only');
        await api(server, 'POST', `/topics/${first}`, 'not for me');
        await api(server, 'POST', `/topics/${second}`, 'still for me');

        await eventually(async () => (await messagesOf(page, second)).length === 1, 'the second topic\'s message');
        assert.deepEqual(await messagesOf(page, first), []);
        assert.equal(await page.evaluate((id) => window.handles[id].active(), first), false);
        assert.deepEqual(await page.evaluate(() => window.client.topics()), [second]);
        await page.context().close();
      });

      test('unicode text, JSON and binary payloads arrive intact', async () => {
        const topic = (await api(server, 'POST', '/topics')).topicId;
        const page = await open(version);
        await page.evaluate((id) => window.track(id, 1), topic);
        const text = 'Grüße, 世界! مرحبا 🌋👩‍👩‍👧 e\u0301 \u0000 "quoted" \\ end';
        const json = { emoji: '🌋', nested: { list: [1, 2.5, true, null, 'ünïcödé'] }, rtl: 'שלום', empty: '' };
        await page.evaluate(([id, t, j]) => Promise.all([
          Promise.resolve(window.client.publish(id, t)),
          Promise.resolve(window.client.publish(id, j)),
        ]), [topic, text, json]);
        await api(server, 'POST', `/topics/${topic}`, new Uint8Array([0, 1, 2, 254, 255]), 'application/octet-stream');

        await eventually(async () => (await messagesOf(page, topic)).length === 3, 'three messages');
        const received = await messagesOf(page, topic);
        const byType = (prefix) => received.find((m) => m.contentType.startsWith(prefix));
        assert.equal(byType('text/plain').data, text);
        assert.deepEqual(byType('application/json').data, json);
        assert.deepEqual(byType('application/octet-stream').data, [0, 1, 2, 254, 255]);
        assert.equal(byType('application/octet-stream').encoding, 'base64');
        const log = await page.locator('#log').textContent();
        assert.ok(log.includes('שלום') && log.includes('🌋'), 'rendered in the page as well');
        await page.context().close();
      });

      test('a topic that does not exist reaches onError with the server\'s problem, and other topics keep working', async () => {
        const real = (await api(server, 'POST', '/topics')).topicId;
        const page = await open(version);
        await page.evaluate(([id]) => Promise.all([window.track(id, 1), window.track(987654, 1)]), [real]);
        const error = await eventually(async () => (await page.evaluate(() => window.events.find((e) => e.type === 'error'))), 'onError');
        assert.equal(error.topicId, 987654);
        assert.equal(error.status, 404);
        assert.match(error.detail, /Topic 987654 does not exist/);
        await api(server, 'POST', `/topics/${real}`, 'after the error');
        await eventually(async () => (await messagesOf(page, real)).length === 1, 'the real topic\'s message');
        assert.deepEqual(await page.evaluate(() => window.client.topics()), [real]);
        await page.context().close();
      });
    });
  }

  test('publishMany publishes one message to several topics, all or none, with an Idempotency-Key on every publish', async () => {
    const a = (await api(server, 'POST', '/topics')).topicId;
    const b = (await api(server, 'POST', '/topics')).topicId;
    const page = await open('4.0.0', { transports: ['longpoll'] });
    const keys = [];
    page.on('request', (r) => { if (r.method() === 'POST' && r.url().includes('/topics/')) keys.push(r.headers()['idempotency-key']); });

    const messages = await page.evaluate((ids) => Promise.resolve(window.client.publishMany(ids, { price: 42 })), [b, a]);
    const refused = await page.evaluate((ids) => Promise.resolve(window.client.publishMany(ids, 'never'))
      .then(() => null, (e) => ({ status: e.status, topics: e.problem && e.problem.topics })), [a, 999999]);
    const keyed = await page.evaluate((id) => Promise.resolve(window.client.publishMany([id], 'once', null, { idempotencyKey: 'browser-key-1' })), a);
    const again = await page.evaluate((id) => Promise.resolve(window.client.publishMany([id], 'once', null, { idempotencyKey: 'browser-key-1' })), a);
    const single = await page.evaluate((id) => Promise.resolve(window.client.publish(id, 'single')), b);

    assert.deepEqual(messages.map((m) => [m.topicId, m.messageId]), [[b, 1], [a, 1]]);
    assert.equal(refused.status, 404);
    assert.deepEqual(refused.topics, [{ topicId: 999999, reason: 'notFound' }]);
    assert.deepEqual(again, keyed);
    assert.equal(single.messageId, 2);
    assert.equal((await api(server, 'GET', `/topics/${a}`)).lastMessageId, 2);
    assert.equal(keys.length, 5);
    assert.ok(keys.every((k) => /^"[\x20-\x7e]{1,255}"$/.test(k || '')), `every publish carries a key: ${keys.join(' ')}`);
    assert.equal(new Set(keys).size, 4, 'a new key per call, the given one twice');
    await page.context().close();
  });

  test('a page from another origin publishes and subscribes through CORS', async () => {
    // A real server on another port: Chromium lets a loopback page call another loopback origin
    // (subject to CORS), while a page without an address would be refused by Local Network Access.
    const harness = { scriptBase: `${server.url}/demo`, api: server.api, version: '4.0.0', options: {} };
    const pages = await serveHarness(harness);
    const otherOrigin = pages.origin;
    try {
      const topic = (await api(server, 'POST', '/topics')).topicId;
      const page = await newPage(browser);
      const origins = new Set();
      page.on('request', (r) => { if (r.url().includes('/ps/')) origins.add(new URL(r.url()).origin); });
      // The harness is served from the other origin and loads the scripts from the Laharsub server.
      await openHarness(page, { origin: otherOrigin, served: true, ...harness });
      assert.equal(await page.evaluate(() => window.location.origin), otherOrigin);
      await page.evaluate((id) => window.track(id, 1), topic);
      const published = await page.evaluate((id) => Promise.resolve(window.client.publish(id, { from: 'elsewhere' })), topic);
      assert.equal(published.topicId, topic);
      await eventually(async () => (await messagesOf(page, topic)).length === 1, 'the cross-origin message');
      const created = await page.evaluate(() => Promise.resolve(window.client.createTopic()));
      assert.ok(created.topicId > topic);
      assert.deepEqual([...origins], [server.url]);
      await page.context().close();
    } finally {
      await pages.close();
    }
  });
});
