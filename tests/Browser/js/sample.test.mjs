// samples/OwnTopics in headless Chromium: an app with its own users (cookie sign-in) that embeds Laharsub in
// Host mode, its page on the JavaScript client. ann creates her topic and chats on it; bob is refused ann's topic
// (on the subscription and on a publish) and has his own.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const require = createRequire(import.meta.url);
const { repo } = require('../support/paths');
const { freePort } = require('../support/server');
const { launchBrowser, newPage, eventually } = require('../support/browser');

const sampleDll = path.join(repo, 'samples', 'OwnTopics', 'bin', 'Release', 'net10.0', 'OwnTopics.dll');

/** Runs the sample's build on a free loopback port; resolves once its page answers. */
async function startSample() {
  if (!fs.existsSync(sampleDll)) {
    throw new Error(`${sampleDll} is missing: build the solution first (dotnet build Laharsub.sln -c Release).`);
  }
  const url = `http://127.0.0.1:${await freePort()}`;
  const child = spawn('dotnet', [sampleDll, '--urls', url], { cwd: path.dirname(sampleDll), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d) => { output += d; });
  child.stderr.on('data', (d) => { output += d; });
  await eventually(async () => (await fetch(url, { signal: AbortSignal.timeout(2000) })).ok, `the sample at ${url} to answer:\n${output}`, 30000);
  return { url, output: () => output, stop: () => child.kill('SIGKILL') };
}

const logOf = (page) => page.locator('#log li').allTextContents();

describe('samples/OwnTopics: per-user topics decided by the application (Host mode)', () => {
  let sample;
  let browser;

  before(async () => {
    [sample, browser] = await Promise.all([startSample(), launchBrowser()]);
  });

  after(async () => {
    await browser?.close();
    sample?.stop();
  });

  test('ann chats on her topic; bob is refused it and has his own', async () => {
    const ann = await newPage(browser);
    const bob = await newPage(browser);
    for (const [page, user] of [[ann, 'ann'], [bob, 'bob']]) {
      await page.goto(sample.url);
      await page.waitForFunction(() => window.sampleReady === true);
      await page.click(`#${user}`);
      await eventually(async () => (await page.textContent('#me')) === user, `${user} signed in`);
    }

    await ann.click('#create');
    const annsTopic = Number((await eventually(async () => (await ann.textContent('#topic')).match(/topic (\d+)/), 'ann\'s topic'))[1]);
    await ann.fill('#text', 'hello from ann');
    await ann.click('#send');
    await eventually(async () => (await logOf(ann)).includes(`topic ${annsTopic}: hello from ann`), 'ann reads her own message');

    // bob may not follow ann's topic, nor create a topic labelled with another name.
    await bob.fill('#follow', String(annsTopic));
    await bob.click('#open');
    const refused = await eventually(async () => (await logOf(bob)).find((line) => line.startsWith('refused:')), 'bob refused ann\'s topic');
    assert.match(refused, /403|not allow|Forbidden/i, refused);
    await bob.click('#create');
    const bobsTopic = Number((await eventually(async () => (await bob.textContent('#topic')).match(/topic (\d+)/), 'bob\'s topic'))[1]);
    assert.notEqual(bobsTopic, annsTopic);
    await bob.fill('#text', 'hello from bob');
    await bob.click('#send');
    await eventually(async () => (await logOf(bob)).includes(`topic ${bobsTopic}: hello from bob`), 'bob reads his own message');

    // Nothing of bob's reached ann's topic.
    assert.deepEqual((await logOf(ann)).filter((line) => line.startsWith(`topic ${annsTopic}:`)), [`topic ${annsTopic}: hello from ann`]);
    assert.deepEqual([...ann.errors, ...bob.errors], []);
  });
});
