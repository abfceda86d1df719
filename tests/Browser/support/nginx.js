'use strict';
// A private nginx (Debian's, as test.sh installs it) running the repository's deploy/nginx/laharsub.conf,
// or a variant of it, in front of one server: its upstream's server lines replaced by the server and its
// `listen 80;` by a free loopback port, as tests/Laharsub.Testing/NginxReverseProxy.cs does for the .NET tests.
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const paths = require('./paths');
const { freePort } = require('./server');

const nginxPath = process.env.NGINX_PATH || '/usr/sbin/nginx';
const configPath = path.join(paths.repo, 'deploy', 'nginx', 'laharsub.conf');

const main = `daemon off;
worker_processes 1;
pid nginx.pid;
error_log stderr warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path client-body;
  proxy_temp_path proxy;
  fastcgi_temp_path fastcgi;
  uwsgi_temp_path uwsgi;
  scgi_temp_path scgi;
  include laharsub.conf;
}
`;

/** Starts nginx in front of `upstreamUrl` with the repository's config passed through `edit`; resolves once /health answers through it. */
async function startNginx(upstreamUrl, { edit = (config) => config, timeoutMs = 30000 } = {}) {
  if (!fs.existsSync(nginxPath)) {
    throw new Error(`${nginxPath} is missing: install Debian's nginx-light (test.sh does) or set NGINX_PATH.`);
  }
  const original = fs.readFileSync(configPath, 'utf8');
  // Each upstream line may carry options (max_fails=0 and the like), which the test's server keeps.
  const servers = original.match(/^[ \t]*server [^ ;]+:[0-9]+(?: [a-z_]+=[^ ;]+)*;[ \t]*\n/gm);
  if (!servers || !/^[ \t]*listen 80;/m.test(original)) {
    throw new Error(`${configPath} must keep its "server HOST:PORT;" upstream lines and one "listen 80;": the tests put theirs there.`);
  }
  const port = await freePort();
  const options = servers[0].match(/:[0-9]+((?: [a-z_]+=[^ ;]+)*);/)[1];
  let config = original.replace(servers[0], `    server ${new URL(upstreamUrl).host}${options};\n`);
  for (const line of servers.slice(1)) {
    config = config.replace(line, '');
  }
  config = edit(config.replace(/^[ \t]*listen 80;/m, `    listen 127.0.0.1:${port};`));
  const prefix = fs.mkdtempSync(path.join(os.tmpdir(), 'laharsub-nginx-'));
  fs.writeFileSync(path.join(prefix, 'nginx.conf'), main);
  fs.writeFileSync(path.join(prefix, 'laharsub.conf'), config);
  const child = spawn(nginxPath, ['-p', prefix + '/', '-c', 'nginx.conf', '-e', 'stderr'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d) => { output += d; });
  child.stderr.on('data', (d) => { output += d; });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGQUIT');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10000);
      await exited;
      clearTimeout(timer);
    }
    fs.rmSync(prefix, { recursive: true, force: true });
  };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const early = await Promise.race([exited, new Promise((r) => setTimeout(() => r(null), 100))]);
    if (early) {
      await stop();
      throw new Error(`nginx exited at start (${JSON.stringify(early)}):\n${output}`);
    }
    try {
      if ((await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) })).ok) {
        break;
      }
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`nginx did not answer /health within ${timeoutMs} ms:\n${output}`);
    }
  }
  return { url, api: `${url}/ps`, config, output: () => output, stop };
}

module.exports = { startNginx };
