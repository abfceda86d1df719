'use strict';
// A loopback HTTP server that plays Laharsub's REST API from a script, for the clients' fast tests.
const http = require('node:http');

/**
 * Answers each request with `await handler(request)` -> { status, headers, body } (body sent as JSON; a
 * promise that never settles holds the request, as a waiting long poll). Records every request
 * ({ method, url, path, query, headers, body }).
 */
async function scriptedServer(handler) {
  const requests = [];
  const server = http.createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) {
      body += chunk;
    }
    const url = new URL(req.url, 'http://x');
    const request = { method: req.method, url: req.url, path: url.pathname, query: url.searchParams, headers: req.headers, body };
    requests.push(request);
    const answer = await handler(request);
    res.writeHead(answer.status, { 'Content-Type': 'application/json', ...answer.headers });
    res.end(answer.body === undefined ? '' : JSON.stringify(answer.body));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    api: `http://127.0.0.1:${server.address().port}/ps`,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  };
}

/** A queue of values pushed by callbacks; next() resolves with the next one or fails after timeoutMs. */
function valueQueue(timeoutMs = 5000) {
  const queue = [];
  let pending = null;
  return {
    push(value) {
      if (pending) {
        const resolve = pending;
        pending = null;
        resolve(value);
      } else {
        queue.push(value);
      }
    },
    next(what = 'a value') {
      if (queue.length) {
        return Promise.resolve(queue.shift());
      }
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${what} did not come within ${timeoutMs} ms`)), timeoutMs);
        pending = (value) => { clearTimeout(timer); resolve(value); };
      });
    }
  };
}

/** Never settles: the server holds the request, as it holds a long poll with nothing to deliver. */
const hold = () => new Promise(() => {});

module.exports = { scriptedServer, valueQueue, hold };
