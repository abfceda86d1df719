'use strict';
// The jQuery client's side of topic epochs, against a scripted network: what it sends, what it makes
// of what the server says.
const { describe, test, beforeEach, afterEach } = require('node:test');
const assert = require('node:assert/strict');
const { loadClient, until } = require('../support/fake-network');
const paths = require('../support/paths');

const same = (actual, expected, message) => assert.deepEqual(JSON.parse(JSON.stringify(actual)), expected, message);
const message = (topicId, messageId, body, epoch) => Object.assign(
  { topicId, messageId, publishedAt: '2026-11-22T09:30:01.500Z', contentType: 'text/plain; charset=utf-8', encoding: 'text', body },
  epoch === undefined ? {} : { epoch });

for (const version of Object.keys(paths.jqueryVersions)) {
  describe(`epochs in jquery.laharsub.js with jQuery ${version}`, () => {
    let env;
    let $;
    let network;
    let client;

    const newClient = (options = {}) => {
      client = $.laharsub('http://127.0.0.1:9/ps/', Object.assign({ retryDelay: 10, maxRetryDelay: 40 }, options));
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

    test('the indexed query names the epoch next to the cursor, and only where both are known', () => {
      const query = $.laharsub._internal.pollQuery([
        { topicId: 14, cursor: 43, epoch: '9f3c0a1b2c3d4e5f' },
        { topicId: 15, cursor: 2, epoch: null },
        { topicId: 16, cursor: null, epoch: null },
      ], 30);
      assert.equal(decodeURIComponent(query),
        'subs[0][topicid]=14&subs[0][from]=43&subs[0][epoch]=9f3c0a1b2c3d4e5f&subs[1][topicid]=15&subs[1][from]=2&subs[2][topicid]=16&timeout=30');
    });

    test('a subscription learns its topic\'s epoch from the answer and sends it from the next poll on', async () => {
      newClient();
      const handle = client.subscribe(14, { from: 1 });
      client.subscribe(15, { from: 3 });
      const first = await network.nextPoll();
      first.respond(200, { notices: [], messages: [message(14, 1, 'one', 'k3f9')] });
      const second = await network.nextPoll();

      assert.deepEqual(first.poll.epochs, [null, null]);
      assert.deepEqual(second.poll.subs, [[14, 2], [15, 3]]);
      assert.deepEqual(second.poll.epochs, ['k3f9', null]);
      assert.equal(handle.epoch(), 'k3f9');
      same(client.epochs(), { 14: 'k3f9', 15: null });
    });

    test('a saved cursor and epoch resume the subscription with both', async () => {
      newClient();
      const handle = client.subscribe(14, { from: 43, epoch: 'k3f9' });
      const poll = await network.nextPoll();
      assert.deepEqual(poll.poll.subs, [[14, 43]]);
      assert.deepEqual(poll.poll.epochs, ['k3f9']);
      assert.equal(handle.epoch(), 'k3f9');
    });

    test('subscribing without from takes the cursor and the epoch from the topic info', async () => {
      newClient();
      const handle = client.subscribe(9, {});
      const info = await network.next((r) => r.method === 'GET' && /\/ps\/topics\/9$/.test(r.url));
      info.respond(200, { topicId: 9, epoch: 'abc-_9', lastMessageId: 41, firstRetainedMessageId: 30 });
      await handle.ready;
      const poll = await network.nextPoll();
      assert.deepEqual(poll.poll.subs, [[9, 42]]);
      assert.deepEqual(poll.poll.epochs, ['abc-_9']);
    });

    test('a reset to another epoch reaches onReset saying so, and the subscription goes on in the new incarnation', async () => {
      newClient();
      const events = [];
      const handle = client.subscribe(2, {
        from: 6,
        epoch: 'old',
        onReset: (n) => events.push(['reset', n.epochChanged, n.epoch, n.requestedEpoch, n.requestedFrom, n.firstMessageId]),
        onGap: (n) => events.push(['gap', n.type]),
        onMessage: (m) => events.push(['message', m.messageId, m.epoch]),
      });
      (await network.nextPoll()).respond(200, {
        notices: [{ type: 'reset', topicId: 2, epoch: 'new', reason: 'epochChanged', requestedFrom: 6, requestedEpoch: 'old', firstMessageId: 1, lastMessageId: 2 }],
        messages: [message(2, 1, 'one', 'new'), message(2, 2, 'two', 'new')],
      });
      const next = await network.nextPoll();

      assert.deepEqual(events, [['reset', true, 'new', 'old', 6, 1], ['message', 1, 'new'], ['message', 2, 'new']]);
      assert.deepEqual(next.poll.subs, [[2, 3]]);
      assert.deepEqual(next.poll.epochs, ['new']);
      assert.equal(handle.epoch(), 'new');
    });

    test('without onReset a reset still reaches onGap, and one beyond the end is not an epoch change', async () => {
      newClient();
      const notices = [];
      client.subscribe(2, { from: 40, onGap: (n) => notices.push(n) });
      (await network.nextPoll()).respond(200, {
        notices: [{ type: 'reset', topicId: 2, epoch: 'e1', reason: 'beyondEnd', requestedFrom: 40, firstMessageId: 1, lastMessageId: 0 }],
        messages: [],
      });
      const next = await network.nextPoll();
      assert.equal(notices.length, 1);
      assert.equal(notices[0].type, 'reset');
      assert.equal(notices[0].epochChanged, false);
      assert.deepEqual(next.poll.epochs, ['e1']);
    });

    test('without epochs from the server the query and the cursors stay as before', async () => {
      newClient();
      const handle = client.subscribe(7, { from: 3 });
      const first = await network.nextPoll();
      first.respond(200, { notices: [{ type: 'gap', topicId: 7, fromMessageId: 3, toMessageId: 4 }], messages: [message(7, 5, 'x')] });
      const next = await network.nextPoll();
      assert.ok(!/epoch/.test(decodeURIComponent(first.url)) && !/epoch/.test(decodeURIComponent(next.url)), next.url);
      assert.deepEqual(next.poll.subs, [[7, 6]]);
      assert.equal(handle.epoch(), null);
    });

    test('an epoch that is not one is refused at subscribe and ignored in an answer', async () => {
      newClient();
      assert.throws(() => client.subscribe(1, { from: 1, epoch: 'a&b' }), /epoch must be the topic's epoch/);
      assert.throws(() => client.subscribe(1, { from: 1, epoch: 'x'.repeat(33) }), /epoch must be the topic's epoch/);
      assert.throws(() => client.subscribe(1, { epoch: 'abc' }), /epoch needs from/);
      assert.throws(() => client.subscribe(1, { from: 1, onReset: 'x' }), /onReset must be a function/);
      const handle = client.subscribe(1, { from: 1 });
      (await network.nextPoll()).respond(200, { messages: [message(1, 1, 'x', 'not valid!')] });
      const next = await network.nextPoll();
      assert.deepEqual(next.poll.epochs, [null]);
      assert.equal(handle.epoch(), null);
    });
  });
}
