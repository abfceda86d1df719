'use strict';
// Topic labels from a page: created with one, read back, found by pattern across pages, and the
// server's refusal of a bad one, against the real server.
const { describe, test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { startServer } = require('../support/server');
const { launchBrowser, newPage, openHarness } = require('../support/browser');

const versions = ['3.7.1', '4.0.0'];

describe('labels from jquery.laharsub.js in a real browser', () => {
  let server;
  let browser;

  before(async () => {
    [server, browser] = await Promise.all([startServer(), launchBrowser()]);
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  for (const version of versions) {
    test(`with jQuery ${version} a topic created with a label shows it when created, read and listed by pattern`, async () => {
      const page = await newPage(browser);
      await openHarness(page, { origin: server.url, scriptBase: '/demo', api: '/ps', version });
      const prefix = `room${version.replace(/\./g, '')}`;

      const result = await page.evaluate(async (prefix) => {
        const created = [];
        for (let i = 0; i < 3; i++) {
          created.push(await Promise.resolve(window.client.createTopic({ label: `${prefix}-${i}` })));
          await Promise.resolve(window.client.createTopic());
        }
        const info = await Promise.resolve(window.client.getTopic(created[0].topicId));
        const first = await Promise.resolve(window.client.listTopics({ label: `${prefix}-*`, limit: 2 }));
        const second = await Promise.resolve(window.client.listTopics({ label: `${prefix}-*`, limit: 2, after: first.next }));
        return { created, info, first, second };
      }, prefix);

      assert.deepEqual(result.created.map((t) => t.label), [`${prefix}-0`, `${prefix}-1`, `${prefix}-2`]);
      assert.ok(result.created[0].epoch, 'a created topic still has its epoch');
      assert.equal(result.info.label, `${prefix}-0`);
      assert.deepEqual(result.first.topics.map((t) => t.topicId), result.created.slice(0, 2).map((t) => t.topicId));
      assert.equal(result.first.next, result.created[1].topicId);
      assert.deepEqual(result.second.topics.map((t) => t.label), [`${prefix}-2`]);
      assert.equal(result.second.next, undefined);
      await page.context().close();
    });
  }

  test('a label the server refuses rejects with its 400 naming label', async () => {
    const page = await newPage(browser);
    await openHarness(page, { origin: server.url, scriptBase: '/demo', api: '/ps', version: '4.0.0' });

    const refusal = await page.evaluate(() => new Promise((resolve) => {
      window.client.createTopic({ label: '9lives' }).then(
        () => resolve({ status: 'created' }),
        (error) => resolve({ status: error.status, fields: Object.keys((error.problem && error.problem.errors) || {}) }));
    }));

    assert.deepEqual(refusal, { status: 400, fields: ['label'] });
    await page.context().close();
  });
});
