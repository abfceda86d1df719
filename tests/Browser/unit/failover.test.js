'use strict';
// A jQuery client given several instances' API roots moves on when the one it uses cannot be reached.
const { describe, test, beforeEach, afterEach } = require('node:test');
const assert = require('node:assert/strict');
const { loadClient, until } = require('../support/fake-network');
const paths = require('../support/paths');

const A = 'http://a.test/ps';
const B = 'http://b.test/ps';
const C = 'http://c.test/ps';
const message = (topicId, messageId, body, epoch) =>
  ({ topicId, epoch, messageId, publishedAt: '2026-11-22T09:30:01.500Z', contentType: 'text/plain', encoding: 'text', body });

for (const version of Object.keys(paths.jqueryVersions)) {
  describe(`failover in jquery.laharsub.js with jQuery ${version}`, () => {
    let env;
    let $;
    let network;
    let client;
    let statuses;

    const newClient = (baseUrl, options = {}) => {
      statuses = [];
      client = $.laharsub(baseUrl, Object.assign({
        retryDelay: 10, maxRetryDelay: 1000, retryJitter: 0,
        onStatus: (status, info) => statuses.push({ status, info }),
      }, options));
      return client;
    };

    beforeEach(() => {
      env = loadClient(version);
      $ = env.$;
      network = env.network;
    });

    afterEach(() => {
      client?.close();
      env.close();
    });

    test('a poll that gets no answer moves to the next root at once and carries on from the cursors', async () => {
      newClient([A, B]);
      const received = [];
      const handle = client.subscribe(14, { from: 1, onMessage: (m) => received.push([m.messageId, m.body]) });
      const onA = await network.nextPoll();
      onA.respond(200, { messages: [message(14, 1, 'from a', 'e1')] });
      const cut = await network.nextPoll();
      cut.fail();
      const onB = await network.nextPoll();
      onB.respond(200, { messages: [message(14, 2, 'from b', 'e1')] });
      await until(() => received.length === 2, 2000, 'the message from b');

      assert.deepEqual([onA.root, cut.root, onB.root], [A, A, B]);
      assert.deepEqual(onB.poll.subs, [[14, 2]]);
      assert.deepEqual(onB.poll.epochs, ['e1']);
      assert.deepEqual(received, [[1, 'from a'], [2, 'from b']]);
      const retrying = statuses.filter((s) => s.status === 'retrying');
      assert.deepEqual(retrying.map((s) => [s.info.delay, s.info.baseUrl]), [[0, B]]);
      assert.equal(client.baseUrl, B);
      assert.equal(handle.cursor(), 3);
    });

    for (const status of [502, 503, 504]) {
      test(`a ${status} moves on at once whatever its Retry-After, and a 500 stays`, async () => {
        newClient([A, B]);
        client.subscribe(3, { from: 1 });
        (await network.nextPoll()).respond(status, { status }, { 'Content-Type': 'application/problem+json', 'Retry-After': '3600' });
        const onB = await network.nextPoll();
        onB.respond(500, { status: 500 }, { 'Content-Type': 'application/problem+json' });
        const again = await network.nextPoll();
        assert.deepEqual([onB.root, again.root], [B, B]);
      });
    }

    test('once every root failed in a row the client backs off and starts over at the first', async () => {
      newClient([A, B]);
      client.subscribe(3, { from: 1 });
      const roots = [];
      for (let i = 0; i < 4; i++) {
        const poll = await network.nextPoll();
        roots.push(poll.root);
        poll.fail();
      }
      await until(() => statuses.filter((s) => s.status === 'retrying').length === 4, 2000, 'four retries');
      assert.deepEqual(roots, [A, B, A, B]);
      assert.deepEqual(statuses.filter((s) => s.status === 'retrying').map((s) => s.info.delay), [0, 10, 20, 40]);
    });

    test('one root backs off as before', async () => {
      newClient(A);
      client.subscribe(3, { from: 1 });
      (await network.nextPoll()).fail();
      (await network.nextPoll()).fail();
      await until(() => statuses.filter((s) => s.status === 'retrying').length === 2, 2000, 'two retries');
      assert.deepEqual(statuses.filter((s) => s.status === 'retrying').map((s) => s.info.delay), [10, 20]);
      assert.deepEqual(Array.from(client.baseUrls), [A]);
    });

    test('a publish without a key is not retried, but the next request goes to the next root', async () => {
      newClient([A, B, C], { idempotentPublishes: false });
      const first = client.publish(1, 'maybe stored');
      const onA = await network.next((r) => r.method === 'POST');
      onA.fail();
      await assert.rejects(first, (e) => e.status === 0);
      const second = client.publish(1, 'again');
      const onB = await network.next((r) => r.method === 'POST');
      onB.respond(201, { topicId: 1, messageId: 1, epoch: 'e1' });
      const published = await second;

      assert.deepEqual([onA.root, onB.root], [A, B]);
      assert.equal(published.epoch, 'e1');
      assert.equal(network.requests.filter((r) => r.method === 'POST').length, 2);
    });

    test('a keyed publish whose outcome is unknown is sent again to the next root with the same key', async () => {
      newClient([A, B, C]);
      const publishing = client.publish(1, 'maybe stored');
      const onA = await network.next((r) => r.method === 'POST');
      onA.fail();
      const onB = await network.next((r) => r.method === 'POST');
      onB.respond(201, { topicId: 1, messageId: 1, epoch: 'e1' });
      const published = await publishing;

      assert.deepEqual([onA.root, onB.root], [A, B]);
      assert.match(onA.headers['Idempotency-Key'], /^"[0-9a-f-]{32,36}"$/);
      assert.equal(onB.headers['Idempotency-Key'], onA.headers['Idempotency-Key']);
      assert.equal(published.messageId, 1);
    });

    test('a failure of a request sent before the client moved on does not move it again', async () => {
      newClient([A, B, C]);
      const one = client.getTopic(1);
      const two = client.getTopic(2);
      const requests = [await network.next((r) => /topics\/1$/.test(r.url)), await network.next((r) => /topics\/2$/.test(r.url))];
      requests.forEach((r) => r.fail());
      await Promise.allSettled([one, two]);
      assert.equal(client.baseUrl, B);
    });

    test('several roots are validated like one', () => {
      assert.throws(() => $.laharsub([]), /empty array/);
      assert.throws(() => $.laharsub([A, '']), /baseUrl must be the Laharsub API root/);
      assert.throws(() => $.laharsub([A, A + '/']), /lists "http:\/\/a.test\/ps" twice/);
      const c = $.laharsub([A + '/', B]);
      assert.deepEqual(Array.from(c.baseUrls), [A, B]);
      assert.equal(c.baseUrl, A);
      c.close();
    });
  });
}
