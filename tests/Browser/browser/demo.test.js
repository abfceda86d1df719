'use strict';
// The demo chat page, served by the standalone server, used by two people in a real browser.
const { describe, test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { startServer, api } = require('../support/server');
const { launchBrowser, newPage, openDemoAs, screenshot, eventually } = require('../support/browser');

const versions = { 3: '3.7.1', 4: '4.0.0' };

describe('the demo chat', () => {
  let server;
  let browser;

  before(async () => {
    [server, browser] = await Promise.all([startServer(), launchBrowser()]);
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  test('the server root leads to the demo page', async () => {
    const page = await newPage(browser);
    await page.goto(server.url + '/');
    assert.equal(new URL(page.url()).pathname, '/demo/');
    await page.locator('#welcome-create').waitFor();
    await page.context().close();
  });

  for (const [switchValue, version] of Object.entries(versions)) {
    test(`two people chat both ways in one room with jQuery ${version}, and a late joiner sees the history`, async () => {
      const alice = await openDemoAs(browser, `${server.url}/demo/?jquery=${switchValue}`, 'Alice');
      const bob = await openDemoAs(browser, `${server.url}/demo/?jquery=${switchValue}`, 'Bob');
      assert.equal(await alice.locator('#jquery-version').textContent(), version);

      await alice.locator('#welcome-create').click();
      const title = await eventually(async () => /Room #(\d+)/.exec(await alice.locator('#room-title').textContent()), 'the new room');
      const room = Number(title[1]);
      await alice.locator('#message-input').fill('Hello from Alice — ¿qué tal? 🌋');
      await alice.locator('#composer button').click();
      await alice.locator('.message .text', { hasText: 'Hello from Alice' }).waitFor();

      // Bob joins after Alice spoke: the retained history is shown, then live messages.
      await bob.locator('#join-id').fill(String(room));
      await bob.locator('#join-form button').click();
      await bob.locator('.message', { hasText: 'Hello from Alice — ¿qué tal? 🌋' }).waitFor();
      assert.equal(await bob.locator('.message .nick').first().textContent(), 'Alice');

      await bob.locator('#message-input').fill('Hi Alice, Bob here 👋');
      await bob.locator('#composer').evaluate((form) => form.requestSubmit());
      await alice.locator('.message', { hasText: 'Hi Alice, Bob here 👋' }).waitFor();
      await bob.locator('.message.mine', { hasText: 'Hi Alice, Bob here 👋' }).waitFor();
      await alice.locator('#message-input').fill('Welcome, Bob!');
      await alice.locator('#message-input').press('Enter');
      await bob.locator('.message', { hasText: 'Welcome, Bob!' }).waitFor();

      assert.equal(await alice.locator('#status').getAttribute('data-status'), 'connected');
      // The default transports' first: the page shows it.
      for (const page of [alice, bob]) {
        await page.locator('#transport[data-transport="websocket"]').waitFor();
        assert.equal(await page.locator('#transport').textContent(), 'WebSocket');
      }
      const info = await api(server, 'GET', `/topics/${room}`);
      assert.equal(info.lastMessageId, 3);
      assert.deepEqual(alice.errors, []);
      assert.deepEqual(bob.errors, []);
      await screenshot(bob, `demo-chat-jquery-${version}`);
      await alice.context().close();
      await bob.context().close();
    });
  }

  for (const [transports, shown] of [['sse', 'Server-Sent Events'], ['longpoll', 'long poll']]) {
    test(`with ?transports=${transports} the chat runs over ${shown} and says so`, async () => {
      const page = await newPage(browser);
      await page.goto(`${server.url}/demo/?transports=${transports}`);
      await page.locator('#welcome-create').click();
      await eventually(async () => /Room #(\d+)/.exec(await page.locator('#room-title').textContent()), 'the new room');
      await page.locator('#message-input').fill(`Hello over ${shown}`);
      await page.locator('#message-input').press('Enter');
      await page.locator('.message .text', { hasText: `Hello over ${shown}` }).waitFor();
      await page.locator(`#transport[data-transport="${transports}"]`).waitFor();
      assert.equal(await page.locator('#transport').textContent(), shown);
      assert.equal(await page.evaluate(() => document.querySelector('#status').getAttribute('data-status')), 'connected');
      assert.deepEqual(page.errors, []);
      await screenshot(page, `demo-chat-${transports}`);
      await page.context().close();
    });
  }

  test('joining a room that does not exist says so in the page', async () => {
    const page = await newPage(browser);
    await page.goto(`${server.url}/demo/`);
    await page.locator('#join-id').fill('987654');
    await page.locator('#join-form button').click();
    await page.locator('#join-error', { hasText: 'There is no room #987654' }).waitFor();
    await page.context().close();
  });
});
