'use strict';
// A small HTTP proxy in front of the server, for the transport tests. It forwards requests and
// WebSocket upgrades, and can behave as the proxies the jQuery client has to get past do:
// - refuseUpgrades: a proxy that does not speak WebSocket, answering an upgrade `400` ('status') or
//   dropping the connection ('drop');
// - bufferEventStreams: a buffering proxy, which passes a text/event-stream response's headers on but
//   holds its bytes until the response ends (it ignores the server's X-Accel-Buffering: no).
// Both can be changed while it runs (proxy.options).
const http = require('node:http');
const net = require('node:net');

async function startProxy(target, options = {}) {
  const upstreamUrl = new URL(target);
  const settings = { refuseUpgrades: false, upgradeRefusal: 'status', bufferEventStreams: false, ...options };
  const stats = { requests: 0, upgrades: 0, refusedUpgrades: 0, forwardedUpgrades: 0, eventStreams: 0, heldBytes: 0 };
  const sockets = new Set();
  const track = (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };

  const server = http.createServer((req, res) => {
    stats.requests++;
    const upstream = http.request({
      host: upstreamUrl.hostname, port: upstreamUrl.port, method: req.method, path: req.url, headers: req.headers,
    }, (answer) => {
      const eventStream = /^text\/event-stream/i.test(answer.headers['content-type'] || '');
      res.writeHead(answer.statusCode, answer.headers);
      if (eventStream) {
        stats.eventStreams++;
      }
      if (eventStream && settings.bufferEventStreams) {
        res.flushHeaders();
        const held = [];
        answer.on('data', (chunk) => {
          held.push(chunk);
          stats.heldBytes += chunk.length;
        });
        answer.on('end', () => res.end(Buffer.concat(held)));
        answer.on('error', () => res.destroy());
      } else {
        answer.pipe(res);
        answer.on('error', () => res.destroy());
      }
    });
    upstream.on('socket', track);
    upstream.on('error', () => {
      if (!res.headersSent) {
        res.writeHead(502, { 'Content-Type': 'text/plain' });
        res.end('the proxy could not reach the server');
      } else {
        res.destroy();
      }
    });
    req.pipe(upstream);
    // The browser went away (an aborted poll, a closed EventSource): so does the request upstream.
    res.on('close', () => upstream.destroy());
  });
  server.on('connection', track);

  server.on('upgrade', (req, socket, head) => {
    stats.upgrades++;
    socket.on('error', () => {});
    if (settings.refuseUpgrades) {
      stats.refusedUpgrades++;
      if (settings.upgradeRefusal === 'drop') {
        socket.destroy();
      } else {
        socket.end('HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: 31\r\nConnection: close\r\n\r\nthis proxy does not do upgrades');
      }
      return;
    }
    stats.forwardedUpgrades++;
    const upstream = net.connect(Number(upstreamUrl.port), upstreamUrl.hostname, () => {
      let request = `${req.method} ${req.url} HTTP/1.1\r\n`;
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        request += `${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}\r\n`;
      }
      upstream.write(request + '\r\n');
      if (head.length) {
        upstream.write(head);
      }
      socket.pipe(upstream).pipe(socket);
    });
    track(upstream);
    upstream.on('error', () => socket.destroy());
    socket.on('close', () => upstream.destroy());
    upstream.on('close', () => socket.destroy());
  });

  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}`;
  return {
    url,
    api: `${url}/ps`,
    options: settings,
    stats,
    async close() {
      for (const socket of sockets) {
        socket.destroy();
      }
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

module.exports = { startProxy };
