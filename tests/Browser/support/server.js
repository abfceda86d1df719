'use strict';
// Runs the real Laharsub server (the Release build test.sh makes) as a child process on loopback.
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const paths = require('./paths');

/** A free loopback port (the OS picks one; it stays free unless another process races for it). */
function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.unref();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/**
 * Starts the server; `settings` become `--Laharsub:Name=value` arguments, and each of `endpoints`
 * (name -> { Url, Protocols, 'Certificate:Path', ... }) a Kestrel endpoint beside the plain HTTP one at
 * `url`, through the `--Kestrel:Endpoints:Name:Key=value` arguments the README documents. Resolves
 * once /health answers, within `timeoutMs`.
 */
async function startServer({ port, settings = {}, endpoints = {}, timeoutMs = 30000 } = {}) {
  if (!fs.existsSync(paths.serverDll)) {
    throw new Error(`${paths.serverDll} is missing: build the server first (dotnet build src/Server/Host -c Release).`);
  }
  port = port || await freePort();
  const url = `http://127.0.0.1:${port}`;
  // Once any endpoint is configured Kestrel binds only those (--urls is ignored), so the plain one joins them.
  const listen = Object.keys(endpoints).length === 0 ? ['--urls', url] : [`--Kestrel:Endpoints:Http:Url=${url}`];
  const args = [paths.serverDll, ...listen, '--Logging:LogLevel:Default=Warning'];
  for (const [name, endpoint] of Object.entries(endpoints)) {
    for (const [key, value] of Object.entries(endpoint)) {
      args.push(`--Kestrel:Endpoints:${name}:${key}=${value}`);
    }
  }
  for (const [name, value] of Object.entries(settings)) {
    args.push(`--Laharsub:${name}=${value}`);
  }
  const child = spawn('dotnet', args, { cwd: path.dirname(paths.serverDll), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d) => { output += d; });
  child.stderr.on('data', (d) => { output += d; });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));

  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const early = await Promise.race([exited, new Promise((r) => setTimeout(() => r(null), 100))]);
    if (early) {
      throw new Error(`the server exited at start (${JSON.stringify(early)}):\n${output}`);
    }
    try {
      const health = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) });
      if (health.ok) {
        break;
      }
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the server did not answer /health within ${timeoutMs} ms:\n${output}`);
    }
  }

  return {
    port,
    url,
    api: `${url}/ps`,
    output: () => output,
    /** Ends it as a crash would (SIGKILL): connections are cut, nothing is answered. */
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) {
        return;
      }
      child.kill('SIGKILL');
      await exited;
    },
    /** Stops it as an operator would (SIGTERM, graceful), killing it if it is not gone in time. */
    async stop(stopTimeoutMs = 20000) {
      if (child.exitCode !== null || child.signalCode !== null) {
        return;
      }
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), stopTimeoutMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** A tiny JSON helper for the test's own REST calls; fails with the server's problem detail. */
async function api(server, method, path, body, contentType) {
  const init = { method, signal: AbortSignal.timeout(10000), headers: {} };
  if (body !== undefined) {
    init.body = typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body);
    init.headers['Content-Type'] = contentType || (typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json');
  }
  const response = await fetch(server.api + path, init);
  const text = await response.text();
  if (!response.ok) {
    throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
  }
  return text ? JSON.parse(text) : undefined;
}

module.exports = { startServer, freePort, api };
