// The page the Chromium tests of the JavaScript client open: it loads the module as an ES module and
// offers start(api, options) and follow(topics), which records every item for the test to read.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const { serveOnLoopback } = require('../support/browser');

const moduleFile = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'src', 'Clients', 'JavaScript', 'laharsub.js');

const harness = `<!doctype html><meta charset="utf-8"><title>laharsub module</title>
<script type="module">
  import * as laharsub from '/laharsub.js';
  const plain = (item) => item.type === 'message'
    ? { type: 'message', topicId: item.topicId, messageId: item.messageId, contentType: item.contentType,
        data: item.data instanceof Uint8Array ? Array.from(item.data) : item.data }
    : item.type === 'error' ? { type: 'error', topicId: item.topicId, status: item.error.status } : { ...item };
  window.items = [];
  window.statuses = [];
  window.transports = [];
  window.start = (apiUrl, options = {}) => {
    window.client = laharsub.createClient(apiUrl, { retryDelay: 200, maxRetryDelay: 1000, requestTimeout: 5000, ...options,
      onStatus: (status) => statuses.push(status),
      onTransport: (transport, info) => transports.push({ transport, skipped: info.skipped }) });
  };
  // Follows the topics with for await, as an application would; resolves once the cursors are fixed.
  window.follow = async (topics) => {
    const subscription = client.subscribe(topics);
    window.subscription = subscription;
    (async () => {
      try {
        for await (const item of subscription) {
          items.push(plain(item));
        }
        items.push({ type: 'ended' });
      } catch (error) {
        items.push({ type: 'thrown', status: error.status, message: error.message });
      }
    })();
    await subscription.ready;
    return true;
  };
  window.harnessReady = true;
</script>`;

/** Serves the page and the module from a loopback origin of its own (a real origin, as WebSockets to loopback need). */
export function serveModulePage() {
  return serveOnLoopback((req, res) => {
    if (req.url === '/laharsub.js') {
      res.writeHead(200, { 'Content-Type': 'text/javascript; charset=utf-8' });
      res.end(fs.readFileSync(moduleFile));
    } else {
      res.writeHead(req.url === '/' ? 200 : 404, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(req.url === '/' ? harness : '');
    }
  });
}

