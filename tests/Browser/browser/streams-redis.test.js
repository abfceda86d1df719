'use strict';
// A native EventSource (no library) resumes by itself after its server is killed and restarted on
// Redis: the messages from before the kill, during the downtime (at another instance) and after the
// restart arrive once each, in order. The jQuery client on each transport: streams-scaleout.test.js.
const { describe, test, after } = require('node:test');
const assert = require('node:assert/strict');
const { startServer, api } = require('../support/server');
const { startRedis } = require('../support/redis');
const { launchBrowser, newPage } = require('../support/browser');

/** A page with a native EventSource and no library, recording what it receives. */
function nativeEventSourceHtml(topicId) {
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>native EventSource</title></head>
<body><ul id="log"></ul>
<script>
  window.received = [];
  window.ids = [];
  window.opened = 0;
  window.errors = 0;
  var source = new EventSource('/ps/subscriptions?topics=${topicId}:1');
  // The server's first event, 'subscribed', says the stream started.
  source.addEventListener('subscribed', function () { window.opened++; });
  source.onmessage = function (event) {
    var message = JSON.parse(event.data);
    window.received.push([message.messageId, message.body]);
    window.ids.push(event.lastEventId);
    var item = document.createElement('li');
    item.textContent = message.body;
    document.getElementById('log').appendChild(item);
  };
  source.onerror = function () { window.errors++; };
</script>
</body></html>`;
}

describe('a native EventSource across a server restart on Redis', () => {
  let browser;
  let redis;
  const servers = [];

  after(async () => {
    await browser?.close();
    for (const server of servers) {
      await server.stop();
    }
    await redis?.stop();
  });

  const settings = () => ({ 'Redis:Configuration': redis.configuration });

  test('a native EventSource resumes exactly after its server is killed and restarted: every message once, in order', async () => {
    redis = await startRedis();
    browser = await launchBrowser();
    const [a, b] = await Promise.all([startServer({ settings: settings() }), startServer({ settings: settings() })]);
    servers.push(a, b);
    const topic = await api(a, 'POST', '/topics');
    const id = topic.topicId;
    await api(a, 'POST', `/topics/${id}`, 'm1');
    await api(a, 'POST', `/topics/${id}`, 'm2');

    const page = await newPage(browser);
    let streams = 0;
    page.on('request', (request) => {
      if (request.resourceType() === 'eventsource') {
        streams++;
      }
    });
    await page.route(`${a.url}/native.html`, (route) => route.fulfill({ contentType: 'text/html; charset=utf-8', body: nativeEventSourceHtml(id) }));
    await page.goto(`${a.url}/native.html`);
    await page.waitForFunction(() => window.opened === 1 && window.received.length === 2);
    await api(a, 'POST', `/topics/${id}`, 'm3');
    await page.waitForFunction(() => window.received.length === 3);

    // Killed: the connection is cut, the browser's EventSource starts reconnecting by itself.
    await a.kill();
    await page.waitForFunction(() => window.errors >= 1);
    // While it is down, another instance on the same Redis takes the publishes.
    await api(b, 'POST', `/topics/${id}`, 'm4');
    await api(b, 'POST', `/topics/${id}`, 'm5');
    const restarted = await startServer({ port: a.port, settings: settings() });
    servers.push(restarted);
    await page.waitForFunction(() => window.opened === 2, null, { timeout: 30000 });
    await api(restarted, 'POST', `/topics/${id}`, 'm6');
    // A last message after everything: a repeat of anything earlier would arrive before it.
    await api(b, 'POST', `/topics/${id}`, 'm7');
    await page.waitForFunction(() => window.received.some((m) => m[1] === 'm7'));

    // The URL still says from 1: only the id of m3's event, which the browser sent back by itself as
    // Last-Event-ID, kept m1..m3 from coming again. (Chromium adds that header below what
    // Playwright reports, so the test sees its effect rather than the header.)
    const received = await page.evaluate(() => window.received);
    assert.deepEqual(received, [[1, 'm1'], [2, 'm2'], [3, 'm3'], [4, 'm4'], [5, 'm5'], [6, 'm6'], [7, 'm7']]);
    assert.deepEqual((await page.evaluate(() => window.ids)).slice(2), [4, 5, 6, 7, 8].map((next) => `${id}:${next}~${topic.epoch}`));
    assert.ok(streams >= 2, `${streams} stream requests`);
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });
});
