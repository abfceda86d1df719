'use strict';
// Fast tests of jquery.laharsub.js's logic: real jQuery (3.7 and 4) in jsdom, scripted network.
const { describe, test, beforeEach, afterEach } = require('node:test');
const assert = require('node:assert/strict');

// Objects made inside the jsdom window have its prototypes: compare their JSON shape.
const same = (actual, expected, message) => assert.deepEqual(JSON.parse(JSON.stringify(actual)), expected, message);
const { loadClient, until } = require('../support/fake-network');
const paths = require('../support/paths');

const message = (topicId, messageId, body, contentType = 'text/plain; charset=utf-8') =>
  ({ topicId, messageId, publishedAt: '2026-11-22T09:30:01.500Z', contentType, encoding: 'text', body });

for (const version of Object.keys(paths.jqueryVersions)) {
  describe(`jquery.laharsub.js with jQuery ${version}`, () => {
    let env;
    let $;
    let network;
    let client;
    let statuses;

    const newClient = (options = {}) => {
      statuses = [];
      client = $.laharsub('http://127.0.0.1:9/ps/', Object.assign({
        retryDelay: 10,
        maxRetryDelay: 40,
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

    test('the poll uses the indexed query form and names from only where the cursor is known', () => {
      const query = $.laharsub._internal.pollQuery([{ topicId: 14, cursor: 43 }, { topicId: 15, cursor: null }], 30);
      assert.equal(decodeURIComponent(query), 'subs[0][topicid]=14&subs[0][from]=43&subs[1][topicid]=15&timeout=30');
      const conflated = $.laharsub._internal.pollQuery([{ topicId: 14, cursor: 43 }], 30, { conflate: 250, latest: true });
      assert.equal(decodeURIComponent(conflated), 'subs[0][topicid]=14&subs[0][from]=43&timeout=30&conflate=250&latest=true');
    });

    test('conflate and latest are checked as the server checks them', () => {
      assert.throws(() => $.laharsub('/ps', { conflate: 60001 }), /conflate is whole milliseconds from 0 \(off\) to 60000/);
      assert.throws(() => $.laharsub('/ps', { conflate: 2.5 }), /conflate is whole milliseconds/);
      assert.throws(() => $.laharsub('/ps', { conflate: -1 }), /conflate must be a number >= 0/);
      assert.throws(() => $.laharsub('/ps', { latest: 'yes' }), /latest must be true or false/);
      $.laharsub('/ps', { conflate: 60000, latest: true }).close();
    });

    test('clientId and member are checked as the server checks them', () => {
      assert.throws(() => $.laharsub('/ps', { clientId: '' }), /clientId is 1 to 64 characters/);
      assert.throws(() => $.laharsub('/ps', { clientId: 'a b' }), /clientId is 1 to 64 characters/);
      assert.throws(() => $.laharsub('/ps', { clientId: 'a'.repeat(65) }), /clientId is 1 to 64 characters/);
      assert.throws(() => $.laharsub('/ps', { member: 'Alice' }), /member must be a plain object/);
      assert.throws(() => $.laharsub('/ps').createTopic({ presence: 'yes' }), /presence must be true or false/);
      assert.throws(() => $.laharsub('/ps').getPresence(1, { limit: 1001 }), /limit is 1 to 1000/);
      assert.throws(() => $.laharsub('/ps').getPresence(1, { after: '' }), /after must be a member id/);
      $.laharsub('/ps', { clientId: 'alice@example.com:tab-1', member: { name: 'Alice' } }).close();
    });

    test('every transport sends clientId and member as the client and member query parameters', async () => {
      const identity = { clientId: 'alice', member: { name: 'Alice' } };
      const stream = new URL($.laharsub._internal.streamUrl('/ps', [{ topicId: 7, cursor: 1 }], null, { client: 'alice', member: '{"name":"Alice"}' }), 'http://x/');
      assert.equal(stream.searchParams.get('client'), 'alice');
      assert.equal(stream.searchParams.get('member'), '{"name":"Alice"}');

      newClient(Object.assign({ transports: ['longpoll'] }, identity));
      client.subscribe(7, { from: 1 });
      const poll = new URL((await network.nextPoll()).url, 'http://x/');
      assert.equal(poll.searchParams.get('client'), 'alice');
      assert.deepEqual(JSON.parse(poll.searchParams.get('member')), { name: 'Alice' });
    });

    test('presenceEvent reads joins and leaves and nothing else', () => {
      same($.laharsub.presenceEvent({ data: { type: 'join', member: 'a', data: { name: 'A' }, occupancy: 1 } }),
        { type: 'join', member: 'a', data: { name: 'A' }, occupancy: 1 });
      same($.laharsub.presenceEvent({ data: { type: 'leave', member: 'a', data: null, occupancy: 0 } }),
        { type: 'leave', member: 'a', data: null, occupancy: 0 });
      assert.equal($.laharsub.presenceEvent({ data: { type: 'occupied', member: 'a', occupancy: 1 } }), null);
      assert.equal($.laharsub.presenceEvent({ data: 'join' }), null);
      assert.equal($.laharsub.presenceEvent({ data: { type: 'join', occupancy: 1 } }), null);
    });

    test('watchPresence applies a join that arrives while the list is read after the list, not under it', async () => {
      newClient({ transports: ['longpoll'] });
      const changes = [];
      const watch = client.watchPresence(7, { onChange: (members, event) => changes.push([Object.keys(members).sort().join(), event && event.type]) });
      (await network.next((r) => r.url.endsWith('/topics/7'))).respond(200, { topicId: 7, epoch: 'e7', lastMessageId: 0, presence: true, presenceTopicId: 8 });
      (await network.next((r) => r.url.endsWith('/topics/8'))).respond(200, { topicId: 8, epoch: 'e8', lastMessageId: 4, presenceOf: 7 });
      const list = await network.next((r) => /\/topics\/7\/presence\?/.test(r.url));
      const poll = await network.nextPoll();
      assert.deepEqual(poll.poll.subs, [[8, 5]]);

      poll.respond(200, { notices: [], messages: [message(8, 5, JSON.stringify({ type: 'join', member: 'bob', data: { name: 'Bob' }, occupancy: 2 }), 'application/json')] });
      await network.nextPoll();
      assert.deepEqual(changes, [], 'nothing is shown before the list is in');
      list.respond(200, { topicId: 7, occupancy: 1, members: [{ member: 'alice', data: { name: 'Alice' } }], next: null });
      await until(() => changes.length === 2, 2000, 'the list and the join');

      assert.deepEqual(changes, [['alice', null], ['alice,bob', 'join']]);
      same(watch.members(), { alice: { name: 'Alice' }, bob: { name: 'Bob' } });
      assert.equal(watch.occupancy(), 2);
      watch.stop();
    });

    test('three subscriptions share one poll, and a fourth replaces it with one naming all four', async () => {
      newClient();
      const received = [];
      for (const id of [1, 2, 3]) {
        client.subscribe(id, { from: 1, onMessage: (m) => received.push([m.topicId, m.messageId]) });
      }
      const first = await network.nextPoll();
      assert.deepEqual(first.poll.subs, [[1, 1], [2, 1], [3, 1]]);
      assert.equal(network.pendingPolls().length, 1);

      first.respond(200, { notices: [], messages: [message(1, 1, 'a'), message(3, 1, 'c')] });
      const second = await network.nextPoll();
      assert.deepEqual(second.poll.subs, [[1, 2], [2, 1], [3, 2]]);

      client.subscribe(4, { from: 5 });
      await until(() => second.aborted, 2000, 'the waiting poll to be aborted');
      const third = await network.nextPoll();
      assert.deepEqual(third.poll.subs, [[1, 2], [2, 1], [3, 2], [4, 5]]);
      assert.equal(network.pendingPolls().length, 1);
      assert.deepEqual(received, [[1, 1], [3, 1]]);
    });

    test('an answer for the old set is not applied after the set changed, so a cursor moved back is honoured', async () => {
      newClient();
      const received = [];
      const onMessage = (m) => received.push(m.messageId);
      let handle = client.subscribe(1, { from: 5, onMessage });
      const old = await network.nextPoll();
      assert.deepEqual(old.poll.subs, [[1, 5]]);

      // The answer arrives, and before jQuery runs its handler the page resubscribes from 2.
      old.respond(200, { notices: [], messages: [message(1, 5, 'e'), message(1, 6, 'f')] });
      handle.unsubscribe();
      handle = client.subscribe(1, { from: 2, onMessage });

      const next = await network.nextPoll();
      assert.deepEqual(next.poll.subs, [[1, 2]]);
      assert.deepEqual(received, []);
      next.respond(200, { notices: [], messages: [2, 3, 4, 5, 6].map((id) => message(1, id, 'x')) });
      await until(() => received.length === 5, 2000, 'the messages from 2 on');
      assert.deepEqual(received, [2, 3, 4, 5, 6]);
      assert.equal(handle.cursor(), 7);
    });

    test('the first poll answers at once and later polls ask for the configured timeout', async () => {
      newClient({ pollTimeout: 25 });
      client.subscribe(1, { from: 1 });
      const probe = await network.nextPoll();
      assert.equal(probe.poll.timeout, 0);
      probe.respond(204);
      const poll = await network.nextPoll();
      assert.equal(poll.poll.timeout, 25);
      assert.ok(statuses.some((s) => s.status === 'connected'));
    });

    test('messages below the cursor are not delivered twice', async () => {
      newClient();
      const ids = [];
      const handle = client.subscribe(7, { from: 3, onMessage: (m) => ids.push(m.messageId) });
      (await network.nextPoll()).respond(200, { messages: [message(7, 3, 'x'), message(7, 4, 'y')] });
      const again = await network.nextPoll();
      assert.deepEqual(again.poll.subs, [[7, 5]]);
      again.respond(200, { messages: [message(7, 4, 'y'), message(7, 5, 'z')] });
      await until(() => ids.length === 3, 2000, 'three deliveries');
      assert.deepEqual(ids, [3, 4, 5]);
      assert.equal(handle.cursor(), 6);
      same(client.cursors(), { 7: 6 });
    });

    test('a gap notice moves the cursor past the gap and reaches onGap before the messages', async () => {
      newClient();
      const events = [];
      client.subscribe(2, {
        from: 1,
        onGap: (n) => events.push(['gap', n.fromMessageId, n.toMessageId]),
        onMessage: (m) => events.push(['message', m.messageId]),
      });
      (await network.nextPoll()).respond(200, {
        notices: [{ type: 'gap', topicId: 2, fromMessageId: 1, toMessageId: 6 }],
        messages: [message(2, 7, 'after the gap')],
      });
      const next = await network.nextPoll();
      assert.deepEqual(events, [['gap', 1, 6], ['message', 7]]);
      assert.deepEqual(next.poll.subs, [[2, 8]]);
    });

    test('a reset notice restarts the cursor at the topic\'s first message', async () => {
      newClient();
      const events = [];
      client.subscribe(2, {
        from: 40,
        onGap: (n) => events.push([n.type, n.requestedFrom, n.firstMessageId]),
        onMessage: (m) => events.push(['message', m.messageId, m.data]),
      });
      (await network.nextPoll()).respond(200, {
        notices: [{ type: 'reset', topicId: 2, requestedFrom: 40, firstMessageId: 1, lastMessageId: 2 }],
        messages: [message(2, 1, 'one'), message(2, 2, 'two')],
      });
      const next = await network.nextPoll();
      assert.deepEqual(events, [['reset', 40, 1], ['message', 1, 'one'], ['message', 2, 'two']]);
      assert.deepEqual(next.poll.subs, [[2, 3]]);
    });

    test('a deleted topic reaches onTopicDeleted and leaves the poll', async () => {
      newClient();
      const deleted = [];
      const handle = client.subscribe(1, { from: 1, onTopicDeleted: (n) => deleted.push(n.topicId) });
      client.subscribe(2, { from: 1 });
      (await network.nextPoll()).respond(200, { notices: [{ type: 'topicDeleted', topicId: 1 }], messages: [] });
      const next = await network.nextPoll();
      assert.deepEqual(deleted, [1]);
      assert.equal(handle.active(), false);
      assert.deepEqual(next.poll.subs, [[2, 1]]);
    });

    test('subscribing without from starts after the topic\'s last message', async () => {
      newClient();
      const handle = client.subscribe(9, {});
      const info = await network.next((r) => r.method === 'GET' && /\/ps\/topics\/9$/.test(r.url));
      info.respond(200, { topicId: 9, lastMessageId: 41, firstRetainedMessageId: 30 });
      await handle.ready;
      const poll = await network.nextPoll();
      assert.deepEqual(poll.poll.subs, [[9, 42]]);
    });

    test('unsubscribe removes only that topic from the poll', async () => {
      newClient();
      const a = client.subscribe(1, { from: 1 });
      client.subscribe(2, { from: 1 });
      const first = await network.nextPoll();
      a.unsubscribe();
      await until(() => first.aborted, 2000, 'the poll to be aborted');
      const next = await network.nextPoll();
      assert.deepEqual(next.poll.subs, [[2, 1]]);
      same(client.topics(), [2]);
    });

    test('network errors and 5xx are retried with growing delays', async () => {
      newClient({ retryDelay: 10, maxRetryDelay: 1000, retryJitter: 0 });
      client.subscribe(1, { from: 1 });
      (await network.nextPoll()).fail();
      (await network.nextPoll()).respond(503, { title: 'Unavailable', status: 503 }, { 'Content-Type': 'application/problem+json' });
      (await network.nextPoll()).respond(500, 'boom', { 'Content-Type': 'text/plain' });
      await until(() => statuses.filter((s) => s.status === 'retrying').length === 3, 2000, 'three retries');
      const delays = statuses.filter((s) => s.status === 'retrying').map((s) => s.info.delay);
      assert.deepEqual(delays, [10, 20, 40]);
      assert.equal((await network.nextPoll()).poll.timeout, 0, 'after a failure the client checks the server with an immediate poll');
    });

    test('Retry-After decides the delay before the next try', async () => {
      newClient({ retryDelay: 10, retryJitter: 0 });
      client.subscribe(1, { from: 1 });
      (await network.nextPoll()).respond(503, { status: 503 }, { 'Content-Type': 'application/problem+json', 'Retry-After': '2' });
      await until(() => statuses.some((s) => s.status === 'retrying'), 2000, 'a retry');
      const retrying = statuses.filter((s) => s.status === 'retrying');
      assert.equal(retrying.length, 1);
      assert.equal(retrying[0].info.delay, 2000);
      assert.equal(retrying[0].info.error.status, 503);
      assert.equal($.laharsub._internal.parseRetryAfter('Sun, 22 Nov 2026 09:30:05 GMT', Date.parse('2026-11-22T09:30:00Z')), 5000);
      assert.equal($.laharsub._internal.parseRetryAfter('soon', 0), null);
    });

    test('backoff doubles up to the cap and jitter only shortens it', () => {
      const settings = { retryDelay: 100, maxRetryDelay: 1000, retryJitter: 0.5 };
      const { backoffDelay } = $.laharsub._internal;
      assert.deepEqual([0, 1, 2, 3, 4, 10].map((a) => backoffDelay(a, settings, 0)), [100, 200, 400, 800, 1000, 1000]);
      assert.equal(backoffDelay(3, settings, 1), 400);
      const jittered = backoffDelay(100, settings, 0.999);
      assert.ok(jittered >= 500 && jittered <= 1000, `${jittered} is within the cap and at least half of it`);
    });

    test('a 404 for one topic reaches that topic\'s onError and the other topics keep polling', async () => {
      newClient();
      const errors = [];
      client.subscribe(1, { from: 1, onError: (e) => errors.push(['one', e]) });
      const missing = client.subscribe(99, { from: 1, onError: (e) => errors.push(['missing', e]) });
      (await network.nextPoll()).respond(404, {
        title: 'Topic not found', status: 404, detail: 'Topic 99 does not exist.', topicId: 99,
      }, { 'Content-Type': 'application/problem+json' });
      const next = await network.nextPoll();
      assert.deepEqual(next.poll.subs, [[1, 1]]);
      assert.equal(errors.length, 1);
      assert.equal(errors[0][0], 'missing');
      assert.equal(errors[0][1].status, 404);
      assert.equal(errors[0][1].problem.detail, 'Topic 99 does not exist.');
      assert.match(errors[0][1].message, /Topic 99 does not exist/);
      assert.equal(missing.active(), false);
      assert.ok(!statuses.some((s) => s.status === 'retrying'), '4xx must not be retried');
    });

    test('another 4xx ends every subscription with the server\'s problem and is not retried', async () => {
      newClient();
      const errors = [];
      client.subscribe(1, { from: 1, onError: (e) => errors.push(e) });
      client.subscribe(2, { from: 1, onError: (e) => errors.push(e) });
      (await network.nextPoll()).respond(400, {
        title: 'One or more validation errors occurred.', status: 400, errors: { timeout: ['too long'] },
      }, { 'Content-Type': 'application/problem+json' });
      await until(() => errors.length === 2, 2000, 'both subscriptions to hear of the error');
      assert.match(errors[0].message, /timeout: too long/);
      await new Promise((r) => setTimeout(r, 30));
      assert.equal(network.pendingPolls().length, 0);
      same(client.topics(), []);
    });

    test('a bare 414 says that the poll names too many topics and what to do', async () => {
      newClient();
      const errors = [];
      client.subscribe(1, { from: 1, onError: (e) => errors.push(e) });
      (await network.nextPoll()).respond(414);
      await until(() => errors.length === 1, 2000, 'the subscription to hear of the error');
      assert.equal(errors[0].status, 414);
      assert.match(errors[0].message, /more topics than fit.*MaxRequestLineSize/);
    });

    test('polls answered at once with 204 again and again back off instead of spinning', async () => {
      newClient({ pollTimeout: 30, retryJitter: 0 });
      client.subscribe(1, { from: 1 });
      (await network.nextPoll()).respond(204); // the probe
      (await network.nextPoll()).respond(204, undefined, { Connection: 'close' });
      await network.nextPoll(); // the first early 204 polls again at once
      assert.ok(!statuses.some((s) => s.status === 'retrying'));
      (await network.nextPoll()).respond(204, undefined, { Connection: 'close' });
      await until(() => statuses.at(-1).status === 'retrying', 2000, 'backing off');
      assert.ok((await network.nextPoll()));
    });

    test('JSON messages are parsed, text kept, and base64 bodies decoded to bytes', () => {
      const { decodeMessage } = $.laharsub._internal;
      same(decodeMessage(message(1, 1, '{"a":[1,"é"]}', 'application/json')).data, { a: [1, 'é'] });
      assert.equal(decodeMessage(message(1, 1, 'plain 🌋')).data, 'plain 🌋');
      const bytes = decodeMessage({ topicId: 1, messageId: 2, contentType: 'image/png', encoding: 'base64', body: 'AAH/' }).data;
      assert.deepEqual(Array.from(bytes), [0, 1, 255]);
    });

    test('publish sends objects as JSON, strings as UTF-8 text, and binary as octets', async () => {
      newClient();
      const sent = client.publish(3, { hello: 'wörld' });
      const request = await network.next((r) => r.method === 'POST');
      assert.equal(request.url, 'http://127.0.0.1:9/ps/topics/3');
      assert.equal(request.contentType, 'application/json');
      assert.equal(request.body, '{"hello":"wörld"}');
      request.respond(201, { topicId: 3, messageId: 1 });
      same(await sent, { topicId: 3, messageId: 1 });

      const { publishBody } = $.laharsub._internal;
      same(publishBody('hi'), { body: 'hi', contentType: 'text/plain; charset=utf-8' });
      assert.equal(publishBody(new Uint8Array([1])).contentType, 'application/octet-stream');
      assert.throws(() => publishBody({ a: 1 }, 'text/plain'), /pass a string or binary data/);
      assert.throws(() => publishBody(''), /non-empty/);
    });

    test('a failed publish rejects with the server\'s problem detail', async () => {
      newClient();
      const sent = client.publish(3, 'x');
      (await network.next((r) => r.method === 'POST')).respond(404,
        { title: 'Topic not found', status: 404, detail: 'Topic 3 does not exist.', topicId: 3 },
        { 'Content-Type': 'application/problem+json' });
      await assert.rejects(sent, (e) => e.status === 404 && e.topicId === 3 && /Topic 3 does not exist/.test(e.message));
    });

    test('bad options are refused with a message that says what to do, and defaults stay untouched', () => {
      const before = JSON.stringify($.laharsub.defaults);
      assert.throws(() => $.laharsub(''), /baseUrl must be the Laharsub API root/);
      assert.throws(() => $.laharsub('/ps', { pollTimout: 5 }), /unknown client option "pollTimout"/);
      assert.throws(() => $.laharsub('/ps', { pollTimeout: 1.5 }), /whole seconds/);
      assert.throws(() => $.laharsub('/ps', { pollTimeout: 0 }), /pollTimeout must be a number >= 1/);
      assert.throws(() => $.laharsub('/ps', { retryJitter: 2 }), /between 0 and 1/);
      assert.throws(() => $.laharsub('/ps', { onError: 'x' }), /onError must be a function/);
      const c = $.laharsub('/ps', { pollTimeout: 5 });
      assert.equal(c.options.pollTimeout, 5);
      assert.equal(JSON.stringify($.laharsub.defaults), before);
      assert.throws(() => c.subscribe(0), /topicId must be a positive integer/);
      assert.throws(() => c.subscribe(1, { form: 3 }), /unknown subscribe option "form"/);
      assert.throws(() => c.subscribe(1, { from: -1 }), /from must be a positive integer/);
      c.subscribe(1, { from: 1 });
      assert.throws(() => c.subscribe('1', { from: 1 }), /already subscribed/);
      c.close();
      assert.throws(() => c.subscribe(2), /closed/);
    });

    test('close aborts the poll and stops everything', async () => {
      newClient();
      client.subscribe(1, { from: 1 });
      const poll = await network.nextPoll();
      client.close();
      assert.ok(poll.aborted);
      assert.equal(statuses.at(-1).status, 'closed');
      await new Promise((r) => setTimeout(r, 20));
      assert.equal(network.pendingPolls().length, 0);
    });
  });
}
