'use strict';
// State topics through the jQuery plugin (subscribeState over the laharsub module) in headless Chromium
// against the real server, on each transport: the document kept through patches from outside, the page's
// own compare-and-set (and a stale one refused), a replace, and a network cut longer than retention
// recovered from the server's state notice, exact.
const { describe, test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { startServer, api } = require('../support/server');
const { startForwarder } = require('../support/forwarder');
const { launchBrowser, newPage, openHarness, serveHarness, eventually } = require('../support/browser');

const patch = (server, id, body) => api(server, 'POST', `/topics/${id}`, body, 'application/merge-patch+json');

describe('state topics through $.laharsub', () => {
  let server;
  let browser;
  const closing = [];

  before(async () => {
    // Three messages retained per topic: a cut of five patches leaves the page's cursor behind retention.
    [server, browser] = await Promise.all([startServer({ settings: { MaxMessagesPerTopic: 3 } }), launchBrowser()]);
  });

  after(async () => {
    for (const each of closing) {
      await each.close();
    }
    await browser?.close();
    await server?.stop();
  });

  for (const transport of ['websocket', 'sse', 'longpoll']) {
    test(`${transport}: subscribeState keeps the document through patches, a compare-and-set and a replace, and after a cut longer than retention`, async () => {
      const topic = await api(server, 'POST', '/topics', { state: true });
      assert.equal(topic.state, true, 'the server creates state topics (issue 36): this build has none');
      const id = topic.topicId;
      await api(server, 'PUT', `/topics/${id}/state`, { a: 1, b: { c: 2 } });
      const forwarder = await startForwarder(server.port);
      const harness = { scriptBase: `${server.url}/demo`, api: forwarder.api, version: '4.0.0', options: { transports: [transport] } };
      const served = await serveHarness(harness);
      closing.push(served, forwarder);
      const page = await newPage(browser);
      await openHarness(page, { origin: served.origin, served: true, ...harness });

      await page.evaluate((topicId) => new Promise((resolve, reject) => {
        window.documents = [];
        window.state = window.client.subscribeState(topicId, {
          onState(document, info) { window.documents.push({ document, version: info.version, self: this === window.state }); },
          onError(error) { window.documents.push({ error: error.message }); }
        });
        window.state.ready.then(() => resolve(true), (error) => reject(new Error(error.message)));
      }), id);
      const last = () => page.evaluate(() => window.documents.at(-1));
      assert.deepEqual(await last(), { document: { a: 1, b: { c: 2 } }, version: 1, self: true });

      await patch(server, id, { b: { c: null, d: 3 } });
      await eventually(async () => (await last()).version === 2, 'the patch from outside');
      assert.deepEqual((await last()).document, { a: 1, b: { d: 3 } });

      const writes = await page.evaluate(async (topicId) => {
        const settle = (call) => new Promise((resolve) => call.then((answer) => resolve({ messageId: answer.messageId }),
          (error) => resolve({ status: error.status, version: error.problem && error.problem.version })));
        const current = await settle(window.state.patch({ e: true }, { ifCurrent: true }));
        const stale = await settle(window.client.publishPatch(topicId, { x: 1 }, { ifEpoch: window.state.epoch(), ifVersion: 1 }));
        return { current, stale };
      }, id);
      assert.deepEqual(writes, { current: { messageId: 3 }, stale: { status: 412, version: 3 } });
      await eventually(async () => (await last()).version === 3, 'the page\'s own patch');
      assert.deepEqual((await last()).document, { a: 1, b: { d: 3 }, e: true });

      // Cut while five patches are published: the page's cursor (4) falls behind retention (6..8).
      forwarder.cut();
      await eventually(() => page.evaluate(() => window.statuses.includes('retrying')), 'the page to notice the cut');
      for (let n = 1; n <= 5; n++) {
        await patch(server, id, { n, [`k${n}`]: n });
      }
      forwarder.restore();
      await eventually(async () => (await last()).version === 8, 'the document after the cut');
      assert.deepEqual((await last()).document, await api(server, 'GET', `/topics/${id}/state`));

      await page.evaluate(() => new Promise((resolve, reject) => window.state.replace({ z: 0 }).then(resolve, (e) => reject(new Error(e.message)))));
      await eventually(async () => (await last()).version === 9, 'the replace');
      assert.deepEqual((await last()).document, { z: 0 });
      assert.deepEqual(await page.evaluate(() => window.documents.filter((d) => d.error || !d.self)), []);
      assert.deepEqual(page.errors, []);
      await page.context().close();
    });
  }
});
