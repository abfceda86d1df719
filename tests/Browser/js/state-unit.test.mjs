// Unit tests of the JavaScript client's state topics (src/Clients/JavaScript/laharsub.js): RFC 7396 merge
// patches, and subscribeState against a scripted long-poll server (the real server: state.test.mjs).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import support from '../support/scripted-server.js';
import { compactTopics, createClient, mergePatch } from '../../../src/Clients/JavaScript/laharsub.js';

const { scriptedServer: scripted, valueQueue: waiter, hold } = support;

const patchMessage = (messageId, patch, contentType = 'application/merge-patch+json') =>
  ({ topicId: 9, epoch: 'e1', messageId, publishedAt: 'now', contentType, encoding: 'text', body: JSON.stringify(patch) });

describe('the JavaScript client, state topics', () => {
  test('merge patches follow RFC 7396 (its appendix A examples)', () => {
    const examples = [
      [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
      [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
      [{ a: 'b' }, { a: null }, {}],
      [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
      [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
      [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
      [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
      [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
      [['a', 'b'], ['c', 'd'], ['c', 'd']],
      [{ a: 'b' }, ['c'], ['c']],
      [{ a: 'foo' }, null, null],
      [{ a: 'foo' }, 'bar', 'bar'],
      [{ e: null }, { a: 1 }, { e: null, a: 1 }],
      [[1, 2], { a: 'b', c: null }, { a: 'b' }],
      [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
    ];
    for (const [target, patch, expected] of examples) {
      assert.deepEqual(mergePatch(target, patch), expected, `${JSON.stringify(target)} + ${JSON.stringify(patch)}`);
    }
  });

  test('a merge patch leaves the document it was applied to as it was', () => {
    const document = { bid: { price: 1.1, size: 5 }, name: 'EURUSD' };
    const copy = structuredClone(document);
    const patched = mergePatch(document, { bid: { price: 1.2 }, name: null });
    assert.deepEqual(document, copy);
    assert.deepEqual(patched, { bid: { price: 1.2, size: 5 } });
  });

  test('the compact topics form asks a state topic for its document with the cursor word state', () => {
    assert.equal(compactTopics([{ topicId: 14, cursor: null, epoch: null, snapshot: true }, { topicId: 15, cursor: 43, epoch: 'e', snapshot: true }]), '14:state,15:43~e');
  });

  test('subscribeState holds the snapshot, applies patches and replaces, resumes after the version, and reads the document again after a gap', { timeout: 20000 }, async () => {
    // By the poll's topics: a poll the client gives up for a new one (its subscriptions changed) is answered again.
    const answers = {
      '9:state': [{ notices: [{ type: 'state', topicId: 9, epoch: 'e1', version: 4, document: { a: 1, b: { c: 2 } } }], messages: [patchMessage(5, { b: { c: null, d: 3 } })] }],
      '9:6~e1': [{ messages: [patchMessage(6, { x: 'replaced' }, 'application/json'), patchMessage(7, { y: [1] })] }],
      '9:8~e1': [{ notices: [{ type: 'gap', topicId: 9, epoch: 'e1', fromMessageId: 8, toMessageId: 9 }] }],
    };
    const fresh = { notices: [{ type: 'state', topicId: 9, epoch: 'e1', version: 12, document: { fresh: true } }] };
    const server = await scripted((request) => {
      const topics = new URL(request.url, 'http://x').searchParams.get('topics');
      const answer = answers[topics]?.shift() ?? (topics === '9:state' ? fresh : null);
      return answer ? { status: 200, body: answer } : hold();
    });
    const client = createClient(server.api, { transports: ['longpoll'], retryDelay: 10 });
    const states = waiter();
    try {
      const state = client.subscribeState(9, { onState: (document, info) => states.push({ document, version: info.version, epoch: info.epoch }) });
      assert.deepEqual(await states.next('the document'), { document: { a: 1, b: { c: 2 } }, version: 4, epoch: 'e1' });
      assert.deepEqual(await states.next('the document'), { document: { a: 1, b: { d: 3 } }, version: 5, epoch: 'e1' });
      assert.deepEqual(await states.next('the document'), { document: { x: 'replaced' }, version: 6, epoch: 'e1' });
      assert.deepEqual(await states.next('the document'), { document: { x: 'replaced', y: [1] }, version: 7, epoch: 'e1' });
      assert.deepEqual(await states.next('the document'), { document: { fresh: true }, version: 12, epoch: 'e1' });
      assert.equal(await state.ready, state);
      assert.deepEqual(state.document, { fresh: true });
      const topics = server.requests.map((r) => new URL(r.url, 'http://x').searchParams.get('topics'));
      assert.deepEqual([...new Set(topics)], ['9:state', '9:6~e1', '9:8~e1'], 'snapshot, the cursor after it, and a new snapshot after the gap');
    } finally {
      client.close();
      await server.close();
    }
  });

  test('subscribeState applies the composed message after a conflated notice, and reads the document again when a message does not follow its version', { timeout: 20000 }, async () => {
    const answers = {
      '9:state': [{
        notices: [{ type: 'state', topicId: 9, epoch: 'e1', version: 2, document: { a: 1 } }, { type: 'conflated', topicId: 9, epoch: 'e1', fromMessageId: 3, toMessageId: 5 }],
        messages: [patchMessage(6, { a: 2, b: 1 })]
      }],
      '9:7~e1': [{ messages: [patchMessage(9, { lost: 'the patch of version 8 never came' })] }],
    };
    const fresh = { notices: [{ type: 'state', topicId: 9, epoch: 'e1', version: 9, document: { a: 2, b: 1, c: 8, lost: 'the patch of version 8 never came' } }] };
    const server = await scripted((request) => {
      const topics = request.query.get('topics');
      const answer = answers[topics]?.shift() ?? (topics === '9:state' ? fresh : null);
      return answer ? { status: 200, body: answer } : hold();
    });
    const client = createClient(server.api, { transports: ['longpoll'], retryDelay: 10 });
    const states = waiter();
    try {
      client.subscribeState(9, { onState: (document, info) => states.push([document, info.version]) });
      assert.deepEqual(await states.next('the snapshot'), [{ a: 1 }, 2]);
      assert.deepEqual(await states.next('the composed patch'), [{ a: 2, b: 1 }, 6]);
      assert.deepEqual(await states.next('the document read again'), [fresh.notices[0].document, 9]);
    } finally {
      client.close();
      await server.close();
    }
  });

  test('patches and replaces are sent with their content types; ifCurrent makes a compare-and-set on the version held', { timeout: 20000 }, async () => {
    let version = 3;
    const server = await scripted((request) => {
      if (request.method === 'GET' && request.url.startsWith('/ps/subscriptions')) {
        return version === 3 ? { status: 200, body: { notices: [{ type: 'state', topicId: 9, epoch: 'e1', version: 3, document: {} }] } } : hold();
      }
      if (request.method === 'GET') {
        return { status: 200, headers: { ETag: '"e1:3"' }, body: { a: 1 } };
      }
      if (request.headers['if-match'] === '"e1:2"') {
        return { status: 412, headers: { 'Content-Type': 'application/problem+json' }, body: { status: 412, detail: 'The document is at version 3.', epoch: 'e1', version: 3 } };
      }
      version++;
      return { status: 200, headers: { ETag: `"e1:${version}"` }, body: { topicId: 9, messageId: version, epoch: 'e1' } };
    });
    const client = createClient(server.api, { transports: ['longpoll'] });
    try {
      assert.deepEqual(await client.getState(9), { topicId: 9, document: { a: 1 }, epoch: 'e1', version: 3 });
      const state = client.subscribeState(9);
      await state.ready;
      assert.deepEqual(await state.patch({ a: 2 }, { ifCurrent: true }), { topicId: 9, messageId: 4, epoch: 'e1' });
      assert.deepEqual(await client.replaceState(9, { b: 1 }, { ifEpoch: 'e1' }), { topicId: 9, messageId: 5, epoch: 'e1' });
      const refused = await client.publishPatch(9, { a: 3 }, { ifEpoch: 'e1', ifVersion: 2 }).catch((error) => error);
      assert.equal(refused.status, 412);
      assert.equal(refused.problem.version, 3);
      const writes = server.requests.filter((r) => r.method !== 'GET')
        .map((r) => [r.method, r.url, r.headers['content-type'], r.headers['if-match'], r.body, /^"[0-9a-f]{32}"$/.test(r.headers['idempotency-key'])]);
      assert.deepEqual(writes, [
        ['POST', '/ps/topics/9', 'application/merge-patch+json', '"e1:3"', '{"a":2}', true],
        ['PUT', '/ps/topics/9/state', 'application/json', '"e1"', '{"b":1}', true],
        ['POST', '/ps/topics/9', 'application/merge-patch+json', '"e1:2"', '{"a":3}', true],
      ]);
      assert.throws(() => client.publishPatch(9, [1]), /a merge patch must be a JSON object/);
      assert.throws(() => client.replaceState(9, 'text'), /a state document must be a JSON object/);
      assert.throws(() => client.publishPatch(9, {}, { ifVersion: 3 }), /ifVersion .* needs ifEpoch/);
    } finally {
      client.close();
      await server.close();
    }
  });
});
