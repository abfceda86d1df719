'use strict';
// The FX board demo (/demo/fx.html) in headless Chromium against the real server, fed by the repository's
// publisher (src/Clients/JavaScript/examples/fx-publisher.mjs) run as a child process: 50 state topics
// of six fields each; the board fills, a cell that changes flashes, and a reload shows the documents as
// they are on the server.
const { describe, test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const path = require('node:path');
const { startServer, api } = require('../support/server');
const { launchBrowser, newPage, eventually, screenshot } = require('../support/browser');
const paths = require('../support/paths');

const publisherScript = path.join(paths.repo, 'src', 'Clients', 'JavaScript', 'examples', 'fx-publisher.mjs');

/** Starts the publisher; resolves once it printed `ready {pair: topicId}` (within timeoutMs) with that map. */
function startPublisher(apiUrl, args, timeoutMs = 30000) {
  const child = spawn(process.execPath, [publisherScript, '--api', apiUrl, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const ready = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the publisher did not get ready within ${timeoutMs} ms:\n${output}`)), timeoutMs);
    const read = (chunk) => {
      output += chunk;
      const line = /^ready (.*)$/m.exec(output);
      if (line) {
        clearTimeout(timer);
        resolve(JSON.parse(line[1]));
      }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', (chunk) => { output += chunk; });
    exited.then((how) => { clearTimeout(timer); reject(new Error(`the publisher exited (${JSON.stringify(how)}):\n${output}`)); });
  });
  return {
    ready,
    output: () => output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
      }
      await exited;
    }
  };
}

/** The board as the page shows it: pair -> { field: value } from the cells' data-value, for rows whose six cells are filled. */
const boardOf = (page) => page.evaluate(() => Object.fromEntries([...document.querySelectorAll('#board tbody tr')]
  .filter((row) => [...row.querySelectorAll('td[data-field]')].every((cell) => cell.getAttribute('data-value')))
  .map((row) => [row.getAttribute('data-pair'), Object.fromEntries([...row.querySelectorAll('td[data-field]')]
    .map((cell) => [cell.getAttribute('data-field'), JSON.parse(cell.getAttribute('data-value'))]))])));

describe('the FX board demo', () => {
  let server;
  let browser;
  let publisher;

  before(async () => {
    [server, browser] = await Promise.all([startServer(), launchBrowser()]);
  });

  after(async () => {
    await publisher?.stop();
    await browser?.close();
    await server?.stop();
  });

  test('the board fills with 50 pairs of six fields, a changed cell flashes, and a reload shows the documents as they are', async () => {
    publisher = startPublisher(server.api, ['--interval', '100']);
    const topics = await publisher.ready;
    assert.equal(Object.keys(topics).length, 50);

    const page = await newPage(browser);
    await page.goto(`${server.url}/demo/fx.html`);
    await eventually(async () => Object.keys(await boardOf(page)).length === 50, 'the 50 rows filled');
    const flashed = await eventually(() => page.evaluate(() => {
      const cell = document.querySelector('td[data-flashes]:is(.flash-up, .flash-down)');
      return cell && { pair: cell.parentElement.getAttribute('data-pair'), field: cell.getAttribute('data-field') };
    }), 'a cell that changed and flashed');
    assert.ok(['bid', 'ask', 'high', 'low', 'change'].includes(flashed.field), JSON.stringify(flashed));
    assert.equal(await page.evaluate(() => document.querySelectorAll('tr[data-pair]').length), 50);
    await screenshot(page, 'fx-board');

    // The feed stops (its last patches answered before it exits), so that what the server holds is final;
    // a reload reads every document again.
    await publisher.stop();
    await page.reload();
    const expected = {};
    for (const [pair, topicId] of Object.entries(topics)) {
      const { pair: name, ...fields } = await api(server, 'GET', `/topics/${topicId}/state`);
      assert.equal(name, pair);
      expected[pair] = fields;
    }
    const shown = await eventually(async () => {
      const board = await boardOf(page);
      return Object.keys(board).length === 50 ? board : null;
    }, 'the 50 rows filled after the reload');
    assert.deepEqual(shown, expected);
    assert.equal(await page.evaluate(() => document.querySelectorAll('td[data-flashes]').length), 0, 'nothing flashes on a fresh board');

    // A patch from elsewhere changes one field of one pair: that cell alone changes and flashes.
    await api(server, 'POST', `/topics/${topics.EURUSD}`, { bid: 0.00001 }, 'application/merge-patch+json');
    await eventually(() => page.evaluate(() => document.querySelector('tr[data-pair="EURUSD"] td[data-field="bid"]').getAttribute('data-value') === '0.00001'),
      'the patched bid');
    assert.deepEqual(await page.evaluate(() => [...document.querySelectorAll('td[data-flashes]')]
      .map((cell) => [cell.parentElement.getAttribute('data-pair'), cell.getAttribute('data-field'), cell.className])), [['EURUSD', 'bid', 'flash-down']]);
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });
});
