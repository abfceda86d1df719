'use strict';
// The admin page of the standalone server in a real browser: live counts and rates, the chart, the
// topic list and its search, with nothing loaded from elsewhere.
const { describe, test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { startServer, api } = require('../support/server');
const { launchBrowser, newPage, screenshot, eventually } = require('../support/browser');

describe('the admin page', () => {
  let server;
  let browser;

  before(async () => {
    [server, browser] = await Promise.all([startServer({ settings: { 'Admin:SampleInterval': '00:00:00.500' } }), launchBrowser()]);
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  test('shows live counts, rates and the chart, and lists and finds topics', async () => {
    const topics = [];
    for (let i = 0; i < 3; i++) {
      topics.push((await api(server, 'POST', '/topics')).topicId);
    }
    // One poll waits on the last topic for the whole test; publishes to the first keep the rates up.
    const waiting = new AbortController();
    const poll = fetch(`${server.api}/subscriptions?topics=${topics[2]}&timeout=60`, { signal: waiting.signal }).catch(() => undefined);
    let publishing = true;
    const publisher = (async () => {
      while (publishing) {
        await api(server, 'POST', `/topics/${topics[0]}`, 'tick');
        await fetch(`${server.api}/subscriptions?topics=${topics[0]}:1&timeout=0`).then((r) => r.text());
        await new Promise((r) => setTimeout(r, 50));
      }
    })();

    try {
      const page = await newPage(browser);
      const elsewhere = [];
      await page.route('**/*', (route) => {
        if (new URL(route.request().url()).origin !== server.url) {
          elsewhere.push(route.request().url());
          return route.abort();
        }
        return route.continue();
      });
      await page.goto(`${server.url}/admin`);
      assert.equal(new URL(page.url()).pathname, '/admin/');

      await eventually(async () => (await page.locator('#topics').textContent()) === '3', 'three topics shown');
      await eventually(async () => (await page.locator('#waiting-polls').textContent()) === '1', 'the waiting poll shown');
      await eventually(async () => Number(await page.locator('#publish-rate').textContent()) > 0, 'a publish rate');
      await eventually(async () => Number(await page.locator('#delivery-rate').textContent()) > 0, 'a delivery rate');
      assert.match(await page.locator('#retained').textContent(), /^[0-9.]+ (B|KiB)$/);
      assert.match(await page.locator('#retained-limit').textContent(), /% of 256\.0 MiB \(Laharsub:MaxRetainedBytes\)/);
      assert.deepEqual(await page.locator('#topic-rows tr').evaluateAll((rows) => rows.map((r) => Number(r.dataset.topic))), topics);
      // The chart draws the publish rate in the accent colour.
      await eventually(() => page.locator('#chart').evaluate((canvas) => {
        const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
        let accent = 0;
        for (let i = 0; i < data.length; i += 4) {
          if (data[i] === 255 && data[i + 1] === 106 && data[i + 2] === 43) accent++;
        }
        return accent > 20;
      }), 'the publish rate line');
      await screenshot(page, 'admin');

      await page.locator('#search').fill(String(topics[1]));
      await eventually(async () => (await page.locator('#topic-rows tr').count()) === 1
        && (await page.locator('#topic-rows tr').getAttribute('data-topic')) === String(topics[1]), 'the searched topic alone');
      await page.locator('#search').fill('999999');
      await eventually(async () => (await page.locator('#topic-note').textContent()) === 'No topic 999999.', 'an unknown id said so');
      assert.equal(await page.locator('#topic-rows tr').count(), 0);
      await page.locator('#first-page').click();
      await eventually(async () => (await page.locator('#topic-rows tr').count()) === 3, 'the list back');

      const stats = await (await fetch(`${server.url}/admin/stats`)).json();
      assert.equal(stats.topics, 3);
      assert.ok(stats.messagesPublished >= 1 && stats.messagesDelivered >= 1, JSON.stringify(stats));
      assert.ok(stats.history.length >= 1 && stats.history.length <= 60);
      assert.deepEqual(elsewhere, []);
      assert.deepEqual(page.errors, []);
      await page.context().close();
    } finally {
      publishing = false;
      await publisher;
      waiting.abort();
      await poll;
    }
  });
});
