// The JavaScript client in Chromium through nginx running the repository's deploy/nginx/laharsub.conf:
// as shipped, a page gets its WebSocket through it; through the same file without its WebSocket lines
// (an nginx not set up for WebSockets) the page falls back to Server-Sent Events; and when that nginx
// also buffers event streams (proxy_buffering on, ignoring the server's X-Accel-Buffering: no, and gzip
// on for them: compressed output waits for a full buffer), to the
// long poll. Each time the page receives what is published.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { startServer, api } = require('../support/server');
const { startNginx } = require('../support/nginx');
const { launchBrowser, newPage, eventually } = require('../support/browser');
import { serveModulePage } from './module-page.mjs';

/** Replaces the line `pattern` matches, failing when the config no longer has it. */
function replaceLine(config, pattern, replacement) {
  assert.match(config, pattern, 'deploy/nginx/laharsub.conf changed: update this test\'s edits');
  return config.replace(pattern, replacement);
}
const withoutWebSockets = (config) => replaceLine(replaceLine(config,
  /^[ \t]*proxy_set_header Upgrade \$http_upgrade;\n/m, ''),
  /^[ \t]*proxy_set_header Connection \$connection_upgrade;\n/m, '        proxy_set_header Connection "";\n');
const bufferingStreams = (config) => replaceLine(withoutWebSockets(config),
  /^[ \t]*proxy_buffering off;\n/m, '        proxy_buffering on;\n        proxy_ignore_headers X-Accel-Buffering;\n        gzip on;\n        gzip_types text/event-stream;\n        gzip_min_length 1;\n');

const cases = [
  { name: 'as shipped', edit: undefined, transport: 'websocket', skipped: [] },
  { name: 'without its WebSocket lines', edit: withoutWebSockets, transport: 'sse', skipped: ['websocket'] },
  { name: 'without its WebSocket lines and buffering event streams', edit: bufferingStreams, transport: 'longpoll', skipped: ['websocket', 'sse'] },
];

describe('the JavaScript client through the repository\'s nginx config', () => {
  let server;
  let browser;
  let origin;

  before(async () => {
    [server, browser, origin] = await Promise.all([startServer(), launchBrowser(), serveModulePage()]);
  });

  after(async () => {
    await browser?.close();
    await origin?.close();
    await server?.stop();
  });

  for (const { name, edit, transport, skipped } of cases) {
    test(`deploy/nginx/laharsub.conf ${name}: the page ends on ${transport} and receives what is published`, async () => {
      const nginx = await startNginx(server.url, { edit });
      try {
        const topic = await api(server, 'POST', '/topics');
        const page = await newPage(browser);
        await page.goto(`${origin.origin}/`);
        await page.waitForFunction(() => window.harnessReady === true);
        await page.evaluate((apiUrl) => window.start(apiUrl, { sseOpenTimeout: 2000 }), nginx.api);
        await page.evaluate((id) => window.follow({ topicId: id, from: 1 }), topic.topicId);
        await eventually(() => page.evaluate(() => window.client.transport !== null && window.statuses.at(-1) === 'connected'), 'a connection');
        assert.deepEqual(await page.evaluate(() => window.transports), [{ transport, skipped }]);
        await page.evaluate((id) => window.client.publish(id, 'through nginx'), topic.topicId);
        await api(server, 'POST', `/topics/${topic.topicId}`, 'published beside nginx');
        await eventually(async () => (await page.evaluate(() => window.items.length)) === 2, 'both messages');
        assert.deepEqual(await page.evaluate(() => window.items.map((i) => i.data)), ['through nginx', 'published beside nginx']);
        await page.close();
      } finally {
        await nginx.stop();
      }
    });
  }
});
