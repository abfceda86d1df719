'use strict';
// Three instances on one Redis; the one a page streams from is killed (SIGKILL) while messages flow. Given
// the instances' roots, the jQuery client carries on at another from its cursor, and every
// acknowledged message arrives exactly once, in order.
const { describe, test, after } = require('node:test');
const assert = require('node:assert/strict');
const { startServer, api } = require('../support/server');
const { startRedis } = require('../support/redis');
const { launchBrowser, newPage, openHarness, serveHarness, eventually } = require('../support/browser');

describe('scale-out', () => {
  let browser;
  let redis;
  const servers = [];
  let pages;

  after(async () => {
    await browser?.close();
    for (const server of servers) {
      await server.stop();
    }
    await pages?.close();
    await redis?.stop();
  });

  test('a page whose instance is killed under load gets every acknowledged message once, in order, from another', async () => {
    redis = await startRedis();
    browser = await launchBrowser();
    const settings = { 'Redis:Configuration': redis.configuration, 'Demo:Enabled': 'true' };
    servers.push(...await Promise.all([0, 1, 2].map(() => startServer({ settings }))));
    const [a, b, c] = servers;
    const topic = await api(c, 'POST', '/topics');
    // The page comes from a loopback origin of its own (see serveHarness for why).
    const harness = { scriptBase: `${c.url}/demo`, api: [a.api, b.api, c.api], version: '4.0.0', options: {} };
    pages = await serveHarness(harness);
    const page = await newPage(browser);
    await openHarness(page, { origin: pages.origin, served: true, ...harness });
    await page.evaluate((id) => window.track(id, 1), topic.topicId);
    // The default transports: a WebSocket (the others: streams-scaleout.test.js).
    await page.waitForFunction(() => window.client.transport === 'websocket' && window.statuses.at(-1) === 'connected');
    await eventually(async () => (await api(a, 'GET', `/topics/${topic.topicId}`)).waitingPolls === 1, 'the page waiting on the first instance');

    // The publisher goes through an instance that stays up: every publish is acknowledged.
    const acknowledged = [];
    for (let i = 1; i <= 150; i++) {
      const published = await api(c, 'POST', `/topics/${topic.topicId}`, `m ${i}`);
      acknowledged.push(published.messageId);
      if (i === 50) {
        await eventually(async () => (await page.evaluate(() => window.events.filter((e) => e.type === 'message').length)) >= 20,
          'messages arriving at the page before the kill');
        await a.kill();
      }
    }

    await eventually(async () => (await page.evaluate(() => window.events.filter((e) => e.type === 'message').length)) >= 150,
      'every acknowledged message at the page', 60000);
    const received = await page.evaluate(() => window.events.filter((e) => e.type === 'message').map((e) => e.messageId));
    assert.deepEqual(received, acknowledged);
    assert.notEqual(await page.evaluate(() => window.client.baseUrl), a.api);
    await page.context().close();
  });
});
