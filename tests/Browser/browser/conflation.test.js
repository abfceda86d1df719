'use strict';
// The jQuery client's conflation (options conflate and latest) in headless Chromium against the real
// server, on each transport: the conflated notice reaches onConflated, distinct from onGap, and every
// message id is either delivered or inside a conflated range, never both and never neither.
const { describe, test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { startServer, api } = require('../support/server');
const { launchBrowser, newPage, openHarness, serveHarness, eventually } = require('../support/browser');

const transports = ['websocket', 'sse', 'longpoll'];
const eventsOf = (page, topicId) => page.evaluate((id) => window.events.filter((e) => e.topicId === id), topicId);

describe('a conflated subscription', () => {
  let server;
  let browser;
  const harnesses = [];

  before(async () => {
    [server, browser] = await Promise.all([startServer(), launchBrowser()]);
  });

  after(async () => {
    for (const harness of harnesses) {
      await harness.close();
    }
    await browser?.close();
    await server?.stop();
  });

  for (const transport of transports) {
    test(`${transport}: latest skips to the latest message with a conflated notice, and conflate keeps every id accounted for`, async () => {
      const topicId = (await api(server, 'POST', '/topics')).topicId;
      for (let i = 1; i <= 5; i++) {
        await api(server, 'POST', `/topics/${topicId}`, `m${i}`);
      }

      const page = await newPage(browser);
      const served = await serveHarness({ scriptBase: `${server.url}/demo`, api: server.api, version: '4.0.0',
        options: { transports: [transport], conflate: 100, latest: true } });
      harnesses.push(served);
      await openHarness(page, { origin: served.origin, served: true, scriptBase: `${server.url}/demo`, api: server.api, version: '4.0.0' });
      await page.evaluate((id) => window.track(id, 1), topicId);
      await eventually(async () => (await eventsOf(page, topicId)).some((e) => e.type === 'message'), 'the first delivery');

      const first = await eventsOf(page, topicId);
      assert.deepEqual(first.map((e) => e.type === 'conflated' ? ['conflated', e.fromMessageId, e.toMessageId] : [e.messageId, e.data]),
        [['conflated', 1, 4], [5, 'm5']]);
      assert.equal(await page.evaluate(() => window.client.transport), transport);

      for (let i = 6; i <= 12; i++) {
        await api(server, 'POST', `/topics/${topicId}`, `m${i}`);
      }
      await eventually(async () => (await eventsOf(page, topicId)).some((e) => e.type === 'message' && e.messageId === 12), 'the latest message');

      const events = await eventsOf(page, topicId);
      const accounted = [];
      for (const e of events) {
        if (e.type === 'conflated') {
          for (let id = e.fromMessageId; id <= e.toMessageId; id++) {
            accounted.push(id);
          }
        } else {
          assert.equal(e.type, 'message', JSON.stringify(e));
          accounted.push(e.messageId);
        }
      }
      // Each id once, in order: skipped by choice or delivered; no gap, since nothing was lost.
      assert.deepEqual(accounted, Array.from({ length: 12 }, (_, i) => i + 1));
      assert.equal(await page.evaluate((id) => window.handles[id].cursor(), topicId), 13);
      assert.deepEqual(page.errors, []);
      await page.close();
    });
  }
});
