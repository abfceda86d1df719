'use strict';
// Ten native EventSources on one page, one origin (issue 21). Over HTTPS with HTTP/2, configured as the
// README's "HTTP/2 and TLS in production" says, all ten run at once on one connection. Over HTTP/1.1
// (a second endpoint of the same server, Protocols=Http1) Chromium opens at most six connections per
// host: six streams run and four wait in the browser, each let through only when a running one closes.
const { describe, test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { startServer, freePort, api } = require('../support/server');
const { createSelfSignedCertificate } = require('../support/certificate');
const { launchBrowser, newPage, eventually } = require('../support/browser');

const streamCount = 10;
// Chromium's limit of HTTP/1.1 connections per scheme, host and port.
const http1ConnectionsPerHost = 6;

/**
 * A page at `origin` (the server's own /health, so the streams are same-origin and the page's load went
 * over the protocol under test too) that opens one EventSource per topic, each from message 1 so that a
 * stream let through late still reads what was published while it waited. The browser's record of each
 * stream's response (protocol and connection) comes from the DevTools protocol.
 */
async function openStreamsPage(browser, origin, topicIds) {
  const page = await newPage(browser);
  const responses = [];
  const devtools = await page.context().newCDPSession(page);
  devtools.on('Network.responseReceived', ({ type, response }) => {
    if (type === 'EventSource') {
      responses.push({ url: response.url, protocol: response.protocol, connectionId: response.connectionId });
    }
  });
  await devtools.send('Network.enable');
  await page.goto(`${origin}/health`);
  await page.evaluate((ids) => {
    window.streams = ids.map((topicId) => {
      const stream = { topicId, opened: false, received: [], errors: 0, source: new EventSource(`/ps/subscriptions?topics=${topicId}:1`) };
      // The server's first event, 'subscribed', says the stream started.
      stream.source.addEventListener('subscribed', () => { stream.opened = true; });
      stream.source.onmessage = (event) => stream.received.push(JSON.parse(event.data).body);
      stream.source.onerror = () => { stream.errors++; };
      return stream;
    });
  }, topicIds);
  return { page, responses };
}

/** Each stream's state in the page: readyState 0 connecting, 1 open, 2 closed. */
const streamsOf = (page) => page.evaluate(() => window.streams.map((s) => ({
  topicId: s.topicId, readyState: s.source.readyState, opened: s.opened, received: s.received, errors: s.errors,
})));

/** The server's view: the topics that have a stream (or poll) waiting on them. */
async function topicsWaitedOn(server, topicIds) {
  const topics = await Promise.all(topicIds.map((id) => api(server, 'GET', `/topics/${id}`)));
  return topics.filter((topic) => topic.waitingPolls > 0).map((topic) => topic.topicId);
}

async function createTopics(server) {
  const ids = [];
  for (let i = 0; i < streamCount; i++) {
    ids.push((await api(server, 'POST', '/topics')).topicId);
  }
  return ids;
}

const count = (streams, predicate) => streams.filter(predicate).length;
const sameSet = (a, b) => JSON.stringify([...a].sort((x, y) => x - y)) === JSON.stringify([...b].sort((x, y) => x - y));

describe('ten native EventSource streams on one origin', () => {
  let certificate;
  let server;
  let browser;
  let h2Origin;
  let http1Origin;

  before(async () => {
    certificate = createSelfSignedCertificate();
    const h2Port = await freePort();
    let http1Port;
    do {
      http1Port = await freePort();
    } while (http1Port === h2Port);
    h2Origin = `https://127.0.0.1:${h2Port}`;
    http1Origin = `https://127.0.0.1:${http1Port}`;
    // The README's PEM pair; the HTTP/2 endpoint leaves Protocols at its default (HTTP/1.1 and HTTP/2 by ALPN).
    const pem = { 'Certificate:Path': certificate.certPath, 'Certificate:KeyPath': certificate.keyPath };
    [server, browser] = await Promise.all([
      startServer({ endpoints: { H2: { Url: h2Origin, ...pem }, Http1: { Url: http1Origin, Protocols: 'Http1', ...pem } } }),
      launchBrowser({ args: [`--ignore-certificate-errors-spki-list=${certificate.spkiHash}`] }),
    ]);
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    certificate?.remove();
  });

  test('over HTTP/2 all ten streams open at once on one connection and each receives its message', async () => {
    const topicIds = await createTopics(server);
    const { page, responses } = await openStreamsPage(browser, h2Origin, topicIds);

    await eventually(async () => count(await streamsOf(page), (s) => s.opened) === streamCount, 'all ten streams to open');
    await eventually(async () => sameSet(await topicsWaitedOn(server, topicIds), topicIds), 'the server to hold all ten streams');
    for (const [i, id] of topicIds.entries()) {
      await api(server, 'POST', `/topics/${id}`, `to stream ${i}`);
    }
    await eventually(async () => count(await streamsOf(page), (s) => s.received.length === 1) === streamCount, 'all ten streams to receive their message');

    assert.deepEqual((await streamsOf(page)).map((s) => [s.readyState, s.received, s.errors]),
      topicIds.map((_, i) => [1, [`to stream ${i}`], 0]));
    await eventually(() => responses.length === streamCount, 'the browser to record ten stream responses');
    assert.deepEqual([...new Set(responses.map((r) => r.protocol))], ['h2'], JSON.stringify(responses));
    assert.equal(new Set(responses.map((r) => r.connectionId)).size, 1, JSON.stringify(responses));
    assert.equal(await page.evaluate(() => performance.getEntriesByType('navigation')[0].nextHopProtocol), 'h2');
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });

  test('over HTTP/1.1 six streams open and four wait in the browser, each let through when an open one closes', async () => {
    const topicIds = await createTopics(server);
    const { page, responses } = await openStreamsPage(browser, http1Origin, topicIds);

    await eventually(async () => count(await streamsOf(page), (s) => s.opened) === http1ConnectionsPerHost, 'six streams to open');
    const opened = (await streamsOf(page)).filter((s) => s.opened).map((s) => s.topicId);
    // The server holds exactly the six streams the page has open; the other four never reached it.
    await eventually(async () => sameSet(await topicsWaitedOn(server, topicIds), opened), 'the server to hold the six open streams');
    for (const [i, id] of topicIds.entries()) {
      await api(server, 'POST', `/topics/${id}`, `to stream ${i}`);
    }
    await eventually(async () => count(await streamsOf(page), (s) => s.received.length === 1) === http1ConnectionsPerHost,
      'the six open streams to receive their message');

    // Every topic has its message now, and a stream that had reached the server would have read it from
    // message 1: the four without it are still connecting, held back by the browser, not failed.
    const stalled = await streamsOf(page);
    assert.deepEqual(stalled.filter((s) => s.received.length === 1).map((s) => s.topicId), opened);
    assert.deepEqual(stalled.filter((s) => !s.opened).map((s) => [s.readyState, s.received, s.errors]),
      Array(streamCount - http1ConnectionsPerHost).fill([0, [], 0]));
    assert.deepEqual(await topicsWaitedOn(server, topicIds), opened);
    await eventually(() => responses.length === http1ConnectionsPerHost, 'the browser to record six stream responses');
    assert.equal(new Set(responses.map((r) => r.connectionId)).size, http1ConnectionsPerHost, JSON.stringify(responses));

    // Closing an open stream frees its connection, and one waiting stream takes it.
    for (let closed = 1; closed <= streamCount - http1ConnectionsPerHost; closed++) {
      await page.evaluate(() => window.streams.find((s) => s.source.readyState === 1).source.close());
      await eventually(async () => {
        const streams = await streamsOf(page);
        return count(streams, (s) => s.received.length === 1) === http1ConnectionsPerHost + closed
          && count(streams, (s) => s.readyState === 0) === streamCount - http1ConnectionsPerHost - closed;
      }, `a waiting stream to open and receive its message after ${closed} closed`);
      const open = (await streamsOf(page)).filter((s) => s.readyState === 1).map((s) => s.topicId);
      assert.equal(open.length, http1ConnectionsPerHost);
      await eventually(async () => sameSet(await topicsWaitedOn(server, topicIds), open), `the server to hold the six open streams after ${closed} closed`);
    }

    assert.deepEqual((await streamsOf(page)).map((s) => [s.received, s.errors]), topicIds.map((_, i) => [[`to stream ${i}`], 0]));
    await eventually(() => responses.length === streamCount, 'the browser to record ten stream responses');
    assert.deepEqual([...new Set(responses.map((r) => r.protocol))], ['http/1.1'], JSON.stringify(responses));
    assert.equal(await page.evaluate(() => performance.getEntriesByType('navigation')[0].nextHopProtocol), 'http/1.1');
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });
});
