'use strict';
// A network outage between a page and the server, on demand.
const net = require('node:net');

/** A TCP forwarder to `port` that can cut every connection and refuse new ones, as a network outage does. */
async function startForwarder(port) {
  const sockets = new Set();
  let refusing = false;
  const server = net.createServer((client) => {
    if (refusing) {
      client.destroy();
      return;
    }
    const upstream = net.connect(port, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.once('close', () => { sockets.delete(socket); client.destroy(); upstream.destroy(); });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}`;
  return {
    api: `${url}/ps`,
    cut() {
      refusing = true;
      sockets.forEach((socket) => socket.destroy());
    },
    restore() { refusing = false; },
    async close() {
      sockets.forEach((socket) => socket.destroy());
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

module.exports = { startForwarder };
