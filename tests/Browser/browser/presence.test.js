'use strict';
// Presence in the demo chat, in a real browser: two people in a room see each other, live, and one leaves.
const { describe, test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { startServer, api } = require('../support/server');
const { launchBrowser, openDemoAs, eventually } = require('../support/browser');

/** Waits until the page lists exactly `expected` (sorted names, comma-separated) as in the room. */
function showsMembers(page, expected, what) {
  return eventually(async () => {
    const shown = (await page.locator('#room-members .member-name').allTextContents()).sort().join();
    if (shown !== expected) {
      throw new Error(`the page shows "${shown}"`);
    }
    return true;
  }, what);
}

describe('presence in the demo chat', () => {
  let server;
  let browser;

  before(async () => {
    // A one-second grace period, so that a closed page leaves within about a second (plus a sweep).
    [server, browser] = await Promise.all([
      startServer({ settings: { 'Presence:GracePeriod': '00:00:01', 'Presence:SweepInterval': '00:00:00.100' } }),
      launchBrowser(),
    ]);
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  test('two people in a room see each other by the names they typed, and one who leaves disappears', async () => {
    const alice = await openDemoAs(browser, `${server.url}/demo/`, 'Alice');
    const bob = await openDemoAs(browser, `${server.url}/demo/`, 'Bob');

    await alice.locator('#welcome-create').click();
    const title = await eventually(async () => /Room #(\d+)/.exec(await alice.locator('#room-title').textContent()), 'the new room');
    const room = Number(title[1]);
    await showsMembers(alice, 'Alice (you)', 'Alice alone in the room');

    await bob.locator('#join-id').fill(String(room));
    await bob.locator('#join-form button').click();
    await showsMembers(bob, 'Alice,Bob (you)', 'Bob to see Alice and himself');
    await showsMembers(alice, 'Alice (you),Bob', 'Alice to see Bob join');
    const list = await api(server, 'GET', `/topics/${room}/presence`);
    assert.equal(list.occupancy, 2);
    assert.deepEqual(list.members.map((m) => m.data.name).sort(), ['Alice', 'Bob']);

    await bob.context().close();
    await showsMembers(alice, 'Alice (you)', 'Alice to see Bob leave');
    assert.equal((await api(server, 'GET', `/topics/${room}/presence`)).occupancy, 1);
    assert.deepEqual(alice.errors, []);
    await alice.context().close();
  });
});
