'use strict';
// Pages that lose the server or fall behind the retention time recover on their own and say what
// they missed. These pages long-poll (the gate holds polls); streams across killed instances:
// streams-redis.test.js, streams-scaleout.test.js and failover.test.js.
const { describe, test, after } = require('node:test');
const assert = require('node:assert/strict');
const { startServer, api } = require('../support/server');
const { launchBrowser, newPage, openHarness, eventually } = require('../support/browser');

/**
 * Routes the page's polls through a gate: open, they go straight to the server; closed, they wait
 * (still unsent) until it opens. Lets a test decide what the server holds when the next poll lands.
 */
async function gatePolls(page) {
  let closed = false;
  let held = [];
  await page.route('**/ps/subscriptions**', (route) => {
    if (closed) {
      held.push(route);
    } else {
      route.continue().catch(() => {});
    }
  });
  return {
    close() { closed = true; },
    held: () => held.length,
    open() {
      closed = false;
      held.forEach((route) => route.continue().catch(() => {}));
      held = [];
    },
  };
}

const events = (page, type) => page.evaluate((t) => window.events.filter((e) => e.type === t), type);

describe('recovery', () => {
  let browser;
  const servers = [];

  after(async () => {
    await browser?.close();
    for (const server of servers) {
      await server.stop();
    }
  });

  test('pages waiting while the server restarts recover by themselves and report that the topic started over', async () => {
    browser = browser || await launchBrowser();
    const first = await startServer();
    servers.push(first);
    const topic = (await api(first, 'POST', '/topics')).topicId;
    const pages = [await newPage(browser), await newPage(browser)];
    const gates = [];
    for (const page of pages) {
      gates.push(await gatePolls(page));
      await openHarness(page, { origin: first.url, scriptBase: '/demo', api: '/ps', version: '4.0.0', options: { transports: ['longpoll'] } });
      await page.evaluate((id) => window.track(id, 1), topic);
    }
    await api(first, 'POST', `/topics/${topic}`, 'before 1');
    await api(first, 'POST', `/topics/${topic}`, 'before 2');
    for (const page of pages) {
      await eventually(async () => (await events(page, 'message')).length === 2, 'the messages before the restart');
    }
    await eventually(async () => (await api(first, 'GET', `/topics/${topic}`)).waitingPolls === 2, 'both pages waiting');

    // A graceful stop answers the waiting polls (204, Connection: close); the pages then find nobody.
    await first.stop();
    for (const page of pages) {
      await eventually(() => page.evaluate(() => window.statuses.includes('retrying')), 'the page to notice the server is gone');
    }
    // The restarted server has lost everything (in-memory): re-create the topic before the pages'
    // next poll lands, or they would rightly be told it does not exist.
    gates.forEach((gate) => gate.close());
    const second = await startServer({ port: first.port });
    servers.push(second);
    assert.equal((await api(second, 'POST', '/topics')).topicId, topic);
    await api(second, 'POST', `/topics/${topic}`, 'after the restart');
    gates.forEach((gate) => gate.open());

    for (const page of pages) {
      const reset = await eventually(async () => (await events(page, 'reset'))[0], 'the reset notice');
      assert.deepEqual({ topicId: reset.topicId, requestedFrom: reset.requestedFrom, firstMessageId: reset.firstMessageId },
        { topicId: topic, requestedFrom: 3, firstMessageId: 1 });
      await eventually(async () => (await events(page, 'message')).length === 3, 'the message after the restart');
      const messages = await events(page, 'message');
      assert.deepEqual(messages.map((m) => [m.messageId, m.data]), [[1, 'before 1'], [2, 'before 2'], [1, 'after the restart']]);
      assert.equal(await page.locator('#log li[data-type="reset"]').count(), 1, 'the reset is rendered in the page');
      assert.equal(await page.evaluate((id) => window.handles[id].cursor(), topic), 2);
      assert.equal(await page.evaluate(() => window.statuses.at(-1)), 'connected');
    }
    await second.stop();
  });

  test('a page whose cursor fits inside the topic re-created by a restart is told it is a new topic and reads all of it', async () => {
    // Issue 11's reproduction: read up to 5, restart without the data, the topic id created again with
    // 10 messages. The cursor 6 lies inside the new topic; only the epoch shows that 1..5 are new too.
    browser = browser || await launchBrowser();
    const first = await startServer();
    servers.push(first);
    const topic = await api(first, 'POST', '/topics');
    const page = await newPage(browser);
    const gate = await gatePolls(page);
    await openHarness(page, { origin: first.url, scriptBase: '/demo', api: '/ps', version: '3.7.1', options: { transports: ['longpoll'] } });
    await page.evaluate((id) => window.track(id, 1), topic.topicId);
    for (let i = 1; i <= 5; i++) {
      await api(first, 'POST', `/topics/${topic.topicId}`, `old ${i}`);
    }
    await eventually(async () => (await events(page, 'message')).length === 5, 'the five messages before the restart');
    assert.equal(await page.evaluate((id) => window.handles[id].epoch(), topic.topicId), topic.epoch);

    await first.stop();
    await eventually(() => page.evaluate(() => window.statuses.includes('retrying')), 'the page to notice the server is gone');
    gate.close();
    const second = await startServer({ port: first.port });
    servers.push(second);
    const recreated = await api(second, 'POST', '/topics');
    assert.equal(recreated.topicId, topic.topicId);
    for (let i = 1; i <= 10; i++) {
      await api(second, 'POST', `/topics/${topic.topicId}`, `new ${i}`);
    }
    gate.open();

    const reset = await eventually(async () => (await events(page, 'reset'))[0], 'the reset notice');
    await eventually(async () => (await events(page, 'message')).length === 15, 'the ten messages of the new topic');
    assert.deepEqual(
      { epochChanged: reset.epochChanged, epoch: reset.epoch, requestedEpoch: reset.requestedEpoch, requestedFrom: reset.requestedFrom, firstMessageId: reset.firstMessageId, lastMessageId: reset.lastMessageId },
      { epochChanged: true, epoch: recreated.epoch, requestedEpoch: topic.epoch, requestedFrom: 6, firstMessageId: 1, lastMessageId: 10 });
    assert.deepEqual((await events(page, 'message')).slice(5).map((m) => m.data), Array.from({ length: 10 }, (_, i) => `new ${i + 1}`));
    assert.equal(await page.evaluate((id) => window.handles[id].epoch(), topic.topicId), recreated.epoch);
    await second.stop();
  });

  test('a page cut off for longer than the retention time reports the gap, then gets what is still retained', async () => {
    browser = browser || await launchBrowser();
    // 3 s, not 1 s: on a loaded machine the page sometimes read message 1 only after a 1 s TTL had expired it.
    const server = await startServer({ settings: { MessageTimeToLive: '00:00:03', RetentionSweepInterval: '00:00:00.100' } });
    servers.push(server);
    const topic = (await api(server, 'POST', '/topics')).topicId;
    const page = await newPage(browser);
    const gate = await gatePolls(page);
    await openHarness(page, { origin: server.url, scriptBase: '/demo', api: '/ps', version: '3.7.1', options: { transports: ['longpoll'] } });
    await page.evaluate((id) => window.track(id, 1), topic);
    // Connected first: the client's first poll asks for an answer at once (timeout=0), and the server
    // may count it waiting for the moment it reads; message 1 must find the long poll that follows.
    await eventually(async () => (await page.evaluate(() => window.statuses.includes('connected')))
      && (await api(server, 'GET', `/topics/${topic}`)).waitingPolls === 1, 'the page connected and waiting');

    // The waiting poll takes message 1; the page's next poll is held back while 2 expires.
    gate.close();
    await api(server, 'POST', `/topics/${topic}`, 'one');
    await eventually(async () => (await events(page, 'message')).length === 1 && gate.held() === 1, 'message 1 and the next poll held');
    await api(server, 'POST', `/topics/${topic}`, 'two');
    await eventually(async () => (await api(server, 'GET', `/topics/${topic}`)).firstRetainedMessageId === 3, 'message 2 to expire');
    await api(server, 'POST', `/topics/${topic}`, 'three');
    gate.open();

    await eventually(async () => (await events(page, 'message')).length === 2, 'message 3');
    const gaps = await events(page, 'gap');
    assert.deepEqual(gaps.map((g) => [g.fromMessageId, g.toMessageId]), [[2, 2]]);
    assert.deepEqual((await events(page, 'message')).map((m) => m.data), ['one', 'three']);
    assert.equal(await page.locator('#log li[data-type="gap"]').count(), 1, 'the gap is rendered in the page');
    await server.stop();
  });
});
