'use strict';
// The jQuery client's transports in headless Chromium against the real server: each transport end to
// end, and the fallback chain through a proxy that refuses WebSocket upgrades and buffers event
// streams. Streams across killed instances on Redis: streams-redis.test.js.
const { describe, test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { startServer, api } = require('../support/server');
const { startProxy } = require('../support/proxy');
const { launchBrowser, newPage, openHarness, serveHarness, eventually } = require('../support/browser');

const transports = ['websocket', 'sse', 'longpoll'];
const versions = ['3.7.1', '4.0.0'];

const eventsOf = (page, topicId) => page.evaluate((id) => window.events.filter((e) => e.topicId === id), topicId);
const messagesOf = async (page, topicId) => (await eventsOf(page, topicId)).filter((e) => e.type === 'message');

/** The page's subscription connections by kind (WebSockets, EventSources, XHR polls), and its REST publishes. */
function watchConnections(page) {
  const seen = { websocket: 0, sse: 0, longpoll: 0, other: 0, restPublishes: 0 };
  page.on('websocket', (socket) => {
    if (socket.url().includes('/ps/subscriptions')) {
      seen.websocket++;
    }
  });
  page.on('request', (request) => {
    if (request.url().includes('/ps/subscriptions')) {
      // The client runs on the laharsub module, which reads event streams with fetch too: the Accept header tells them from polls.
      const type = request.resourceType();
      const stream = /text\/event-stream/.test(request.headers().accept || '');
      seen[type === 'eventsource' || (type === 'fetch' && stream) ? 'sse' : type === 'xhr' || type === 'fetch' ? 'longpoll' : 'other']++;
    }
    if (request.method() === 'POST' && /\/ps\/topics\/\d+$/.test(request.url())) {
      seen.restPublishes++;
    }
  });
  return seen;
}

const harnesses = [];

/**
 * Opens the harness page from a loopback origin of its own (serveHarness): Chromium's Local Network
 * Access refuses a route-fulfilled page (which has no address) its WebSockets to loopback.
 */
async function openPage(page, harness) {
  const served = await serveHarness(harness);
  harnesses.push(served);
  await openHarness(page, { origin: served.origin, served: true, ...harness });
}

after(async () => {
  for (const harness of harnesses) {
    await harness.close();
  }
});

/** Waits until the page's client has started a connection and is connected; returns its transport. */
async function connectedTransport(page) {
  await page.waitForFunction(() => window.client.transport !== null && window.statuses.at(-1) === 'connected');
  return page.evaluate(() => window.client.transport);
}

describe('each transport end to end', () => {
  let server;
  let browser;

  before(async () => {
    // Five messages per topic, so that a reader from message 1 of a longer topic is told of a gap.
    [server, browser] = await Promise.all([startServer({ settings: { MaxMessagesPerTopic: 5 } }), launchBrowser()]);
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  for (const transport of transports) {
    for (const version of versions) {
      test(`${transport} alone, jQuery ${version}: subscribes, receives in order, publishes, and hears gaps, resets and deletions`, async () => {
        const topics = [];
        for (let i = 0; i < 4; i++) {
          topics.push((await api(server, 'POST', '/topics')).topicId);
        }
        const [liveId, historyId, resetId, doomedId] = topics;
        for (let i = 1; i <= 8; i++) {
          await api(server, 'POST', `/topics/${historyId}`, `h${i}`);
        }
        await api(server, 'POST', `/topics/${resetId}`, 'r1');
        await api(server, 'POST', `/topics/${resetId}`, 'r2');

        const page = await newPage(browser);
        const seen = watchConnections(page);
        await openPage(page, { scriptBase: `${server.url}/demo`, api: server.api, version, options: { transports: [transport] } });
        // From now on; from 1 of a topic that kept only 4..8; from 50, beyond the end; a topic deleted later.
        await page.evaluate((ids) => Promise.all([window.track(ids[0]), window.track(ids[1], 1), window.track(ids[2], 50), window.track(ids[3], 1)]),
          topics);
        assert.equal(await connectedTransport(page), transport);

        const published = await page.evaluate((id) => Promise.resolve(window.client.publish(id, { from: 'the page' })), liveId);
        assert.equal(published.messageId, 1);
        await api(server, 'POST', `/topics/${liveId}`, 'two');
        await api(server, 'POST', `/topics/${liveId}`, 'three');
        await eventually(async () => (await messagesOf(page, liveId)).length === 3, 'the three live messages');
        await eventually(async () => (await messagesOf(page, historyId)).length === 5, 'the retained history');
        await eventually(async () => (await messagesOf(page, resetId)).length === 2, 'the messages after the reset');
        // Deleted while the connection waits on it (a long poll sent after the deletion would be
        // answered 404 instead: the notice goes to connections that wait).
        await eventually(async () => (await api(server, 'GET', `/topics/${doomedId}`)).waitingPolls === 1, 'the connection waiting');
        await api(server, 'DELETE', `/topics/${doomedId}`);
        await eventually(async () => (await eventsOf(page, doomedId)).some((e) => e.type === 'topicDeleted'), 'the deletion');

        assert.deepEqual((await messagesOf(page, liveId)).map((m) => [m.messageId, m.data]), [[1, { from: 'the page' }], [2, 'two'], [3, 'three']]);
        assert.deepEqual((await eventsOf(page, historyId)).map((e) => e.type === 'gap' ? ['gap', e.fromMessageId, e.toMessageId] : [e.messageId, e.data]),
          [['gap', 1, 3], [4, 'h4'], [5, 'h5'], [6, 'h6'], [7, 'h7'], [8, 'h8']]);
        const reset = await eventsOf(page, resetId);
        assert.deepEqual(reset.map((e) => e.type === 'reset' ? ['reset', e.reason, e.requestedFrom, e.firstMessageId] : [e.messageId, e.data]),
          [['reset', 'beyondEnd', 50, 1], [1, 'r1'], [2, 'r2']]);
        assert.deepEqual((await eventsOf(page, doomedId)).map((e) => e.type), ['topicDeleted']);
        assert.deepEqual(await page.evaluate(() => window.client.topics()), [liveId, historyId, resetId]);

        // One connection, of the transport asked for, held at the server for all the topics.
        await eventually(async () => (await api(server, 'GET', `/topics/${liveId}`)).waitingPolls === 1, 'one connection waiting');
        assert.deepEqual(await page.evaluate(() => window.transports), [transport]);
        const expected = {
          websocket: { websocket: true, sse: false, longpoll: false, restPublishes: 0 },
          sse: { websocket: false, sse: true, longpoll: false, restPublishes: 1 },
          longpoll: { websocket: false, sse: false, longpoll: true, restPublishes: 1 },
        }[transport];
        assert.deepEqual({ websocket: seen.websocket > 0, sse: seen.sse > 0, longpoll: seen.longpoll > 0, restPublishes: seen.restPublishes }, expected,
          JSON.stringify(seen));
        assert.equal(seen.other, 0);
        assert.deepEqual(await page.evaluate(() => window.events.filter((e) => e.type === 'error')), []);
        assert.deepEqual(page.errors, []);
        await page.context().close();
      });
    }
  }
});

describe('publishing on the WebSocket', () => {
  let server;
  let browser;

  before(async () => {
    [server, browser] = await Promise.all([startServer(), launchBrowser()]);
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  test('publishMany and keyed publishes go on the socket: all or none, and a repeated key is stored once', async () => {
    const a = (await api(server, 'POST', '/topics')).topicId;
    const b = (await api(server, 'POST', '/topics')).topicId;
    const page = await newPage(browser);
    const posts = [];
    page.on('request', (r) => { if (r.method() === 'POST') posts.push(r.url()); });
    await openPage(page, { scriptBase: `${server.url}/demo`, api: server.api, version: '4.0.0', options: { transports: ['websocket'] } });
    await page.evaluate((id) => window.track(id), a);
    assert.equal(await connectedTransport(page), 'websocket');

    const messages = await page.evaluate((ids) => Promise.resolve(window.client.publishMany(ids, { price: 42 })), [b, a]);
    const refused = await page.evaluate((ids) => Promise.resolve(window.client.publishMany(ids, 'never'))
      .then(() => null, (e) => ({ status: e.status, topics: e.problem && e.problem.topics })), [a, 999999]);
    const keyed = await page.evaluate((ids) => Promise.resolve(window.client.publishMany(ids, 'once', null, { idempotencyKey: 'socket-key-1' })), [a, b]);
    const again = await page.evaluate((ids) => Promise.resolve(window.client.publishMany(ids, 'once', null, { idempotencyKey: 'socket-key-1' })), [a, b]);
    const reused = await page.evaluate((ids) => Promise.resolve(window.client.publishMany(ids, 'other', null, { idempotencyKey: 'socket-key-1' }))
      .then(() => null, (e) => ({ status: e.status, errors: e.problem && e.problem.errors })), [a, b]);
    await eventually(async () => (await messagesOf(page, a)).length === 2, 'the socket delivers both messages of its topic');

    assert.deepEqual(messages.map((m) => [m.topicId, m.messageId]), [[b, 1], [a, 1]]);
    assert.equal(refused.status, 404);
    assert.deepEqual(refused.topics, [{ topicId: 999999, reason: 'notFound' }]);
    assert.deepEqual(keyed.map((m) => [m.topicId, m.messageId]), [[a, 2], [b, 2]]);
    assert.deepEqual(again, keyed);
    assert.equal(reused.status, 422);
    assert.ok(reused.errors && reused.errors.idempotencyKey, JSON.stringify(reused));
    assert.deepEqual((await messagesOf(page, a)).map((m) => [m.messageId, m.data]), [[1, { price: 42 }], [2, 'once']]);
    assert.equal((await api(server, 'GET', `/topics/${b}`)).lastMessageId, 2);
    assert.deepEqual(posts, [], 'every publish went on the socket');
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });
});

describe('the fallback chain through a proxy', () => {
  let server;
  let browser;
  const proxies = [];

  before(async () => {
    [server, browser] = await Promise.all([startServer(), launchBrowser()]);
  });

  after(async () => {
    await browser?.close();
    for (const proxy of proxies) {
      await proxy.close();
    }
    await server?.stop();
  });

  const cases = [
    { behind: 'a proxy that forwards everything', proxy: {}, expected: 'websocket', version: '4.0.0' },
    { behind: 'a proxy that answers WebSocket upgrades 400', proxy: { refuseUpgrades: true }, expected: 'sse', version: '3.7.1' },
    {
      behind: 'a proxy that drops WebSocket upgrades and buffers event streams',
      proxy: { refuseUpgrades: true, upgradeRefusal: 'drop', bufferEventStreams: true },
      expected: 'longpoll',
      version: '4.0.0',
    },
  ];

  for (const { behind, proxy: behaviour, expected, version } of cases) {
    test(`behind ${behind}, the default transports end on ${expected} and messages still arrive`, async () => {
      const proxy = await startProxy(server.url, behaviour);
      proxies.push(proxy);
      const topic = (await api(server, 'POST', '/topics')).topicId;
      await api(server, 'POST', `/topics/${topic}`, 'before');
      const page = await newPage(browser);
      await openPage(page, { scriptBase: `${proxy.url}/demo`, api: proxy.api, version, options: { sseOpenTimeout: 2000 } });
      await page.evaluate((id) => window.track(id, 1), topic);

      assert.equal(await connectedTransport(page), expected);
      await page.evaluate((id) => Promise.resolve(window.client.publish(id, 'from the page')), topic);
      await api(server, 'POST', `/topics/${topic}`, 'from the server');
      await eventually(async () => (await messagesOf(page, topic)).length === 3, 'the three messages');

      assert.deepEqual((await messagesOf(page, topic)).map((m) => [m.messageId, m.data]), [[1, 'before'], [2, 'from the page'], [3, 'from the server']]);
      assert.deepEqual(await page.evaluate(() => window.transports), [expected]);
      assert.equal(await page.evaluate(() => window.client.transport), expected);
      const { stats } = proxy;
      if (expected === 'websocket') {
        assert.ok(stats.forwardedUpgrades >= 1 && stats.refusedUpgrades === 0, JSON.stringify(stats));
      } else {
        assert.ok(stats.refusedUpgrades >= 1 && stats.forwardedUpgrades === 0, JSON.stringify(stats));
      }
      if (expected === 'longpoll') {
        // The event stream was tried, and the proxy sat on what the server wrote.
        assert.ok(stats.eventStreams >= 1 && stats.heldBytes > 0, JSON.stringify(stats));
      }
      assert.deepEqual(await page.evaluate(() => window.events.filter((e) => e.type === 'error')), []);
      assert.deepEqual(page.errors, []);
      await page.context().close();
    });
  }
});
