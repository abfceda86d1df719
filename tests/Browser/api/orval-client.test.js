'use strict';
// Clients generated with orval from the running server's OpenAPI document, each client kind its own test:
// orval writes api.ts, the TypeScript compiler checks the scenario (api/generated/orval-*.mts) against
// it and compiles both, and the test runs the scenario against the same server. Both use orval's
// splitByContentType, which gives a body declared in several media types one function per type that
// sends that type (without it orval sends such a body with no Content-Type at all).
const { describe, test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const { startServer } = require('../support/server');
const generated = require('../support/generated');

describe('clients generated with orval', () => {
  let server;
  const folders = [];

  before(async () => {
    server = await startServer();
  });

  after(async () => {
    await server?.stop();
    folders.forEach(generated.remove);
  });

  /** Generates orval's `client` into a workspace holding `files`, compiles `scenario` and runs it. */
  async function generateAndRun(client, scenario, files, override) {
    const folder = generated.workspace(`orval-${client}`, ['outcome.mts', scenario, ...files]);
    folders.push(folder);
    const documentPath = path.join(folder, 'openapi.json');
    fs.writeFileSync(documentPath, JSON.stringify(await generated.fetchDocument(server)));
    const { generate } = await import('orval');
    await generate({
      input: { target: documentPath },
      output: {
        target: path.join(folder, 'api.ts'),
        client,
        mode: 'single',
        // The document's servers: the address it was asked at.
        baseUrl: { getBaseUrlFromSpecification: true },
        override: { splitByContentType: true, ...override(folder) },
      },
    }, folder);
    assert.ok(fs.existsSync(path.join(folder, 'api.ts')), 'orval wrote no api.ts');
    generated.compile(path.join(folder, scenario));
    const { run } = await import(pathToFileURL(path.join(folder, scenario.replace(/\.mts$/, '.mjs'))).href);
    return run();
  }

  test('its fetch client creates, publishes JSON and text, polls and reads presence', async () => {
    const outcome = await generateAndRun('fetch', 'orval-fetch.mts', [], () => ({}));
    await generated.assertScenario(server, outcome, 'hello from orval fetch');
  });

  test('its axios client, through a mutator, creates, publishes JSON and text, polls and reads presence', async () => {
    const outcome = await generateAndRun('axios-functions', 'orval-axios.mts', ['orval-http.ts'],
      (folder) => ({ mutator: { path: path.join(folder, 'orval-http.ts'), name: 'http' } }));
    await generated.assertScenario(server, outcome, 'hello from orval axios');
  });
});
