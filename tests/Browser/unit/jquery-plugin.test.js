'use strict';
// Fast tests of $.laharsub, the jQuery plugin over the laharsub module (src/Clients/JQuery/src): real jQuery
// (3.7 and 4) and the built jquery.laharsub.js in a jsdom window, against a scripted loopback server.
// The protocol itself is the module's, tested in js/; here: the plugin's options, Deferreds and callbacks.
const { describe, test, beforeEach, afterEach } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const { JSDOM } = require('jsdom');
const paths = require('../support/paths');
const { scriptedServer, valueQueue, hold } = require('../support/scripted-server');

// Objects made inside the jsdom window have its prototypes: compare their JSON shape.
const same = (actual, expected, message) => assert.deepEqual(JSON.parse(JSON.stringify(actual)), expected, message);

/** jQuery `version` and the plugin in a jsdom window that has node's fetch and streams (jsdom has none). */
function loadPlugin(version) {
  const dom = new JSDOM('<!doctype html><html><body></body></html>', { runScripts: 'outside-only', url: 'http://127.0.0.1:9/' });
  const { window } = dom;
  Object.assign(window, { fetch, Headers, Request, Response, AbortController, AbortSignal, DOMException, TextDecoderStream, WebSocket: undefined });
  window.eval(fs.readFileSync(paths.jqueryVersions[version], 'utf8'));
  window.eval(fs.readFileSync(paths.clientScript, 'utf8'));
  return { $: window.jQuery, close: () => window.close() };
}

const message = (topicId, messageId, body) =>
  ({ topicId, epoch: 'e1', messageId, publishedAt: '2026-11-22T09:30:01.500Z', contentType: 'application/json', encoding: 'text', body: JSON.stringify(body) });

/** Answers each long poll naming `topics` once with `answer`; holds the others. */
function pollScript(answers) {
  return (request) => {
    if (request.path === '/ps/subscriptions') {
      const answer = answers[request.query.get('topics')];
      delete answers[request.query.get('topics')];
      return answer ? { status: 200, body: answer } : hold();
    }
    return null;
  };
}

for (const version of Object.keys(paths.jqueryVersions)) {
  describe(`$.laharsub with jQuery ${version}`, () => {
    let env;
    let $;
    let server;
    let client;

    beforeEach(() => {
      env = loadPlugin(version);
      $ = env.$;
    });

    afterEach(async () => {
      client?.close();
      client = null;
      env.close();
      await server?.close();
      server = null;
    });

    test('options are checked and say what is expected; the defaults are never changed', () => {
      const before = JSON.stringify($.laharsub.defaults);
      assert.throws(() => $.laharsub('/ps', { pollTimout: 5 }), /^Error: \$\.laharsub: unknown client option "pollTimout" \(known: pollTimeout,/);
      assert.throws(() => $.laharsub('/ps', { conflate: 60001 }), /\$\.laharsub: option conflate must be a whole number from 0 to 60000/);
      assert.throws(() => $.laharsub('/ps', { latest: 'yes' }), /\$\.laharsub: option latest must be true or false/);
      assert.throws(() => $.laharsub('/ps', { clientId: 'a b' }), /option clientId is 1 to 64 characters/);
      assert.throws(() => $.laharsub('/ps', { member: 'Alice' }), /option member must be a plain object/);
      assert.throws(() => $.laharsub('/ps', { transports: ['sse', 'sse'] }), /lists "sse" twice/);
      assert.throws(() => $.laharsub('/ps', { onStatus: 'log' }), /option onStatus must be a function/);
      assert.throws(() => $.laharsub('/ps', { ajax: { xhrFields: { withCredentials: true } } }), /option ajax takes \{ headers \} only/);
      assert.throws(() => $.laharsub([]), /baseUrl is an empty array/);
      const lahar = $.laharsub('/ps', { clientId: 'alice', member: { name: 'Alice' }, retryDelay: 10, maxRetryDelay: 20 });
      assert.throws(() => lahar.subscribe(1, { onMesage() {} }), /unknown subscribe option "onMesage"/);
      assert.throws(() => lahar.subscribe(1, { epoch: 'e1' }), /\$\.laharsub: epoch needs from/);
      assert.throws(() => lahar.subscribe(0), /\$\.laharsub: topicId must be a positive integer/);
      assert.throws(() => lahar.publish(1, ''), /publish needs a non-empty message/);
      assert.throws(() => lahar.getPresence(1, { limit: 1001 }), /limit is 1 to 1000/);
      lahar.close();
      assert.throws(() => lahar.subscribe(1), /this client is closed/);
      assert.equal(JSON.stringify($.laharsub.defaults), before);
    });

    test('calls return jQuery promises of the answers; failures carry status and problem, and reach onError with the client as this', async () => {
      server = await scriptedServer((request) => {
        if (request.method === 'POST' && request.path === '/ps/topics') {
          return { status: 201, body: { topicId: 7, epoch: 'e1', label: JSON.parse(request.body).label } };
        }
        if (request.path === '/ps/topics/7') {
          return { status: 200, body: { topicId: 7, messageId: 1, epoch: 'e1' } };
        }
        return { status: 404, headers: { 'Content-Type': 'application/problem+json' }, body: { status: 404, title: 'Not Found', detail: 'Topic 8 does not exist.', topicId: 8 } };
      });
      const errors = [];
      client = $.laharsub(server.api, { ajax: { headers: { 'X-Tenant': 'blue' } }, onError(error) { errors.push([error.status, this === client]); } });
      const heard = [];
      const stop = client.on('error', (error) => heard.push(error.status));
      assert.equal(client.status, 'idle');
      const created = client.createTopic({ label: 'orders-eu' });
      assert.equal(typeof created.done, 'function', 'a jQuery promise');
      same(await created, { topicId: 7, epoch: 'e1', label: 'orders-eu' });
      same(await client.publish(7, 'hi', 'text/plain; charset=utf-8', { idempotencyKey: 'k-1' }), { topicId: 7, messageId: 1, epoch: 'e1' });
      const publish = server.requests.find((r) => r.path === '/ps/topics/7');
      assert.equal(publish.headers['content-type'], 'text/plain; charset=utf-8');
      assert.equal(publish.headers['idempotency-key'], '"k-1"');
      assert.equal(publish.headers['x-tenant'], 'blue', 'ajax.headers go with every request');
      const failure = await new Promise((resolve) => client.getTopic(8).fail(resolve));
      assert.equal(failure.status, 404);
      assert.equal(failure.topicId, 8);
      assert.equal(failure.problem.detail, 'Topic 8 does not exist.');
      assert.match(failure.message, /get topic 8 failed: Topic 8 does not exist\./);
      assert.deepEqual(errors, [[404, true]]);
      assert.deepEqual(heard, [404]);
      stop();
      await new Promise((resolve) => client.getTopic(8).fail(resolve));
      assert.deepEqual(heard, [404], 'a removed listener hears nothing more');
    });

    test('subscribe hands each item to its callback with the handle; a reset goes to onGap without onReset', async () => {
      server = await scriptedServer(pollScript({
        '3:1,4:1': {
          notices: [{ type: 'gap', topicId: 3, epoch: 'e1', fromMessageId: 1, toMessageId: 2 }, { type: 'reset', topicId: 4, epoch: 'e2', reason: 'epochChanged', requestedFrom: 1, firstMessageId: 1, lastMessageId: 1 }],
          messages: [message(3, 3, { n: 3 }), message(4, 1, { n: 1 })]
        }
      }));
      client = $.laharsub(server.api, { transports: ['longpoll'] });
      const seen = valueQueue();
      const record = (name) => function (item, handle) { seen.push([name, item.type, item.topicId, this === handle]); };
      const three = client.subscribe(3, { from: 1, onMessage: record('onMessage'), onGap: record('onGap'), onReset: record('onReset') });
      const four = client.subscribe('4', { from: '1', onMessage: record('onMessage'), onGap: record('onGap') });
      assert.equal(await three.ready, three);
      const items = [];
      for (let i = 0; i < 4; i++) {
        items.push(await seen.next('an item'));
      }
      assert.deepEqual(items.sort(), [
        ['onGap', 'gap', 3, true], ['onGap', 'reset', 4, true], ['onMessage', 'message', 3, true], ['onMessage', 'message', 4, true]
      ].sort());
      assert.equal(three.cursor(), 4);
      assert.equal(four.epoch(), 'e1');
      same(client.topics(), [3, 4]);
      same(client.cursors(), { 3: 4, 4: 2 });
      three.unsubscribe();
      assert.equal(three.active(), false);
      same(client.topics(), [4]);
    });

    test('a topic the server does not know reaches onError and rejects ready; deletion reaches onTopicDeleted', async () => {
      server = await scriptedServer((request) => {
        if (request.path === '/ps/topics/5') {
          return { status: 404, headers: { 'Content-Type': 'application/problem+json' }, body: { status: 404, detail: 'Topic 5 does not exist.', topicId: 5 } };
        }
        if (request.path === '/ps/topics/6') {
          return { status: 200, body: { topicId: 6, epoch: 'e1', lastMessageId: 2 } };
        }
        return pollScript({ '6:3~e1': { notices: [{ type: 'topicDeleted', topicId: 6, epoch: 'e1' }] } })(request);
      });
      client = $.laharsub(server.api, { transports: ['longpoll'] });
      const seen = valueQueue();
      const missing = client.subscribe(5, { onError: (error, handle) => seen.push(['onError', error.status, handle === missing]) });
      const deleted = client.subscribe(6, { onTopicDeleted: (notice, handle) => seen.push(['onTopicDeleted', notice.topicId, handle === deleted]) });
      const rejected = await new Promise((resolve) => missing.ready.fail(resolve));
      assert.equal(rejected.status, 404);
      const got = [await seen.next('the error'), await seen.next('the deletion')];
      assert.deepEqual(got.sort(), [['onError', 404, true], ['onTopicDeleted', 6, true]]);
      assert.equal(deleted.active(), false);
      assert.equal(missing.active(), false);
    });

    test('watchPresence keeps the members as an object, and subscribeState the document of a state topic', async () => {
      server = await scriptedServer((request) => {
        if (request.path === '/ps/topics/10') {
          return { status: 200, body: { topicId: 10, epoch: 'e1', lastMessageId: 0, presence: true, presenceTopicId: 11 } };
        }
        if (request.path === '/ps/topics/11') {
          return { status: 200, body: { topicId: 11, epoch: 'p1', lastMessageId: 4 } };
        }
        if (request.path === '/ps/topics/10/presence') {
          return { status: 200, body: { topicId: 10, occupancy: 1, members: [{ member: 'ann', data: { name: 'Ann' } }], next: null } };
        }
        if (request.method === 'POST' && request.path === '/ps/topics/12') {
          return { status: 200, body: { topicId: 12, messageId: 8, epoch: 's1' } };
        }
        return pollScript({
          '11:5~p1': { messages: [{ ...message(11, 5, { type: 'join', member: 'bob', data: { name: 'Bob' }, occupancy: 2 }), epoch: 'p1' }] },
          '12:state': { notices: [{ type: 'state', topicId: 12, epoch: 's1', version: 6, document: { bid: 1.1, ask: 1.2 } }], messages: [{ ...message(12, 7, { bid: null, last: 1.15 }), epoch: 's1', contentType: 'application/merge-patch+json' }] }
        })(request);
      });
      client = $.laharsub(server.api, { transports: ['longpoll'] });
      const changes = valueQueue();
      const watch = client.watchPresence(10, { onChange(members, event) { changes.push([JSON.parse(JSON.stringify(members)), event && event.member, this === watch]); } });
      assert.deepEqual(await changes.next('the member list'), [{ ann: { name: 'Ann' } }, null, true]);
      assert.equal(await watch.ready, watch);
      assert.deepEqual(await changes.next('the join'), [{ ann: { name: 'Ann' }, bob: { name: 'Bob' } }, 'bob', true]);
      assert.equal(watch.occupancy(), 2);
      watch.stop();

      const states = valueQueue();
      const state = client.subscribeState(12, { onState(document, info) { states.push([JSON.parse(JSON.stringify(document)), info.version, this === state]); } });
      assert.deepEqual(await states.next('the snapshot'), [{ bid: 1.1, ask: 1.2 }, 6, true]);
      assert.deepEqual(await states.next('the patched document'), [{ ask: 1.2, last: 1.15 }, 7, true]);
      assert.equal(await state.ready, state);
      same(state.document(), { ask: 1.2, last: 1.15 });
      assert.equal(state.version(), 7);
      same(await state.patch({ ask: 1.21 }, { ifCurrent: true }), { topicId: 12, messageId: 8, epoch: 's1' });
      const patch = server.requests.find((r) => r.method === 'POST' && r.path === '/ps/topics/12');
      assert.equal(patch.headers['content-type'], 'application/merge-patch+json');
      assert.equal(patch.headers['if-match'], '"s1:7"');
      assert.throws(() => state.patch([1]), /\$\.laharsub: a merge patch must be a JSON object/);
    });
  });
}
