'use strict';
// The browsable API reference (Scalar) served by the standalone server: it must work with no internet
// access, so any request that leaves the server fails the test.
const { describe, test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { startServer } = require('../support/server');
const { launchBrowser, newPage, screenshot } = require('../support/browser');

describe('the API reference page', () => {
  let server;
  let browser;

  before(async () => {
    [server, browser] = await Promise.all([startServer(), launchBrowser()]);
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  test('shows every operation of the OpenAPI document and loads nothing from elsewhere', async () => {
    const page = await newPage(browser);
    const elsewhere = [];
    await page.route('**/*', (route) => {
      if (new URL(route.request().url()).origin !== server.url) {
        elsewhere.push(route.request().url());
        return route.abort();
      }
      return route.continue();
    });

    await page.goto(`${server.url}/scalar/v1`);
    for (const summary of ['List topics', 'Create a topic', 'Get a topic\'s info', 'Delete a topic', 'Publish a message', 'Long poll many topics at once']) {
      await page.getByText(summary, { exact: true }).first().waitFor();
    }
    await screenshot(page, 'api-reference');

    assert.deepEqual(elsewhere, []);
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });
});
