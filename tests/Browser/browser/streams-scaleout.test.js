'use strict';
// Three instances on one Redis; the one a jQuery page streams from is killed (SIGKILL) while messages
// flow. On each transport the page carries on at another instance from its cursors, and every
// acknowledged message arrives once, in order (scaleout.test.js does the same with the default, a WebSocket).
const { describe, test, after } = require('node:test');
const assert = require('node:assert/strict');
const { startServer, api } = require('../support/server');
const { startRedis } = require('../support/redis');
const { launchBrowser, newPage, openHarness, serveHarness, eventually } = require('../support/browser');

// The WebSocket, the default, is scaleout.test.js's.
const transports = ['sse', 'longpoll'];

const messagesOf = (page, topicId) => page.evaluate((id) => window.events.filter((e) => e.type === 'message' && e.topicId === id), topicId);

/** Waits until the page's client has started a connection and is connected; returns its transport. */
async function connectedTransport(page) {
  await page.waitForFunction(() => window.client.transport !== null && window.statuses.at(-1) === 'connected');
  return page.evaluate(() => window.client.transport);
}

describe('a page streaming from an instance killed under load', () => {
  let browser;
  let redis;
  const servers = [];
  const harnesses = [];

  after(async () => {
    await browser?.close();
    for (const server of servers) {
      await server.stop();
    }
    for (const harness of harnesses) {
      await harness.close();
    }
    await redis?.stop();
  });

  const settings = () => ({ 'Redis:Configuration': redis.configuration });

  for (const transport of transports) {
    test(`${transport}: a jQuery page whose instance is killed under load gets every acknowledged message once, in order, from another`, async () => {
      redis = redis || await startRedis();
      browser = browser || await launchBrowser();
      const [a, b, c] = await Promise.all([0, 1, 2].map(() => startServer({ settings: { ...settings(), 'Demo:Enabled': 'true' } })));
      servers.push(a, b, c);
      const topic = await api(c, 'POST', '/topics');
      // The page comes from a loopback origin of its own (see serveHarness for why).
      const harness = { scriptBase: `${c.url}/demo`, api: [a.api, b.api, c.api], version: '4.0.0', options: { transports: [transport] } };
      const pages = await serveHarness(harness);
      harnesses.push(pages);
      const page = await newPage(browser);
      await openHarness(page, { origin: pages.origin, served: true, ...harness });
      await page.evaluate((id) => window.track(id, 1), topic.topicId);
      assert.equal(await connectedTransport(page), transport);
      await eventually(async () => (await api(a, 'GET', `/topics/${topic.topicId}`)).waitingPolls === 1, 'the page connected to the first instance');

      // The publisher goes through an instance that stays up: every publish is acknowledged.
      const acknowledged = [];
      for (let i = 1; i <= 150; i++) {
        acknowledged.push((await api(c, 'POST', `/topics/${topic.topicId}`, `m ${i}`)).messageId);
        if (i === 50) {
          await eventually(async () => (await messagesOf(page, topic.topicId)).length >= 20, 'messages arriving at the page before the kill');
          await a.kill();
        }
      }

      await eventually(async () => (await messagesOf(page, topic.topicId)).length >= 150, 'every acknowledged message at the page', 60000);
      // A last one: a repeat of anything earlier would arrive before it.
      acknowledged.push((await api(c, 'POST', `/topics/${topic.topicId}`, 'last')).messageId);
      await eventually(async () => (await messagesOf(page, topic.topicId)).some((m) => m.data === 'last'), 'the last message');
      const received = (await messagesOf(page, topic.topicId)).map((m) => m.messageId);
      assert.deepEqual(received, acknowledged);
      assert.notEqual(await page.evaluate(() => window.client.baseUrl), a.api);
      assert.equal(await page.evaluate(() => window.client.transport), transport);
      assert.deepEqual(page.errors, []);
      await page.context().close();
    });
  }
});
