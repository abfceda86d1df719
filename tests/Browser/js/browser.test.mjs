// The JavaScript client (src/Clients/JavaScript/laharsub.js, loaded as an ES module) in headless
// Chromium against the real server: each transport end to end, the fallback chain through a proxy that
// refuses WebSocket upgrades and buffers event streams and the way back after a server restart, a
// reconnect that resumes exactly on each transport, and a page that follows 500 topics.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { startServer, api } = require('../support/server');
const { startProxy } = require('../support/proxy');
const { launchBrowser, newPage, eventually } = require('../support/browser');
const { startForwarder } = require('../support/forwarder');
import { serveModulePage } from './module-page.mjs';

const transports = ['websocket', 'sse', 'longpoll'];

const itemsOf = (page, type) => page.evaluate((t) => window.items.filter((i) => !t || i.type === t), type);

describe('the JavaScript client in Chromium', () => {
  let server;
  let browser;
  let origin;

  before(async () => {
    [server, browser, origin] = await Promise.all([startServer({ settings: { MaxMessagesPerTopic: 5 } }), launchBrowser(), serveModulePage()]);
  });

  after(async () => {
    await browser?.close();
    await origin?.close();
    await server?.stop();
  });

  async function openPage(apiUrl, options) {
    const page = await newPage(browser);
    const sockets = [];
    page.on('websocket', (socket) => sockets.push(socket.url()));
    await page.goto(`${origin.origin}/`);
    await page.waitForFunction(() => window.harnessReady === true);
    await page.evaluate(({ apiUrl, options }) => window.start(apiUrl, options), { apiUrl, options });
    page.sockets = sockets;
    return page;
  }

  for (const transport of transports) {
    test(`${transport} alone: for await delivers JSON, text and bytes in order, publishes (keyed, to several topics), hears the deletion`, async () => {
      const a = await api(server, 'POST', '/topics');
      const b = await api(server, 'POST', '/topics');
      const page = await openPage(server.api, { transports: [transport] });
      await page.evaluate((topics) => window.follow(topics), [{ topicId: a.topicId, from: 1 }, { topicId: b.topicId, from: 1 }]);
      await page.evaluate(async ({ a, b }) => {
        await client.publish(a, { text: 'json 🌋' });
        await client.publish(b, 'text');
        await client.publish(a, new Uint8Array([0, 1, 255]));
        const key = 'browser-' + Math.random();
        const first = await client.publishMany([a, b], 'both', { idempotencyKey: key });
        const again = await client.publishMany([a, b], 'both', { idempotencyKey: key });
        if (JSON.stringify(first) !== JSON.stringify(again)) {
          throw new Error('a repeated key published again: ' + JSON.stringify([first, again]));
        }
      }, { a: a.topicId, b: b.topicId });
      await api(server, 'POST', `/topics/${b.topicId}`, 'from outside');
      await eventually(async () => (await itemsOf(page, 'message')).length === 6, 'six messages');
      const messages = await itemsOf(page, 'message');
      assert.deepEqual(messages.filter((m) => m.topicId === a.topicId).map((m) => m.data), [{ text: 'json 🌋' }, [0, 1, 255], 'both']);
      assert.deepEqual(messages.filter((m) => m.topicId === b.topicId).map((m) => [m.messageId, m.data]), [[1, 'text'], [2, 'both'], [3, 'from outside']]);
      assert.equal(await page.evaluate(() => window.client.transport), transport);
      assert.deepEqual(await page.evaluate(() => window.transports), [{ transport, skipped: [] }]);
      assert.equal(page.sockets.length, transport === 'websocket' ? 1 : 0, 'one WebSocket, or none');

      // One at a time: a long poll that names a topic deleted before it arrived is answered 404, not topicDeleted.
      await api(server, 'DELETE', `/topics/${a.topicId}`);
      await eventually(async () => (await itemsOf(page, 'topicDeleted')).length === 1, 'the first deletion');
      await api(server, 'DELETE', `/topics/${b.topicId}`);
      // The last topic's deletion ends the iteration: told as topicDeleted, or, when the client's next request
      // arrived after the deletion (a long poll re-sent between the two), as its 404 thrown: heard either way.
      const end = await eventually(async () => (await itemsOf(page)).find((i) => i.type === 'ended' || i.type === 'thrown'), 'the iteration to end with the last topic');
      const deleted = (await itemsOf(page, 'topicDeleted')).map((n) => n.topicId);
      if (end.type === 'thrown') {
        assert.equal(end.status, 404, end.message);
        assert.deepEqual(deleted, [a.topicId]);
      } else {
        assert.deepEqual(deleted.sort(), [a.topicId, b.topicId].sort());
      }
      assert.deepEqual(page.errors, []);
      await page.close();
    });
  }

  for (const transport of transports) {
    test(`${transport}: a reconnect after the network was cut resumes exactly, nothing lost, nothing repeated`, async () => {
      const forwarder = await startForwarder(server.port);
      const topic = await api(server, 'POST', '/topics');
      const page = await openPage(forwarder.api, { transports: [transport] });
      try {
        await page.evaluate((id) => window.follow({ topicId: id, from: 1 }), topic.topicId);
        for (let i = 1; i <= 2; i++) {
          await api(server, 'POST', `/topics/${topic.topicId}`, `m${i}`);
        }
        await eventually(async () => (await itemsOf(page, 'message')).length === 2, 'the messages before the cut');
        await eventually(() => page.evaluate(() => window.statuses.at(-1) === 'connected'), 'connected');
        forwarder.cut();
        for (let i = 3; i <= 4; i++) {
          await api(server, 'POST', `/topics/${topic.topicId}`, `m${i}`);
        }
        await eventually(() => page.evaluate(() => window.statuses.includes('retrying')), 'the page to notice the cut');
        forwarder.restore();
        await eventually(async () => (await itemsOf(page, 'message')).length >= 4, 'the messages published while cut');
        await api(server, 'POST', `/topics/${topic.topicId}`, 'm5');
        await eventually(async () => (await itemsOf(page, 'message')).length >= 5, 'the message after the reconnect');
        assert.deepEqual((await itemsOf(page)).map((i) => i.type === 'message' ? i.data : i.type), ['m1', 'm2', 'm3', 'm4', 'm5']);
        assert.equal(await page.evaluate(() => window.client.transport), transport);
      } finally {
        await page.close();
        await forwarder.close();
      }
    });
  }

  test('falls back from WebSocket to SSE to long poll through a proxy that refuses upgrades and buffers streams, and goes back after a server restart, told the topic started over', async () => {
    const own = await startServer();
    const proxy = await startProxy(own.url, { refuseUpgrades: true, bufferEventStreams: true });
    // In front of the proxy, so that the page cannot reach the restarted server before the test has
    // created the topic again (it would rightly be told 404).
    const network = await startForwarder(Number(new URL(proxy.url).port));
    let restarted;
    try {
      const topic = await api(own, 'POST', '/topics');
      const page = await openPage(network.api, { sseOpenTimeout: 1000 });
      await page.evaluate((id) => window.follow({ topicId: id, from: 1 }), topic.topicId);
      await eventually(() => page.evaluate(() => window.client.transport === 'longpoll'), 'the long poll');
      assert.deepEqual(await page.evaluate(() => window.transports), [{ transport: 'longpoll', skipped: ['websocket', 'sse'] }]);
      await page.evaluate((id) => window.client.publish(id, 'over the fallback'), topic.topicId);
      await eventually(async () => (await itemsOf(page, 'message')).length === 1, 'the message over the long poll');

      // The server restarts without its data (in memory) and the proxy is fixed meanwhile: the page
      // tries the preferred transport again, and the topic id it follows is another incarnation now.
      network.cut();
      await own.stop();
      await eventually(() => page.evaluate(() => window.statuses.includes('retrying')), 'the page to notice the server is gone');
      restarted = await startServer({ port: own.port });
      const again = await api(restarted, 'POST', '/topics');
      assert.equal(again.topicId, topic.topicId);
      assert.notEqual(again.epoch, topic.epoch);
      await api(restarted, 'POST', `/topics/${topic.topicId}`, 'after the restart');
      proxy.options.refuseUpgrades = false;
      proxy.options.bufferEventStreams = false;
      network.restore();
      await eventually(async () => (await itemsOf(page, 'message')).length === 2, 'the message after the restart');
      const items = await itemsOf(page);
      assert.deepEqual(items.map((i) => i.type === 'message' ? i.data : i.type), ['over the fallback', 'reset', 'after the restart']);
      const reset = items[1];
      assert.deepEqual({ epochChanged: reset.epochChanged, requestedEpoch: reset.requestedEpoch, epoch: reset.epoch, firstMessageId: reset.firstMessageId },
        { epochChanged: true, requestedEpoch: topic.epoch, epoch: again.epoch, firstMessageId: 1 });
      await eventually(() => page.evaluate(() => window.client.transport === 'websocket'), 'the WebSocket again');
      assert.equal(await page.evaluate(() => window.subscription.epoch()), again.epoch);
      await page.close();
    } finally {
      await network.close();
      await proxy.close();
      await restarted?.stop();
      await own.stop();
    }
  });

  for (const transport of ['websocket', 'longpoll']) {
    test(`a page follows 500 topics over one ${transport} connection and receives a message of each`, async () => {
      const topics = [];
      for (let i = 0; i < 500; i += 50) {
        topics.push(...await Promise.all(Array.from({ length: 50 }, () => api(server, 'POST', '/topics'))));
      }
      const page = await openPage(server.api, { transports: [transport] });
      await page.evaluate((list) => window.follow(list.map((t) => ({ topicId: t.topicId, from: 1, epoch: t.epoch }))), topics);
      const ids = topics.map((t) => t.topicId);
      for (let i = 0; i < ids.length; i += 100) {
        await api(server, 'POST', `/topics/publish?topics=${ids.slice(i, i + 100).join(',')}`, 'to many');
      }
      await eventually(async () => (await itemsOf(page, 'message')).length === 500, '500 messages', 60000);
      const messages = await itemsOf(page, 'message');
      assert.deepEqual(messages.map((m) => m.topicId).sort((x, y) => x - y), ids.slice().sort((x, y) => x - y));
      assert.equal(page.sockets.length, transport === 'websocket' ? 1 : 0);
      assert.equal(await page.evaluate(() => window.subscription.topics.length), 500);
      assert.deepEqual(await itemsOf(page, 'error'), []);
      await page.close();
    });
  }
});
