'use strict';
// Headless Chromium from Debian's package, driven by playwright-core (no browser download here).
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { chromium } = require('playwright-core');
const paths = require('./paths');

const executablePath = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

/** Launches it; `args` are added to the command line (a certificate to trust, say). */
async function launchBrowser({ args = [] } = {}) {
  if (!fs.existsSync(executablePath)) {
    throw new Error(`${executablePath} is missing: install Debian's chromium (apt-get install -y chromium) or set CHROMIUM_PATH.`);
  }
  return chromium.launch({
    executablePath,
    timeout: 30000,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync', ...args],
  });
}

/** A page whose default timeouts bound every wait, with console errors collected for assertions. */
async function newPage(browser) {
  const context = await browser.newContext({ viewport: { width: 1180, height: 760 } });
  const page = await context.newPage();
  page.setDefaultTimeout(15000);
  page.errors = [];
  page.on('pageerror', (error) => page.errors.push(String(error)));
  return page;
}

/**
 * Opens a bare test page at `origin`/harness.html that loads jQuery `version` and the client from
 * `scriptBase`. The page is fulfilled by the test (so it is same-origin with the server when origin
 * is the server) unless `served`, when a real server at origin answers it with harnessHtml().
 */
async function openHarness(page, { origin, scriptBase, api, version, options = {}, served = false }) {
  if (!served) {
    const html = harnessHtml({ scriptBase, api, version, options });
    await page.route(`${origin}/harness.html`, (route) => route.fulfill({ contentType: 'text/html; charset=utf-8', body: html }));
  }
  await page.goto(`${origin}/harness.html`);
  await page.waitForFunction(() => window.harnessReady === true);
}

function harnessHtml({ scriptBase, api, version, options }) {
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>harness</title></head>
<body><ul id="log"></ul>
<script src="${scriptBase}/vendor/jquery-${version}.min.js"></script>
<script src="${scriptBase}/jquery.laharsub.js"></script>
<script>
  window.events = [];
  window.statuses = [];
  window.transports = [];
  window.handles = {};
  window.client = $.laharsub(${JSON.stringify(api)}, $.extend({
    retryDelay: 200, maxRetryDelay: 1000,
    onStatus: function (status) { statuses.push(status); },
    onTransport: function (transport) { transports.push(transport); }
  }, ${JSON.stringify(options)}));
  function record(event) {
    events.push(event);
    $('<li>').attr('data-type', event.type).attr('data-topic', event.topicId).text(JSON.stringify(event)).appendTo('#log');
  }
  window.track = function (topicId, from) {
    var handle = client.subscribe(topicId, {
      from: from,
      onMessage: function (m) {
        record({ type: 'message', topicId: m.topicId, messageId: m.messageId, contentType: m.contentType,
          encoding: m.encoding, body: m.body, data: m.data instanceof Uint8Array ? Array.from(m.data) : m.data });
      },
      onGap: function (n) { record($.extend({}, n)); },
      onConflated: function (n) { record($.extend({}, n)); },
      onTopicDeleted: function (n) { record($.extend({}, n)); },
      onError: function (e) { record({ type: 'error', topicId: topicId, status: e.status, detail: e.problem && e.problem.detail, message: e.message }); }
    });
    handles[topicId] = handle;
    return new Promise(function (resolve, reject) { handle.ready.then(function () { resolve(true); }, function (e) { reject(new Error(e.message)); }); });
  };
  window.harnessReady = true;
</script>
</body></html>`;
}

/**
 * Serves harnessHtml(`harness`) at `origin`/harness.html from a loopback server of the test's own, for
 * openHarness(page, { origin, served: true, ...harness }). A page that calls several instances needs such
 * a real origin: Chromium's Local Network Access refuses a route-fulfilled page its calls to the second one.
 */
async function serveHarness(harness) {
  return serveOnLoopback((req, res) => {
    const found = req.url === '/harness.html';
    res.writeHead(found ? 200 : 404, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end(found ? harnessHtml(harness) : '');
  });
}

/** An HTTP server of the test's own on a free loopback port, answering with `handler`: { origin, close() }. */
async function serveOnLoopback(handler) {
  const server = http.createServer(handler);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${server.address().port}`,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Saves a screenshot under artifacts/ (ignored by git) for people to look at. */
async function screenshot(page, name) {
  const dir = path.join(paths.repo, 'artifacts', 'browser');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.png`);
  await page.screenshot({ path: file });
  return file;
}

/** Counts the page's long polls that were sent and have not ended (answered, failed or aborted). */
function trackPolls(page) {
  const outstanding = new Set();
  let started = 0;
  const isPoll = (request) => request.url().includes('/ps/subscriptions');
  page.on('request', (r) => { if (isPoll(r)) { outstanding.add(r); started++; } });
  page.on('requestfinished', (r) => outstanding.delete(r));
  page.on('requestfailed', (r) => outstanding.delete(r));
  return { outstanding: () => outstanding.size, started: () => started, urls: () => [...outstanding].map((r) => r.url()) };
}

/** A new page on the demo chat at `url`, with `nickname` typed in (and committed by leaving the field). */
async function openDemoAs(browser, url, nickname) {
  const page = await newPage(browser);
  await page.goto(url);
  await page.locator('#nickname').fill(nickname);
  await page.locator('#nickname').blur();
  return page;
}

/** Waits until `condition` (async) is truthy; fails with `what` after timeoutMs. */
async function eventually(condition, what, timeoutMs = 15000) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      last = await condition();
      if (last) {
        return last;
      }
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

module.exports = { launchBrowser, newPage, openDemoAs, openHarness, harnessHtml, serveHarness, serveOnLoopback, screenshot, trackPolls, eventually };
