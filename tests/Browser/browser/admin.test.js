'use strict';
// The admin page of the standalone server in a real browser: live counts and rates, the chart, the
// topic list with its labels and filter, a phone-sized screen, and Jwt mode with an admin token, with
// nothing loaded from elsewhere.
const { describe, test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { startServer, api } = require('../support/server');
const { tokenIssuer } = require('../support/tokens');
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
    const labels = ['orders-eu', 'orders-us', undefined];
    const topics = [];
    for (const label of labels) {
      topics.push((await api(server, 'POST', '/topics', label ? { label } : undefined)).topicId);
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
      assert.deepEqual(await page.locator('#topic-rows td.topic-label').allTextContents(), ['orders-eu', 'orders-us', '']);
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

      // Anything but digits filters by label: a bare word anywhere in it, * for any run of characters.
      const shown = () => page.locator('#topic-rows tr').evaluateAll((rows) => rows.map((r) => Number(r.dataset.topic)));
      await page.locator('#search').fill('orders');
      await eventually(async () => JSON.stringify(await shown()) === JSON.stringify(topics.slice(0, 2)), 'both orders topics');
      await page.locator('#search').fill('orders-u*');
      await eventually(async () => JSON.stringify(await shown()) === JSON.stringify([topics[1]]), 'the one matching orders-u*');
      await page.locator('#search').fill('nothing-like-it');
      await eventually(async () => (await page.locator('#topic-note').textContent()) === 'No topic has a label matching *nothing-like-it*.', 'no match said so');
      await page.locator('#search').fill('');
      await eventually(async () => (await page.locator('#topic-rows tr').count()) === 3, 'the list back after the filter');

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

  test('names its two byte counts apart: retained as counted toward the limit on the card, body bytes per topic', async () => {
    const { topicId } = await api(server, 'POST', '/topics', { label: 'ten-messages' });
    for (let i = 0; i < 10; i++) {
      await api(server, 'POST', `/topics/${topicId}`, '0123456789');
    }
    const page = await newPage(browser);
    await page.goto(`${server.url}/admin/`);
    await page.locator('#search').fill('ten-messages');
    await eventually(async () => (await page.locator('#topic-rows tr').count()) === 1, 'the topic alone');

    const headers = await page.locator('#topic-table th').allTextContents();
    assert.deepEqual(headers, ['Id', 'Label', 'Epoch', 'Created', 'Last id', 'Messages', 'Body bytes', 'Waiting polls']);
    assert.equal(await page.locator('.card.wide .label').textContent(), 'Retained (counted toward limit)');
    assert.ok(!headers.some((h) => /retained/i.test(h)), `no column is called retained: ${headers}`);
    // Ten 10-byte messages: 100 body bytes; what counts toward the limit adds each message's overhead.
    assert.equal(await page.locator('#topic-rows td.body-bytes').textContent(), '100 B');
    assert.equal(await page.locator('#topic-rows td.messages').textContent(), '10');
    const stats = await (await fetch(`${server.url}/admin/stats`, { signal: AbortSignal.timeout(10000) })).json();
    assert.ok(stats.retainedBytes > 100, `counted toward the limit: ${stats.retainedBytes}`);
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });

  test('fits a 390 px wide phone screen: the topic table scrolls inside its panel, the page does not', async () => {
    for (let i = 0; i < 3; i++) {
      await api(server, 'POST', '/topics', { label: `a-rather-long-label-for-a-narrow-screen-${i}` });
    }
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
    const page = await context.newPage();
    page.setDefaultTimeout(15000);
    const errors = [];
    page.on('pageerror', (error) => errors.push(String(error)));
    await page.goto(`${server.url}/admin/`);
    await eventually(async () => (await page.locator('#topic-rows tr').count()) >= 3, 'topics listed');
    await eventually(async () => (await page.locator('#status').textContent()) === 'live', 'the stats shown');

    const widths = await page.evaluate(() => {
      const scroller = document.querySelector('.table-scroll');
      return {
        page: document.documentElement.scrollWidth,
        viewport: window.innerWidth,
        table: scroller.scrollWidth,
        panel: scroller.clientWidth,
        right: Math.max(...[...document.querySelectorAll('header, main, footer, .card, .panel, #search')].map((e) => e.getBoundingClientRect().right)),
      };
    });
    await screenshot(page, 'admin-390');
    assert.equal(widths.viewport, 390);
    assert.ok(widths.page <= widths.viewport, `the page is ${widths.page} px wide in a ${widths.viewport} px screen`);
    assert.ok(widths.right <= widths.viewport, `an element ends at ${widths.right} px, past the ${widths.viewport} px screen`);
    assert.ok(widths.table > widths.panel, `the table (${widths.table} px) scrolls inside its panel (${widths.panel} px)`);
    assert.deepEqual(errors, []);
    await context.close();
  });
});

describe('the admin page in Jwt mode', () => {
  const key = 'admin-page-test-signing-key-0123456789abcdef';
  const issuer = 'https://issuer.test';
  const audience = 'laharsub-admin-tests';
  let server;
  let browser;

  const token = tokenIssuer({ key, issuer, audience });

  const operator = token({ admin: true, list: true }, { subject: 'operator' });

  before(async () => {
    [server, browser] = await Promise.all([startServer({
      settings: { 'Auth:Mode': 'Jwt', 'Auth:Jwt:SigningKey': key, 'Auth:Jwt:Issuer': issuer, 'Auth:Jwt:Audience': audience, 'Admin:SampleInterval': '00:00:00.500' },
    }), launchBrowser()]);
    const created = await fetch(`${server.api}/topics`, {
      method: 'POST', headers: { Authorization: `Bearer ${token({ create: true })}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ label: 'jwt-topic' }), signal: AbortSignal.timeout(10000),
    });
    assert.equal(created.status, 201);
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  test('its data answers 401 without a token, 403 without admin, and 200 with it', async () => {
    const stats = (bearer) => fetch(`${server.url}/admin/stats`, { headers: bearer ? { Authorization: `Bearer ${bearer}` } : {}, signal: AbortSignal.timeout(10000) });
    const anonymous = await stats();
    const listOnly = await stats(token({ list: true }));
    const admin = await stats(operator);
    assert.equal(anonymous.status, 401);
    assert.match((await anonymous.json()).detail, /grants admin/);
    assert.equal(listOnly.status, 403);
    assert.equal((await listOnly.json()).operation, 'admin');
    assert.equal(admin.status, 200);
    assert.equal((await admin.json()).topics, 1);
  });

  test('opened with ?token= it shows the counts and topics, and takes the token out of the address', async () => {
    const page = await newPage(browser);
    await page.goto(`${server.url}/admin?token=${operator}`);
    await eventually(async () => (await page.locator('#status').textContent()) === 'live', 'the stats shown');
    await eventually(async () => (await page.locator('#topic-rows td.topic-label').allTextContents()).join() === 'jwt-topic', 'the topic listed');
    assert.equal(await page.locator('#topics').textContent(), '1');
    assert.equal(new URL(page.url()).search, '', 'the token is no longer in the address');
    assert.equal(await page.locator('#login').isHidden(), true);
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });

  test('opened without a token it asks for one with the server\'s reason, and goes live once given one', async () => {
    const page = await newPage(browser);
    await page.goto(`${server.url}/admin/`);
    await eventually(() => page.locator('#login').isVisible(), 'the token form');
    // Both refusals are shown: the stats need admin, the topic list needs list.
    await eventually(async () => /grants admin/.test(await page.locator('#login-note').textContent())
      && /grants list/.test(await page.locator('#login-note').textContent()), 'both reasons shown');
    await page.locator('#token').fill(token({ list: true }));
    await page.locator('#login-form button').click();
    await eventually(async () => (await page.locator('#login-note').textContent()).startsWith("This token may not read the admin page's data"),
      'a token without admin refused by name, the list no longer');
    await eventually(async () => (await page.locator('#topic-rows tr').count()) === 1, 'the topic listed with list alone');
    await page.locator('#token').fill(operator);
    await page.locator('#login-form button').click();
    await eventually(async () => (await page.locator('#status').textContent()) === 'live', 'the stats shown');
    await eventually(() => page.locator('#login').isHidden(), 'the token form gone');
    assert.equal(await page.locator('#topic-rows tr').count(), 1);
    await page.context().close();
  });
});
