'use strict';
// The client's transports in jsdom with scripted WebSocket and EventSource (support/fake-network.js):
// the order they are tried in, when the client moves on to the next, the frames and events it reads and
// sends, and that each message reaches the page once whatever the transport.
const { describe, test, beforeEach, afterEach } = require('node:test');
const assert = require('node:assert/strict');
const { loadClient, until } = require('../support/fake-network');
const paths = require('../support/paths');

// Objects made inside the jsdom window have its prototypes: compare their JSON shape.
const same = (actual, expected, message) => assert.deepEqual(JSON.parse(JSON.stringify(actual)), expected, message);
const message = (topicId, messageId, body, epoch = 'e1') =>
  ({ topicId, epoch, messageId, publishedAt: '2026-11-22T09:30:01.500Z', contentType: 'text/plain', encoding: 'text', body });
const problem = { 'Content-Type': 'application/problem+json' };
const tick = (ms = 20) => new Promise((r) => setTimeout(r, ms));

for (const version of Object.keys(paths.jqueryVersions)) {
  describe(`transports of jquery.laharsub.js with jQuery ${version}`, () => {
    let env;
    let $;
    let network;
    let streams;
    let client;
    let statuses;
    let transports;
    let errors;

    const newClient = (options = {}, baseUrl = 'http://127.0.0.1:9/ps') => {
      statuses = [];
      transports = [];
      errors = [];
      client = $.laharsub(baseUrl, Object.assign({
        retryDelay: 10,
        maxRetryDelay: 40,
        retryJitter: 0,
        onStatus: (status, info) => statuses.push({ status, info }),
        onTransport: (transport, info) => transports.push([transport, JSON.parse(JSON.stringify(info))]),
        onError: (error) => errors.push(error),
      }, options));
      return client;
    };

    /** Socket #index, accepted by the server, which then reports the URL's topics subscribed. */
    const openSocket = async (index = 0) => {
      const socket = await streams.socket(index);
      socket.accept();
      socket.receive({
        type: 'subscribed',
        topics: socket.query.topics.map(([topicId, from, epoch]) => ({ topicId, from, epoch: epoch || 'e' + topicId })),
      });
      return socket;
    };

    const openSource = async (index = 0) => {
      const source = await streams.source(index);
      const topics = source.query.topics.map(([topicId, from, epoch]) => ({ topicId, from, epoch: epoch || 'e' + topicId }));
      source.emit('subscribed', { topics }, topics.map((t) => `${t.topicId}:${t.from}~${t.epoch}`).join(','));
      return source;
    };

    beforeEach(() => {
      env = loadClient(version, { streams: true });
      $ = env.$;
      network = env.network;
      streams = env.streams;
    });

    afterEach(() => {
      client?.close();
      env.close();
    });

    test('by default one WebSocket carries every topic, and each message reaches the page once, in order', async () => {
      newClient();
      const received = [];
      const onMessage = (m) => received.push([m.topicId, m.messageId, m.data]);
      client.subscribe(1, { from: 1, onMessage });
      client.subscribe(2, { from: 5, epoch: 'e2', onMessage });
      const socket = await streams.socket(0);
      assert.equal(socket.protocol, 'laharsub.v1');
      assert.match(socket.url, /^ws:\/\/127\.0\.0\.1:9\/ps\/subscriptions\?topics=/);
      assert.deepEqual(socket.query.topics, [[1, 1, null], [2, 5, 'e2']]);
      assert.equal(socket.query.token, null);
      assert.equal(client.transport, null, 'not in use before the server says it is subscribed');

      socket.accept();
      assert.equal(client.transport, null);
      socket.receive({ type: 'subscribed', topics: [{ topicId: 1, epoch: 'e1', from: 1 }, { topicId: 2, epoch: 'e2', from: 5 }] });
      assert.equal(client.transport, 'websocket');
      assert.deepEqual(transports, [['websocket', { previous: null, skipped: [], baseUrl: 'http://127.0.0.1:9/ps' }]]);
      assert.equal(statuses.at(-1).status, 'connected');

      socket.receive({ type: 'message', message: message(1, 1, 'a') });
      socket.receive({ type: 'message', message: message(2, 5, 'b', 'e2') });
      socket.receive({ type: 'message', message: message(1, 2, 'c') });
      socket.receive({ type: 'message', message: message(1, 2, 'c') });
      socket.receive({ type: 'message', message: message(7, 1, 'not subscribed') });
      assert.deepEqual(received, [[1, 1, 'a'], [2, 5, 'b'], [1, 2, 'c']]);
      same(client.cursors(), { 1: 3, 2: 6 });
      same(client.epochs(), { 1: 'e1', 2: 'e2' });
      assert.equal(network.requests.length, 0, 'no HTTP request at all');
    });

    test('subscribing and unsubscribing on an open socket are frames, and deliveries from before a frame is answered are not applied', async () => {
      newClient();
      const received = [];
      const onMessage = (m) => received.push([m.topicId, m.messageId]);
      const first = client.subscribe(1, { from: 5, onMessage });
      const socket = await openSocket(0);
      socket.receive({ type: 'message', message: message(1, 5, 'x') });
      socket.receive({ type: 'message', message: message(1, 6, 'x') });

      const two = client.subscribe(2, { from: 1, onMessage });
      await until(() => socket.sent.length === 1, 2000, 'the subscribe frame');
      same(socket.sent[0], { type: 'subscribe', topics: '2:1', id: 'c1' });
      // Topic 1 again from 2, in one burst: the socket re-positions it.
      first.unsubscribe();
      client.subscribe(1, { from: 2, onMessage });
      await until(() => socket.sent.length === 2, 2000, 'the re-positioning frame');
      same(socket.sent[1], { type: 'subscribe', topics: '1:2', id: 'c2' });

      // What the server sent before it applied the frames: topic 1 from the old position, topic 2 early.
      socket.receive({ type: 'message', message: message(1, 7, 'old position') });
      socket.receive({ type: 'message', message: message(2, 1, 'early') });
      socket.receive({ type: 'subscribed', id: 'c1', topics: [{ topicId: 1, epoch: 'e1', from: 7 }, { topicId: 2, epoch: 'e2', from: 1 }] });
      socket.receive({ type: 'message', message: message(2, 1, 'y', 'e2') });
      socket.receive({ type: 'message', message: message(1, 7, 'still the old position') });
      socket.receive({ type: 'subscribed', id: 'c2', topics: [{ topicId: 1, epoch: 'e1', from: 2 }, { topicId: 2, epoch: 'e2', from: 2 }] });
      for (const id of [2, 3, 4, 5, 6, 7]) {
        socket.receive({ type: 'message', message: message(1, id, 'again') });
      }
      assert.deepEqual(received, [[1, 5], [1, 6], [2, 1], [1, 2], [1, 3], [1, 4], [1, 5], [1, 6], [1, 7]]);

      // Unsubscribing sends one frame; the topic's deliveries stop at once.
      two.unsubscribe();
      await until(() => socket.sent.length === 3, 2000, 'the unsubscribe frame');
      same(socket.sent[2], { type: 'unsubscribe', topics: '2', id: 'c3' });
      socket.receive({ type: 'message', message: message(2, 2, 'gone') });
      assert.deepEqual(received.at(-1), [1, 7]);
      assert.equal(socket.closedByClient, null);
    });

    test('a WebSocket that closes before it is subscribed is checked with one poll, and then Server-Sent Events are used', async () => {
      newClient();
      const received = [];
      client.subscribe(1, {
        from: 3,
        epoch: 'e1',
        onMessage: (m) => received.push(['message', m.messageId, m.data]),
        onGap: (n) => received.push(['gap', n.fromMessageId, n.toMessageId]),
      });
      const socket = await streams.socket(0);
      // A proxy that refuses the upgrade: the page only sees close code 1006.
      socket.serverClose(1006);
      const check = await network.nextPoll();
      same(check.poll, { subs: [[1, 3]], epochs: ['e1'], timeout: 0, compact: true });
      check.respond(204);

      const source = await streams.source(0);
      assert.match(source.url, /^http:\/\/127\.0\.0\.1:9\/ps\/subscriptions\?topics=1:3~e1$/);
      source.headers();
      assert.equal(client.transport, null, 'the browser\'s own open event (headers) does not count');
      source.emit('subscribed', { topics: [{ topicId: 1, epoch: 'e1', from: 3 }] }, '1:3~e1');
      assert.equal(client.transport, 'sse');
      assert.deepEqual(transports, [['sse', { previous: null, skipped: ['websocket'], baseUrl: 'http://127.0.0.1:9/ps' }]]);

      source.emit('message', message(1, 3, 'x'), '1:4~e1');
      source.emit('notice', { type: 'gap', topicId: 1, epoch: 'e1', fromMessageId: 4, toMessageId: 5 }, '1:6~e1');
      source.emit('message', message(1, 6, 'y'), '1:7~e1');
      source.emit('message', message(1, 6, 'y'), '1:7~e1');
      assert.deepEqual(received, [['message', 3, 'x'], ['gap', 4, 5], ['message', 6, 'y']]);
      same(client.cursors(), { 1: 7 });
      assert.equal(statuses.at(-1).status, 'connected');
    });

    test('an event stream that does not open in sseOpenTimeout (a buffering proxy) is given up for the long poll', async () => {
      newClient({ sseOpenTimeout: 30 });
      const received = [];
      client.subscribe(1, { from: 1, onMessage: (m) => received.push([m.messageId, m.data]) });
      (await streams.socket(0)).serverClose(1006);
      (await network.nextPoll()).respond(204);
      const source = await streams.source(0);
      // The proxy passes the headers on and holds the events back.
      source.headers();
      const check = await network.nextPoll();
      assert.equal(source.readyState, 2, 'the held-back stream is closed');
      assert.equal(check.poll.timeout, 0);
      check.respond(200, { messages: [message(1, 1, 'read by the check')] });

      const poll = await network.nextPoll();
      assert.equal(poll.poll.compact, undefined, 'the long poll uses the indexed form');
      assert.deepEqual(poll.poll.subs, [[1, 2]]);
      poll.respond(200, { messages: [message(1, 2, 'polled')] });
      await until(() => received.length === 2, 2000, 'the polled message');
      assert.deepEqual(received, [[1, 'read by the check'], [2, 'polled']]);
      assert.equal(client.transport, 'longpoll');
      assert.deepEqual(transports.map(([t, info]) => [t, info.skipped]), [['longpoll', ['websocket', 'sse']]]);
      assert.equal(streams.sockets.length, 1);
      assert.equal(streams.sources.length, 1);
    });

    test('when no transport of the list opens although the server answers, onError says to allow the long poll, and all are tried again', async () => {
      newClient({ transports: ['websocket', 'sse'], sseOpenTimeout: 20 });
      client.subscribe(1, { from: 1 });
      (await streams.socket(0)).serverClose(1006);
      (await network.nextPoll()).respond(204);
      await streams.source(0);
      (await network.nextPoll()).respond(204);
      await until(() => errors.length === 1, 2000, 'the error');
      assert.match(errors[0].message, /none of the transports websocket, sse could be opened.*add 'longpoll'/);
      assert.equal(statuses.at(-1).status, 'retrying');
      await streams.socket(1);
    });

    test('a stream whose check answers 404 for one topic drops that topic and opens the same transport for the others', async () => {
      newClient();
      const topicErrors = [];
      client.subscribe(1, { from: 1 });
      client.subscribe(99, { from: 1, onError: (e) => topicErrors.push(e) });
      (await streams.socket(0)).serverClose(1006);
      (await network.nextPoll()).respond(404, { status: 404, title: 'Topic not found', detail: 'Topic 99 does not exist.', topicId: 99 }, problem);
      const again = await streams.socket(1);
      assert.deepEqual(again.query.topics, [[1, 1, null]]);
      assert.equal(topicErrors.length, 1);
      assert.equal(topicErrors[0].status, 404);
      assert.match(topicErrors[0].message, /Topic 99 does not exist/);
      await openSocket(1);
      assert.equal(client.transport, 'websocket');
      same(client.topics(), [1]);
    });

    test('a stream whose token is refused is opened again with a fresh token from the accessToken function', async () => {
      let calls = 0;
      newClient({ accessToken: () => ['old', 'new'][Math.min(calls++, 1)] });
      client.subscribe(1, { from: 1 });
      const first = await streams.socket(0);
      assert.equal(first.query.token, 'old');
      first.serverClose(1006);
      const check = await network.nextPoll();
      assert.equal(check.headers.Authorization, 'Bearer old', 'the check carries the stream\'s own token');
      check.respond(401, { status: 401, title: 'Token refused', detail: 'The token expired.' },
        Object.assign({ 'WWW-Authenticate': 'Bearer error="invalid_token"' }, problem));
      const second = await streams.socket(1);
      assert.equal(second.query.token, 'new');
      await openSocket(1);
      assert.equal(client.transport, 'websocket');
      assert.deepEqual(errors, []);
    });

    test('a check that gets no answer backs off, and the next try starts with the WebSocket again', async () => {
      newClient();
      client.subscribe(1, { from: 1 });
      (await streams.socket(0)).serverClose(1006);
      (await network.nextPoll()).fail();
      await until(() => statuses.some((s) => s.status === 'retrying'), 2000, 'retrying');
      await streams.socket(1);
      assert.equal(streams.sources.length, 0);
    });

    test('a socket that is cut resumes from the cursors at the next instance', async () => {
      newClient({}, ['http://a.test/ps', 'http://b.test/ps']);
      const received = [];
      client.subscribe(1, { from: 1, onMessage: (m) => received.push(m.messageId) });
      const onA = await openSocket(0);
      assert.match(onA.url, /^ws:\/\/a\.test\/ps\//);
      onA.receive({ type: 'message', message: message(1, 1, 'x') });
      onA.receive({ type: 'message', message: message(1, 2, 'y') });
      onA.serverClose(1006);
      const onB = await openSocket(1);
      assert.match(onB.url, /^ws:\/\/b\.test\/ps\//);
      assert.deepEqual(onB.query.topics, [[1, 3, 'e1']]);
      onB.receive({ type: 'message', message: message(1, 2, 'y') });
      onB.receive({ type: 'message', message: message(1, 3, 'z') });
      assert.deepEqual(received, [1, 2, 3]);
      assert.deepEqual(statuses.filter((s) => s.status === 'retrying').map((s) => [s.info.delay, s.info.baseUrl]), [[0, 'http://b.test/ps']]);
      assert.equal(client.baseUrl, 'http://b.test/ps');
      assert.equal(network.requests.length, 0, 'a socket that was open is simply opened again');
    });

    test('close codes: 1001 reconnects after a delay, 4008 at once, 4001 with a fresh token, 4000 reports an error', async () => {
      let calls = 0;
      newClient({ accessToken: () => 'token' + (++calls) });
      const received = [];
      client.subscribe(1, { from: 1, onMessage: (m) => received.push(m.messageId) });
      let socket = await openSocket(0);
      socket.receive({ type: 'message', message: message(1, 1, 'x') });

      socket.serverClose(1001, 'The server is stopping: reconnect (another instance answers) and resume from your cursors.');
      await until(() => statuses.at(-1).status === 'retrying', 2000, 'retrying');
      assert.equal(statuses.at(-1).info.delay, 10);
      socket = await openSocket(1);
      assert.deepEqual(socket.query.topics, [[1, 2, 'e1']]);

      socket.serverClose(4008, 'Too slow');
      socket = await openSocket(2);
      assert.equal(statuses.at(-1).status, 'connected');

      socket.serverClose(4001, 'The token expired.');
      socket = await streams.socket(3);
      assert.equal(socket.query.token, 'token4');
      socket = await openSocket(3);

      socket.serverClose(4000, 'A frame is one JSON object');
      await until(() => errors.length === 1, 2000, 'the error');
      assert.match(errors[0].message, /refusing a frame.*4000: A frame is one JSON object/);
      socket = await openSocket(4);
      socket.receive({ type: 'message', message: message(1, 2, 'y') });
      assert.deepEqual(received, [1, 2]);
      assert.equal(network.requests.length, 0);
    });

    test('publish goes over the open socket: answered `published` resolves, `problem` rejects, a closed socket rejects', async () => {
      // Without keys: what a socket publish does on its own (keyed ones are repeated over REST, below).
      newClient({ idempotentPublishes: false });
      client.subscribe(1, { from: 1 });
      const socket = await openSocket(0);
      const text = client.publish(1, 'hi');
      const json = client.publish(1, { a: 'é' });
      const binary = client.publish(1, new env.window.Uint8Array([0, 1, 255]));
      same(socket.sent, [
        { type: 'publish', topicId: 1, contentType: 'text/plain; charset=utf-8', encoding: 'text', body: 'hi', id: 'c1' },
        { type: 'publish', topicId: 1, contentType: 'application/json', encoding: 'text', body: '{"a":"é"}', id: 'c2' },
        { type: 'publish', topicId: 1, contentType: 'application/octet-stream', encoding: 'base64', body: 'AAH/', id: 'c3' },
      ]);
      socket.receive({ type: 'published', id: 'c1', topicId: 1, messageId: 7, epoch: 'e1' });
      same(await text, { topicId: 1, messageId: 7, epoch: 'e1' });
      socket.receive({ type: 'problem', id: 'c2', problem: { status: 413, title: 'Message too large', detail: 'Messages may be at most 5 bytes.' } });
      await assert.rejects(Promise.resolve(json), (e) => e.status === 413 && e.problem.title === 'Message too large' && /publish to topic 1 failed: Messages may be at most 5 bytes/.test(e.message));
      socket.serverClose(1006);
      await assert.rejects(Promise.resolve(binary), (e) => e.status === 0 && /may have been stored/.test(e.message));
      assert.equal(network.requests.filter((r) => r.method === 'POST').length, 0);
    });

    test('keyed socket publishes: the frame carries the key, publishMany names its topics, an unknown outcome goes again over REST with the same key', async () => {
      newClient({ requestTimeout: 200 });
      client.subscribe(1, { from: 1 });
      const socket = await openSocket(0);
      const one = client.publish(1, 'hi', null, { idempotencyKey: 'k-1' });
      const many = client.publishMany([2, 1], 'both', null, { epochs: { 1: 'e1' }, idempotencyKey: 'k-2' });
      const lost = client.publishMany([1, 2], 'lost', null, { idempotencyKey: 'k-3' });
      const late = client.publish(1, 'late');
      same(socket.sent.slice(0, 3), [
        { type: 'publish', topicId: 1, contentType: 'text/plain; charset=utf-8', idempotencyKey: 'k-1', encoding: 'text', body: 'hi', id: 'c1' },
        { type: 'publish', topics: '2,1~e1', contentType: 'text/plain; charset=utf-8', idempotencyKey: 'k-2', encoding: 'text', body: 'both', id: 'c2' },
        { type: 'publish', topics: '1,2', contentType: 'text/plain; charset=utf-8', idempotencyKey: 'k-3', encoding: 'text', body: 'lost', id: 'c3' },
      ]);
      assert.match(socket.sent[3].idempotencyKey, /^[0-9a-f-]{32,36}$/, 'a key of its own while idempotentPublishes is on');
      socket.receive({ type: 'published', id: 'c1', topicId: 1, messageId: 7, epoch: 'e1' });
      socket.receive({ type: 'published', id: 'c2', messages: [{ topicId: 2, messageId: 3, epoch: 'e2' }, { topicId: 1, messageId: 8, epoch: 'e1' }] });
      same(await one, { topicId: 1, messageId: 7, epoch: 'e1' });
      same(await many, [{ topicId: 2, messageId: 3, epoch: 'e2' }, { topicId: 1, messageId: 8, epoch: 'e1' }]);

      // No answer within requestTimeout: the same key over REST, whose answer is what was stored.
      const lateRetry = await network.next((r) => r.method === 'POST' && /\/topics\/1$/.test(r.url), 2000);
      assert.equal(lateRetry.headers['Idempotency-Key'], '"' + socket.sent[3].idempotencyKey + '"');
      lateRetry.respond(201, { topicId: 1, messageId: 9, epoch: 'e1' });
      same(await late, { topicId: 1, messageId: 9, epoch: 'e1' });
      // The socket closes before answering c3: the same key over REST, as REST's publish to several topics.
      socket.serverClose(1006);
      const lostRetry = await network.next((r) => r.method === 'POST' && /\/topics\/publish\?topics=1,2$/.test(r.url), 2000);
      assert.equal(lostRetry.headers['Idempotency-Key'], '"k-3"');
      lostRetry.respond(201, { messages: [{ topicId: 1, messageId: 10, epoch: 'e1' }, { topicId: 2, messageId: 4, epoch: 'e2' }] });
      same(await lost, [{ topicId: 1, messageId: 10, epoch: 'e1' }, { topicId: 2, messageId: 4, epoch: 'e2' }]);
      assert.equal(errors.filter((e) => /publish/.test(e.message)).length, 0, 'a repeated publish reports no error');
    });

    test('publish goes over REST when no socket is open, and for a Blob', async () => {
      newClient();
      const rest = client.publish(1, 'no socket yet');
      (await network.next((r) => r.method === 'POST')).respond(201, { topicId: 1, messageId: 1, epoch: 'e1' });
      same(await rest, { topicId: 1, messageId: 1, epoch: 'e1' });
      client.subscribe(1, { from: 1 });
      const socket = await openSocket(0);
      const blob = client.publish(1, new env.window.Blob(['bytes']));
      (await network.next((r) => r.method === 'POST')).respond(201, { topicId: 1, messageId: 2, epoch: 'e1' });
      same(await blob, { topicId: 1, messageId: 2, epoch: 'e1' });
      assert.equal(socket.sent.length, 0);
    });

    test('the socket\'s problems: a topic of its URL that does not exist, a subscribe frame refused 403', async () => {
      newClient();
      const topicErrors = [];
      client.subscribe(1, { from: 1 });
      client.subscribe(99, { from: 1, onError: (e) => topicErrors.push(e) });
      const socket = await streams.socket(0);
      socket.accept();
      socket.receive({ type: 'problem', problem: { status: 404, title: 'Topic not found', detail: 'Topic 99 does not exist.', topicId: 99 } });
      socket.receive({ type: 'subscribed', topics: [{ topicId: 1, epoch: 'e1', from: 1 }] });
      assert.equal(client.transport, 'websocket');
      same(client.topics(), [1]);
      assert.equal(topicErrors[0].status, 404);

      client.subscribe(5, { from: 1, onError: (e) => topicErrors.push(e) });
      await until(() => socket.sent.length === 1, 2000, 'the subscribe frame');
      socket.receive({ type: 'problem', id: 'c1', problem: { status: 403, title: 'Forbidden', detail: 'The token does not allow \'subscribe\' on topic 5.', topicId: 5 } });
      assert.equal(topicErrors.length, 2);
      assert.equal(topicErrors[1].status, 403);
      assert.match(topicErrors[1].message, /subscribe to topic 5 failed: The token does not allow 'subscribe' on topic 5/);
      same(client.topics(), [1]);
      await tick();
      assert.equal(socket.sent.length, 1, 'nothing to unsubscribe: the server never took topic 5');
    });

    test('a socket without subscriptions stays open for publishes', async () => {
      newClient();
      const handle = client.subscribe(1, { from: 1 });
      const socket = await openSocket(0);
      handle.unsubscribe();
      await until(() => socket.sent.length === 1, 2000, 'the unsubscribe frame');
      same(socket.sent[0], { type: 'unsubscribe', topics: '1', id: 'c1' });
      assert.equal(statuses.at(-1).status, 'idle');
      client.publish(1, 'still');
      assert.equal(socket.sent[1].type, 'publish');
      client.subscribe(2, { from: 4 });
      await until(() => socket.sent.length === 3, 2000, 'the subscribe frame');
      same(socket.sent[2], { type: 'subscribe', topics: '2:4', id: 'c3' });
      assert.equal(statuses.at(-1).status, 'connected');
      client.close();
      assert.equal(socket.closedByClient, 1000);
    });

    test('an event stream is opened again with the cursors when the topics change, and follows reconnect events', async () => {
      let calls = 0;
      newClient({ transports: ['sse'], accessToken: () => 't' + (++calls) });
      const received = [];
      const onMessage = (m) => received.push([m.topicId, m.messageId]);
      client.subscribe(1, { from: 1, onMessage });
      client.subscribe(2, { from: 1, onMessage, onTopicDeleted: (n) => received.push(['deleted', n.topicId]) });
      const first = await streams.source(0);
      assert.deepEqual(first.query, { topics: [[1, 1, null], [2, 1, null]], token: 't1' });
      first.emit('subscribed', { topics: [{ topicId: 1, epoch: 'e1', from: 1 }, { topicId: 2, epoch: 'e2', from: 1 }] }, '1:1~e1,2:1~e2');
      first.emit('message', message(1, 1, 'a'), '1:2~e1,2:1~e2');
      first.emit('notice', { type: 'topicDeleted', topicId: 2, epoch: 'e2' }, '1:2~e1');
      await tick();
      assert.equal(streams.sources.length, 1, 'a deleted topic leaves the stream by itself');

      first.emit('reconnect', { reason: 'tokenExpired', detail: 'Reconnect with a fresh token.' });
      const second = await streams.source(1);
      assert.equal(first.readyState, 2);
      assert.deepEqual(second.query, { topics: [[1, 2, 'e1']], token: 't2' });
      second.emit('subscribed', { topics: [{ topicId: 1, epoch: 'e1', from: 2 }] }, '1:2~e1');

      client.subscribe(3, { from: 4, onMessage });
      const third = await streams.source(2);
      assert.equal(second.readyState, 2);
      assert.deepEqual(third.query.topics, [[1, 2, 'e1'], [3, 4, null]]);
      third.emit('subscribed', { topics: [{ topicId: 1, epoch: 'e1', from: 2 }, { topicId: 3, epoch: 'e3', from: 4 }] }, '1:2~e1,3:4~e3');
      third.emit('message', message(3, 4, 'c', 'e3'), '1:2~e1,3:5~e3');

      third.emit('reconnect', { reason: 'stopping', detail: 'The server is stopping.' });
      await until(() => statuses.at(-1).status === 'retrying', 2000, 'retrying');
      const fourth = await streams.source(3);
      assert.deepEqual(fourth.query.topics, [[1, 2, 'e1'], [3, 5, 'e3']]);
      fourth.emit('subscribed', { topics: [] }, '');
      assert.deepEqual(received, [[1, 1], ['deleted', 2], [3, 4]]);
      assert.equal(client.transport, 'sse');
      assert.equal(network.requests.length, 0);
    });

    test('an event stream that fails after it opened resumes from the cursors', async () => {
      newClient({ transports: ['sse', 'longpoll'] });
      const received = [];
      client.subscribe(1, { from: 1, onMessage: (m) => received.push(m.messageId) });
      const first = await openSource(0);
      first.emit('message', message(1, 1, 'a'), '1:2~e1');
      first.fail();
      const second = await streams.source(1);
      assert.deepEqual(second.query.topics, [[1, 2, 'e1']]);
      assert.equal(network.requests.length, 0);
      second.emit('subscribed', { topics: [{ topicId: 1, epoch: 'e1', from: 2 }] }, '1:2~e1');
      second.emit('message', message(1, 2, 'b'), '1:3~e1');
      assert.deepEqual(received, [1, 2]);
    });

    test('transports the browser lacks are passed over, and the option is checked', async () => {
      env.window.EventSource = undefined;
      newClient({ transports: ['sse', 'longpoll'] });
      client.subscribe(1, { from: 1 });
      const poll = await network.nextPoll();
      assert.equal(poll.poll.compact, undefined);
      assert.equal(streams.sources.length, 0);

      same($.laharsub.defaults.transports, ['websocket', 'sse', 'longpoll']);
      assert.throws(() => $.laharsub('/ps', { transports: [] }), /transports must be a non-empty array/);
      assert.throws(() => $.laharsub('/ps', { transports: 'sse' }), /transports must be a non-empty array/);
      assert.throws(() => $.laharsub('/ps', { transports: ['pigeon'] }), /names "pigeon": the transports are/);
      assert.throws(() => $.laharsub('/ps', { transports: ['sse', 'sse'] }), /lists "sse" twice/);
      assert.throws(() => $.laharsub('/ps', { sseOpenTimeout: 0 }), /sseOpenTimeout must be a number >= 1/);
      assert.throws(() => $.laharsub('/ps', { onTransport: 1 }), /onTransport must be a function/);
      const list = ['longpoll'];
      const own = $.laharsub('/ps', { transports: list });
      list.push('sse');
      same(own.options.transports, ['longpoll']);
      own.close();
    });

    test('stream URLs: compact topics, the token as access_token, ws: and wss: from the page\'s base', () => {
      const { streamUrl, compactTopics, socketUrl } = $.laharsub._internal;
      assert.equal(socketUrl('/ps/subscriptions?topics=1'), 'ws://127.0.0.1:9/ps/subscriptions?topics=1');
      assert.equal(socketUrl('https://x.test/ps/subscriptions?topics=1'), 'wss://x.test/ps/subscriptions?topics=1');
      assert.equal(compactTopics([{ topicId: 14, cursor: 43, epoch: '9f3c' }, { topicId: 15, cursor: 8, epoch: null }]), '14:43~9f3c,15:8');
      assert.equal(streamUrl('/ps', [{ topicId: 1, cursor: 2, epoch: 'e' }], 'a b+c'), '/ps/subscriptions?topics=1:2~e&access_token=a%20b%2Bc');
      assert.equal(streamUrl('/ps', [{ topicId: 1, cursor: 2 }], 't', { conflate: 250, latest: true }), '/ps/subscriptions?topics=1:2&conflate=250&latest=true&access_token=t');
      assert.equal(streamUrl('/ps', [], null, { conflate: 250 }), '/ps/subscriptions?conflate=250');
      assert.equal(streamUrl('/ps', [], null, {}), '/ps/subscriptions');
    });
  });
}
