'use strict';
// A client generated from the running server's OpenAPI document by an independent generator:
// openapi-typescript writes the types, the TypeScript compiler checks api/generated/scenario.mts (the
// common scenario through openapi-fetch, and a few corners) against them and compiles it, and the test
// runs it against the same server. A document the generator cannot read, or types the calls do not fit, fail the test.
const { describe, test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const { startServer } = require('../support/server');
const generated = require('../support/generated');

describe('a client generated with openapi-typescript and openapi-fetch', () => {
  let server;
  let output;

  before(async () => {
    server = await startServer();
    output = generated.workspace('openapi-fetch', ['scenario.mts', 'outcome.mts']);
  });

  after(async () => {
    await server?.stop();
    generated.remove(output);
  });

  test('is generated from the served document, type-checks, and creates, publishes, polls and reads presence', async () => {
    const document = await generated.fetchDocument(server);

    // openapi-typescript throws on a document it cannot read (as it did on deepObject arrays); let it.
    const { default: openapiTS, astToString } = await import('openapi-typescript');
    const types = astToString(await openapiTS(document));
    fs.writeFileSync(path.join(output, 'schema.d.ts'), types);
    // The publish body is declared with real media types, not */*, so a generator sends one of them.
    assert.match(types, /"text\/plain": string/);
    assert.doesNotMatch(types, /"\*\/\*"/);
    generated.compile(path.join(output, 'scenario.mts'));

    const { run } = await import(pathToFileURL(path.join(output, 'scenario.mjs')).href);
    const { outcome, corners } = await run(server.url);

    await generated.assertScenario(server, outcome, 'hello from openapi-fetch');
    assert.equal(corners.headStatus, 200);
    assert.deepEqual([corners.quietStatus, corners.quietData, corners.quietError], [204, undefined, undefined]);
    assert.equal(corners.wildcardStatus, 400);
    assert.ok(corners.wildcardErrors?.['Content-Type'], `the refusal names Content-Type: ${JSON.stringify(corners.wildcardErrors)}`);
  });
});
