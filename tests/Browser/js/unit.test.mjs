// Unit tests of the JavaScript client's pure parts (src/Clients/JavaScript/laharsub.js), in node.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import {
  backoffDelay, compactTopics, createClient, decodeMessage, LaharsubError, normalizeBaseUrls, parseRetryAfter,
  presenceEvent, publishBody, publishFrame, sseParser, validateOptions,
} from '../../../src/Clients/JavaScript/laharsub.js';

describe('the JavaScript client, unit', () => {
  test('the SSE parser follows the WHATWG rules: named events, multi-line data, ids, comments, CRLF split across chunks', () => {
    const events = [];
    const feed = sseParser((event) => events.push(event));
    feed('retry: 2000\n\nevent: subscribed\nid: 14:43~ab\ndata: {"topics":[]}\n\n: heartbeat\n\n');
    feed('id: 14:44~ab\ndata: {"a":\r');
    feed('\ndata: 1}\r\n\r');
    feed('\nevent: notice\ndata:{"type":"gap"}\n');
    assert.equal(events.length, 2, 'an event is dispatched only at its blank line');
    feed('\n');
    assert.deepEqual(events, [
      { type: 'subscribed', data: '{"topics":[]}', id: '14:43~ab' },
      { type: 'message', data: '{"a":\n1}', id: '14:44~ab' },
      { type: 'notice', data: '{"type":"gap"}', id: '14:44~ab' },
    ]);
  });

  test('the compact topics form carries cursors and their epochs', () => {
    assert.equal(compactTopics([{ topicId: 14, cursor: 43, epoch: 'ab_-9' }, { topicId: 15, cursor: null, epoch: null }, { topicId: 16, cursor: 2, epoch: null }]),
      '14:43~ab_-9,15,16:2');
  });

  test('messages are decoded: JSON parsed, text kept, base64 made bytes, bad JSON left as text', () => {
    const base = { topicId: 1, epoch: 'e', messageId: 1, publishedAt: 'now' };
    assert.deepEqual(decodeMessage({ ...base, contentType: 'application/vnd.x+json', encoding: 'text', body: '{"a":[1]}' }).data, { a: [1] });
    assert.equal(decodeMessage({ ...base, contentType: 'text/plain', encoding: 'text', body: '{"a"' }).data, '{"a"');
    assert.equal(decodeMessage({ ...base, contentType: 'application/json', encoding: 'text', body: '{"a"' }).data, '{"a"');
    const bytes = decodeMessage({ ...base, contentType: 'image/png', encoding: 'base64', body: 'AAH/' });
    assert.deepEqual([...bytes.data], [0, 1, 255]);
    assert.equal(bytes.type, 'message');
  });

  test('publish bodies: objects as JSON, strings as text, bytes as they are; empty bodies and JSON-less objects refused', () => {
    assert.deepEqual(publishBody({ a: 1 }), { body: '{"a":1}', contentType: 'application/json' });
    assert.deepEqual(publishBody('hi'), { body: 'hi', contentType: 'text/plain; charset=utf-8' });
    const bytes = new Uint8Array([1, 2]);
    assert.deepEqual(publishBody(bytes), { body: bytes, contentType: 'application/octet-stream' });
    assert.throws(() => publishBody(''), /empty bodies/);
    assert.throws(() => publishBody({ a: 1 }, 'text/plain'), /omit the type to send JSON/);
  });

  test('publish frames carry text as text and bytes as base64, and leave large bodies to REST', () => {
    assert.deepEqual(publishFrame({ topicId: 3 }, publishBody('hi'), 'k1'),
      { type: 'publish', topicId: 3, contentType: 'text/plain; charset=utf-8', idempotencyKey: 'k1', encoding: 'text', body: 'hi' });
    const view = new Uint8Array([9, 0, 1, 255, 7]).subarray(1, 4);
    assert.equal(publishFrame({ topics: '1,2' }, publishBody(view), null).body, 'AAH/');
    assert.equal(publishFrame({ topicId: 3 }, publishBody('x'.repeat(400 * 1024)), null), null);
  });

  test('options are checked: unknown names and bad values throw and say what is expected', () => {
    assert.throws(() => validateOptions({ polTimeout: 3 }), /unknown option "polTimeout"/);
    assert.throws(() => validateOptions({ pollTimeout: 1.5 }), /pollTimeout must be a whole number/);
    assert.throws(() => validateOptions({ transports: ['sse', 'sse'] }), /lists "sse" twice/);
    assert.throws(() => validateOptions({ transports: ['comet'] }), /the transports are/);
    assert.throws(() => validateOptions({ clientId: 'a b' }), /clientId/);
    assert.throws(() => validateOptions({ conflate: 60001 }), /conflate/);
    assert.throws(() => validateOptions({ accessToken: 5 }), /accessToken/);
    const options = validateOptions({ transports: ['longpoll'] });
    assert.equal(options.pollTimeout, 30);
    assert.deepEqual(options.transports, ['longpoll']);
    assert.deepEqual(normalizeBaseUrls(['http://a/ps/', 'http://b/ps']), ['http://a/ps', 'http://b/ps']);
    assert.throws(() => normalizeBaseUrls(['http://a/ps', 'http://a/ps/']), /twice/);
  });

  test('backoff doubles up to its cap, less the jitter; Retry-After reads seconds and dates', () => {
    const options = { retryDelay: 500, maxRetryDelay: 3000, retryJitter: 0.5 };
    assert.deepEqual([0, 1, 2, 3, 40].map((n) => backoffDelay(n, options, 0)), [500, 1000, 2000, 3000, 3000]);
    assert.equal(backoffDelay(1, options, 1), 500);
    assert.equal(parseRetryAfter('3'), 3000);
    assert.equal(parseRetryAfter(new Date(10000).toUTCString(), 4000), 6000);
    assert.equal(parseRetryAfter('soon'), null);
  });

  test('presence events are read from companion messages only when they are ones', () => {
    assert.deepEqual(presenceEvent({ data: { type: 'join', member: 'ann', data: { name: 'Ann' }, occupancy: 1 } }),
      { type: 'join', member: 'ann', data: { name: 'Ann' }, occupancy: 1 });
    assert.equal(presenceEvent({ data: 'hello' }), null);
    assert.equal(presenceEvent({ data: { type: 'wave', member: 'ann', occupancy: 1 } }), null);
  });

  test('subscribe checks its arguments, and an aborted signal closes the client', () => {
    const controller = new AbortController();
    const client = createClient('http://127.0.0.1:9/ps', { signal: controller.signal, transports: ['longpoll'] });
    assert.throws(() => client.subscribe([1, 1]), /already subscribed/);
    assert.throws(() => client.subscribe({ topicId: 1, epoch: 'abc' }), /epoch needs from/);
    assert.throws(() => client.subscribe({ topicId: 0 }), /positive integer/);
    assert.throws(() => client.publish(1, 'x', { idempotencyKey: 'a"b' }), /idempotencyKey/);
    controller.abort();
    assert.equal(client.status, 'closed');
    assert.throws(() => client.subscribe(1), /closed/);
  });

  test('errors carry the status, the problem and the topic it names', () => {
    const error = new LaharsubError('x', { status: 404, problem: { topicId: 7, detail: 'gone' } });
    assert.equal(error.topicId, 7);
    assert.equal(error.status, 404);
    assert.ok(error instanceof Error);
  });

  test('an event stream whose first event has another name than open is recognised by its cursors, and an unknown notice is still surfaced', { timeout: 15000 }, async () => {
    // The protocol's SSE `open` event may be renamed (it collides with EventSource's own): the client
    // must not depend on the name. A scripted server stands in for it here.
    const requests = [];
    const server = http.createServer((req, res) => {
      requests.push({ url: req.url, accept: req.headers.accept });
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.write('retry: 2000\n\nevent: subscribed\nid: 5:3~e1\ndata: {"topics":[{"topicId":5,"epoch":"e1","from":3}]}\n\n');
      res.write('event: notice\ndata: {"type":"somethingNew","topicId":5,"epoch":"e1"}\n\n');
      res.write('id: 5:4~e1\ndata: {"topicId":5,"epoch":"e1","messageId":3,"publishedAt":"now","contentType":"text/plain","encoding":"text","body":"hi"}\n\n');
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    const client = createClient(`http://127.0.0.1:${server.address().port}/ps`, { transports: ['sse'] });
    try {
      const subscription = client.subscribe({ topicId: 5, from: 3 });
      const items = subscription[Symbol.asyncIterator]();
      const first = await items.next();
      const second = await items.next();
      assert.deepEqual(first.value, { type: 'somethingNew', topicId: 5, epoch: 'e1' });
      assert.equal(second.value.data, 'hi');
      assert.equal(client.transport, 'sse');
      assert.equal(subscription.cursor(), 4);
      assert.deepEqual(requests, [{ url: '/ps/subscriptions?topics=5:3', accept: 'text/event-stream' }]);
    } finally {
      client.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
