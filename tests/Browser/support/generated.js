'use strict';
// What the tests of generated TypeScript clients share: a folder for the generated code, the TypeScript
// compiler's strict check and emit, and the messages the server stored, read with plain fetch.
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const ts = require('typescript');

// Under tests/Browser, so that the compiled code finds the clients' packages in node_modules; git ignores it.
const outputRoot = path.join(__dirname, '..', '.generated');
const scenarios = path.join(__dirname, '..', 'api', 'generated');

/** A new folder for one generated client, with the scenario files `names` (from api/generated) copied in. */
function workspace(prefix, names) {
  fs.mkdirSync(outputRoot, { recursive: true });
  const folder = fs.mkdtempSync(path.join(outputRoot, `${prefix}-`));
  for (const name of names) {
    fs.copyFileSync(path.join(scenarios, name), path.join(folder, name));
  }
  return folder;
}

/** The server's OpenAPI document. */
async function fetchDocument(server) {
  const response = await fetch(`${server.url}/openapi/v1.json`, { signal: AbortSignal.timeout(10000) });
  assert.equal(response.status, 200);
  return response.json();
}

/**
 * Type-checks `entry` (and what it imports) strictly and emits JavaScript beside it; fails with the
 * compiler's diagnostics when the generated code or the calls to it do not type-check.
 */
function compile(entry) {
  const folder = path.dirname(entry);
  const program = ts.createProgram([entry], {
    strict: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    // A browser project's usual libraries (orval's fetch client iterates Headers).
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
    types: [],
    skipLibCheck: true,
    noEmitOnError: true,
    outDir: folder,
  });
  const emitted = program.emit();
  const diagnostics = [...ts.getPreEmitDiagnostics(program), ...emitted.diagnostics];
  const host = { getCanonicalFileName: (f) => f, getCurrentDirectory: () => folder, getNewLine: () => '\n' };
  assert.equal(diagnostics.length, 0, `the generated client does not type-check:\n${ts.formatDiagnostics(diagnostics, host)}`);
}

/** The messages the server keeps for `topics` (compact form), as [topicId, messageId, contentType, body]. */
async function storedMessages(server, topics) {
  const response = await fetch(`${server.api}/subscriptions?topics=${topics}&timeout=0`, { signal: AbortSignal.timeout(10000) });
  assert.equal(response.status, 200);
  const { messages } = await response.json();
  return messages.map((m) => [m.topicId, m.messageId, m.contentType, m.body]);
}

/**
 * Checks what every TypeScript scenario reports (its Outcome in api/generated/outcome.mts) and what the
 * server stored: an unlabelled topic and one with presence; JSON and text published to the first (each
 * with the content type the caller meant), JSON to both at once; a poll of both as member alice; the
 * member list; and the problems' details reaching the caller.
 */
async function assertScenario(server, outcome, text) {
  const { plain, room } = outcome;
  const json = (body) => JSON.stringify(JSON.parse(body));
  const expected = [
    [plain, 1, 'application/json', json('{"greeting":"hello","count":2}')],
    [plain, 2, 'text/plain', text],
    [plain, 3, 'application/json', json('{"to":"both"}')],
    [room, 1, 'application/json', json('{"to":"both"}')],
  ];
  const normalized = (messages) => messages.map(([t, m, type, body]) => [t, m, type, type === 'application/json' ? json(body) : body]);

  const info = await fetch(`${server.api}/topics/${plain}`, { signal: AbortSignal.timeout(10000) }).then((r) => r.json());
  assert.equal(info.label, undefined, 'the topic created without a body has no label');
  assert.equal(outcome.roomPresence, true);
  assert.deepEqual(outcome.published, [1, 2]);
  assert.deepEqual(outcome.many, [[plain, 3], [room, 1]]);
  assert.deepEqual(normalized(await storedMessages(server, `${plain}:1,${room}:1`)), expected);
  assert.deepEqual(normalized(outcome.delivered), expected);
  assert.deepEqual([outcome.occupancy, outcome.members], [1, [['alice', { name: 'Alice' }]]]);
  assert.match(outcome.notFound ?? '', /Topic 999999 does not exist/);
  assert.match(outcome.invalid ?? '', /^label: /);
}

function remove(folder) {
  if (folder) {
    fs.rmSync(folder, { recursive: true, force: true });
  }
}

module.exports = { workspace, fetchDocument, compile, storedMessages, assertScenario, remove };
