'use strict';
// A private redis-server (Debian's package, which test.sh installs) on a free loopback port, with no
// persistence, for the scale-out tests. A test that needs it fails with this message; it never skips.
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { freePort } = require('./server');

async function startRedis({ timeoutMs = 15000 } = {}) {
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'laharsub-redis-'));
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' });
  const failed = new Promise((resolve) => child.once('error', resolve));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const error = await Promise.race([failed, new Promise((r) => setTimeout(() => r(null), 50))]);
    if (error) {
      throw new Error(`redis-server could not be started (${error.message}): run ./test.sh, which installs Debian's redis-server, or apt-get install redis-server.`);
    }
    const open = await new Promise((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => { socket.destroy(); resolve(true); });
      socket.on('error', () => resolve(false));
    });
    if (open) {
      break;
    }
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill('SIGKILL');
      throw new Error(`redis-server did not listen on port ${port} within ${timeoutMs} ms`);
    }
  }
  return {
    configuration: `127.0.0.1:${port}`,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        await exited;
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

module.exports = { startRedis };
