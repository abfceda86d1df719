'use strict';
// A page given several Laharsub instances carries on at another when the one it uses dies, from its
// cursors, and is told when that instance's topic is another incarnation than the one it was reading.
const { describe, test, after } = require('node:test');
const assert = require('node:assert/strict');
const { startServer, api } = require('../support/server');
const { launchBrowser, newPage, openHarness, serveHarness, eventually } = require('../support/browser');

const events = (page, type) => page.evaluate((t) => window.events.filter((e) => e.type === t), type);

describe('failover', () => {
  let browser;
  const servers = [];
  let pages;

  after(async () => {
    await browser?.close();
    for (const server of servers) {
      await server.stop();
    }
    await pages?.close();
  });

  test('a page whose instance is killed moves to the next one and reports that its topic there is another incarnation', async () => {
    browser = await launchBrowser();
    // Two instances that share nothing: topic 1 exists on both, as two different topics.
    const [a, b] = await Promise.all([startServer(), startServer()]);
    servers.push(a, b);
    const onA = await api(a, 'POST', '/topics');
    const onB = await api(b, 'POST', '/topics');
    assert.equal(onA.topicId, onB.topicId);
    // The page comes from a third origin, a real loopback address (see serveHarness for why).
    const harness = { scriptBase: `${b.url}/demo`, api: [a.api, b.api], version: '4.0.0', options: {} };
    pages = await serveHarness(harness);
    const page = await newPage(browser);
    await openHarness(page, { origin: pages.origin, served: true, ...harness });
    await page.evaluate((id) => window.track(id, 1), onA.topicId);
    await api(a, 'POST', `/topics/${onA.topicId}`, 'a 1');
    await api(a, 'POST', `/topics/${onA.topicId}`, 'a 2');
    await eventually(async () => (await events(page, 'message')).length === 2, 'the messages on the first instance');
    await eventually(async () => (await api(a, 'GET', `/topics/${onA.topicId}`)).waitingPolls === 1, 'the page waiting on the first instance');

    for (let i = 1; i <= 3; i++) {
      await api(b, 'POST', `/topics/${onB.topicId}`, `b ${i}`);
    }
    await a.kill();

    // Without epochs the page's cursor 3 would fit the second instance's topic, and b 1, b 2 would be
    // skipped without a word.
    const reset = await eventually(async () => (await events(page, 'reset'))[0], 'the reset notice from the second instance');
    await eventually(async () => (await events(page, 'message')).length === 5, 'the messages on the second instance');
    assert.deepEqual(
      { epochChanged: reset.epochChanged, epoch: reset.epoch, requestedEpoch: reset.requestedEpoch, requestedFrom: reset.requestedFrom, firstMessageId: reset.firstMessageId },
      { epochChanged: true, epoch: onB.epoch, requestedEpoch: onA.epoch, requestedFrom: 3, firstMessageId: 1 });
    assert.deepEqual((await events(page, 'message')).map((m) => m.data), ['a 1', 'a 2', 'b 1', 'b 2', 'b 3']);
    assert.equal(await page.evaluate(() => window.client.baseUrl), b.api);
    assert.equal(await page.evaluate((id) => window.handles[id].epoch(), onB.topicId), onB.epoch);
    assert.equal(await page.evaluate((id) => window.handles[id].cursor(), onB.topicId), 4);
    await page.context().close();
  });
});
