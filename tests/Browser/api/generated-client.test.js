'use strict';
// A client generated from the running server's OpenAPI document by an independent generator:
// openapi-typescript writes the types, the TypeScript compiler checks api/generated/scenario.mts (create,
// publish and poll through openapi-fetch) against them and compiles it, and the test runs it against the
// same server. A document the generator cannot read, or types the calls do not fit, fail the test.
const { describe, test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const ts = require('typescript');
const { startServer } = require('../support/server');

// Under tests/Browser, so that the compiled scenario finds openapi-fetch in node_modules; git ignores it.
const outputRoot = path.join(__dirname, '..', '.generated');

describe('a client generated with openapi-typescript and openapi-fetch', () => {
  let server;
  let output;

  before(async () => {
    server = await startServer();
    fs.mkdirSync(outputRoot, { recursive: true });
    output = fs.mkdtempSync(path.join(outputRoot, 'client-'));
  });

  after(async () => {
    await server?.stop();
    if (output) {
      fs.rmSync(output, { recursive: true, force: true });
    }
  });

  test('is generated from the served document, type-checks, and creates, publishes and polls', async () => {
    const response = await fetch(`${server.url}/openapi/v1.json`, { signal: AbortSignal.timeout(10000) });
    assert.equal(response.status, 200);
    const document = await response.json();

    // openapi-typescript throws on a document it cannot read (as it did on deepObject arrays); let it.
    const { default: openapiTS, astToString } = await import('openapi-typescript');
    const types = astToString(await openapiTS(document));
    fs.writeFileSync(path.join(output, 'schema.d.ts'), types);
    fs.copyFileSync(path.join(__dirname, 'generated', 'scenario.mts'), path.join(output, 'scenario.mts'));
    // The publish body is declared with real media types, not */*, so a generator sends one of them.
    assert.match(types, /"text\/plain": string/);
    assert.doesNotMatch(types, /"\*\/\*"/);

    const program = ts.createProgram([path.join(output, 'scenario.mts')], {
      strict: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
      types: [],
      skipLibCheck: true,
      noEmitOnError: true,
      outDir: output,
    });
    const emitted = program.emit();
    const diagnostics = [...ts.getPreEmitDiagnostics(program), ...emitted.diagnostics];
    const host = { getCanonicalFileName: (f) => f, getCurrentDirectory: () => output, getNewLine: () => '\n' };
    assert.equal(diagnostics.length, 0, `the generated client does not type-check:\n${ts.formatDiagnostics(diagnostics, host)}`);

    const { run } = await import(pathToFileURL(path.join(output, 'scenario.mjs')).href);
    const outcome = await run(server.url);

    assert.equal(outcome.headStatus, 200);
    assert.equal(outcome.messageId, 1);
    assert.deepEqual(outcome.delivered, [{ contentType: 'text/plain', body: 'hello from a generated client', messageId: 1 }]);
    assert.deepEqual([outcome.quietStatus, outcome.quietData, outcome.quietError], [204, undefined, undefined]);
    assert.equal(outcome.wildcardStatus, 400);
    assert.ok(outcome.wildcardErrors?.['Content-Type'], `the refusal names Content-Type: ${JSON.stringify(outcome.wildcardErrors)}`);
  });
});
