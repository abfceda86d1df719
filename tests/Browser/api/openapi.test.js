'use strict';
// The standalone server's OpenAPI document, checked by independent tools: swagger-parser validates it
// against the OpenAPI 3.1 specification, and ajv checks real answers of the same server against its
// schemas, so that the document cannot drift from what the server does.
const { describe, test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const SwaggerParser = require('@apidevtools/swagger-parser');
const Ajv2020 = require('ajv/dist/2020').default;
const { startServer, api } = require('../support/server');

describe('the OpenAPI document', () => {
  let server;
  let document;
  let ajv;

  before(async () => {
    // Rate limiting on (generously) so that the document describes its 429 answers too.
    server = await startServer({ settings: { 'RateLimit:RequestsPerPeriod': 10000, MaxPollTimeout: '00:01:30' } });
    const response = await fetch(`${server.url}/openapi/v1.json`, { signal: AbortSignal.timeout(10000) });
    assert.equal(response.status, 200);
    document = await response.json();
    ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
    ajv.addSchema(document, 'openapi');
  });

  after(async () => {
    await server?.stop();
  });

  /** Fails with ajv's errors unless `value` matches the document's component schema `name`. */
  function assertMatches(name, value) {
    const validate = ajv.getSchema(`openapi#/components/schemas/${name}`);
    assert.ok(validate, `the document has no schema ${name}`);
    assert.ok(validate(value), `${JSON.stringify(value)} does not match ${name}: ${JSON.stringify(validate.errors)}`);
  }

  /** The operation the document lists for `method` on the path template `template` (e.g. /ps/topics/{topicId}). */
  function operation(method, template) {
    const found = document.paths[template]?.[method.toLowerCase()];
    assert.ok(found, `the document has no ${method} ${template}`);
    return found;
  }

  /** Asserts that the document lists `status` (and `contentType`, when given) for the operation. */
  function assertDocumented(method, template, status, contentType) {
    const response = operation(method, template).responses[String(status)];
    assert.ok(response, `${method} ${template} answered ${status}, which the document does not list`);
    if (contentType) {
      assert.ok(Object.keys(response.content ?? {}).includes(contentType),
        `${method} ${template} ${status} answered ${contentType}; the document lists ${Object.keys(response.content ?? {})}`);
    }
  }

  async function exchange(method, path, template, { body, headers = {}, contentType } = {}) {
    const response = await fetch(server.api + path, { method, body, headers: contentType ? { ...headers, 'Content-Type': contentType } : headers, signal: AbortSignal.timeout(10000) });
    const type = (response.headers.get('content-type') ?? '').split(';')[0];
    // A HEAD answer carries the GET's Content-Type but no body, and declares none.
    assertDocumented(method, template, response.status, method === 'HEAD' ? undefined : type || undefined);
    return { status: response.status, type, response, text: await response.text() };
  }

  test('is valid OpenAPI 3.1 according to swagger-parser', async () => {
    await SwaggerParser.validate(structuredClone(document));
    assert.match(document.openapi, /^3\.1\./);
  });

  test('describes every operation with an id, a summary, and the 429 and 503 answers with Retry-After', () => {
    const operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, op]) => ({ key: `${method.toUpperCase()} ${path}`, op })));
    assert.deepEqual(operations.map((o) => `${o.key} ${o.op.operationId}`).sort(), [
      'DELETE /ps/topics/{topicId} deleteTopic',
      'GET /ps/subscriptions poll',
      'GET /ps/topics listTopics',
      'GET /ps/topics/{topicId} getTopic',
      'GET /ps/topics/{topicId}/presence getPresence',
      'GET /ps/topics/{topicId}/state getState',
      'HEAD /ps/topics headTopics',
      'HEAD /ps/topics/{topicId} headTopic',
      'HEAD /ps/topics/{topicId}/state headState',
      'POST /ps/topics createTopic',
      'POST /ps/topics/publish publishMany',
      'POST /ps/topics/{topicId} publish',
      'PUT /ps/topics/{topicId}/state putState',
    ]);
    for (const { key, op } of operations) {
      assert.ok(op.summary, `${key} has no summary`);
      for (const status of ['429', '503']) {
        assert.ok(op.responses[status]?.headers?.['Retry-After'], `${key} does not describe ${status} with Retry-After`);
      }
      assert.equal(op.security, undefined, `${key} asks for a token in Open mode`);
    }
    assert.equal(document.components.securitySchemes, undefined);
  });

  test('describes the poll\'s query parameters, the publish body and If-Match, and both poll formats', () => {
    const poll = operation('GET', '/ps/subscriptions');
    const parameters = Object.fromEntries(poll.parameters.map((p) => [p.name, p]));
    assert.deepEqual(Object.keys(parameters).sort(), ['client', 'conflate', 'latest', 'member', 'subs', 'timeout', 'topics']);
    assert.deepEqual([parameters.conflate.schema.minimum, parameters.conflate.schema.maximum, parameters.latest.schema.type], [0, 60000, 'boolean']);
    // The indexed form as OpenAPI defines it: an exploded form object whose property names are the query's keys.
    // (form and explode are a query parameter's defaults, which the document may leave out.)
    assert.deepEqual([parameters.subs.style ?? 'form', parameters.subs.explode ?? true, parameters.subs.schema.type], ['form', true, 'object']);
    assert.match('subs[12][topicid]', new RegExp(parameters.subs.schema.propertyNames.pattern));
    assert.doesNotMatch('subs[0][other]', new RegExp(parameters.subs.schema.propertyNames.pattern));
    assert.equal(parameters.timeout.schema.maximum, 90, 'the configured Laharsub:MaxPollTimeout');
    assert.deepEqual(Object.keys(poll.responses['200'].content).sort(), ['application/json', 'multipart/mixed', 'text/event-stream']);
    assert.equal(poll.responses['200'].content['application/json'].schema.$ref, '#/components/schemas/PollAnswer');

    const publish = operation('POST', '/ps/topics/{topicId}');
    assert.ok(publish.parameters.some((p) => p.name === 'If-Match' && p.in === 'header'));
    assert.ok(publish.requestBody.required);
    // Real media types, so that generators send one; the description says any concrete type is accepted.
    // JSON first: generators that take one media type per operation (NSwag) take the first.
    assert.deepEqual(Object.keys(publish.requestBody.content), ['application/json', 'application/merge-patch+json', 'text/plain', 'application/octet-stream']);

    // A state topic's document: replaced by a JSON object, with the compare-and-set of If-Match.
    const putState = operation('PUT', '/ps/topics/{topicId}/state');
    assert.deepEqual(Object.keys(putState.requestBody.content), ['application/json']);
    assert.ok(putState.parameters.some((p) => p.name === 'If-Match' && p.in === 'header'));
    assert.ok(putState.responses['200'].headers.ETag);
    assert.ok(operation('GET', '/ps/topics/{topicId}/state').responses['304']);

    // Creating a topic: an optional body of a named schema with both of its properties.
    const create = operation('POST', '/ps/topics');
    assert.notEqual(create.requestBody.required, true);
    assert.equal(create.requestBody.content['application/json'].schema.$ref, '#/components/schemas/NewTopic');
    assert.deepEqual(Object.keys(document.components.schemas.NewTopic.properties).sort(), ['label', 'presence', 'state']);
    assert.equal(document.components.schemas.NewTopic.properties.presence.type, 'boolean');
    assert.equal(document.components.schemas.NewTopic.properties.state.type, 'boolean');

    // The member list: typed paging, and the full page as the answer (members optional: the occupancy-only answer).
    const presence = operation('GET', '/ps/topics/{topicId}/presence');
    const paging = Object.fromEntries(presence.parameters.map((p) => [p.name, p.schema]));
    assert.deepEqual([paging.after.type, paging.limit.type, paging.limit.minimum, paging.limit.maximum], ['string', 'integer', 1, 1000]);
    assert.equal(presence.responses['200'].content['application/json'].schema.$ref, '#/components/schemas/PresenceResource');
    assert.deepEqual([...document.components.schemas.PresenceResource.required].sort(), ['occupancy', 'topicId']);

    // A problem's detail is the message of the exceptions Kiota generates for it.
    for (const name of ['ProblemDetails', 'HttpValidationProblemDetails']) {
      assert.equal(document.components.schemas[name].properties.detail['x-ms-primary-error-message'], true, name);
    }
    assert.match(publish.requestBody.description, /Any concrete media type is accepted/);

    // The publish to several topics: its topics list, and Idempotency-Key on both publishes.
    const many = operation('POST', '/ps/topics/publish');
    const topics = many.parameters.find((p) => p.name === 'topics');
    assert.ok(topics && topics.in === 'query' && topics.required);
    assert.match('14,15~9f3c0a1b2c3d4e5f,16', new RegExp(topics.schema.pattern));
    assert.doesNotMatch('14,x', new RegExp(topics.schema.pattern));
    for (const op of [publish, many]) {
      assert.ok(op.parameters.some((p) => p.name === 'Idempotency-Key' && p.in === 'header'));
      for (const status of ['201', '409', '422']) {
        assert.ok(op.responses[status], `a publish declares ${status}`);
      }
    }
    assert.equal(many.responses['201'].content['application/json'].schema.$ref, '#/components/schemas/PublishedMessages');
  });

  test('declares no body for any answer of a HEAD operation, nor for the quiet poll\'s 204', () => {
    for (const template of ['/ps/topics', '/ps/topics/{topicId}']) {
      const head = operation('HEAD', template);
      for (const [status, response] of Object.entries(head.responses)) {
        assert.equal(response.content, undefined, `HEAD ${template} ${status} declares a body`);
      }
      assert.ok(head.responses['200'], `HEAD ${template} declares its 200`);
    }
    const quiet = operation('GET', '/ps/subscriptions').responses['204'];
    assert.ok(quiet, 'the poll declares its 204');
    assert.equal(quiet.content, undefined, 'the 204 declares a body');
  });

  test('real answers have documented statuses and content types and match the schemas', async () => {
    const created = await exchange('POST', '/topics', '/ps/topics', { body: JSON.stringify({ label: 'orders-eu' }), contentType: 'application/json' });
    assert.equal(created.status, 201);
    assertMatches('CreatedTopic', JSON.parse(created.text));
    const { topicId, epoch } = JSON.parse(created.text);

    const published = await exchange('POST', `/topics/${topicId}`, '/ps/topics/{topicId}', { body: 'hello', contentType: 'text/plain' });
    assert.equal(published.status, 201);
    assertMatches('PublishedMessage', JSON.parse(published.text));
    await api(server, 'POST', `/topics/${topicId}`, new Uint8Array([0, 255, 7]), 'application/octet-stream');

    const info = await exchange('GET', `/topics/${topicId}`, '/ps/topics/{topicId}');
    assertMatches('TopicInfo', JSON.parse(info.text));
    const page = await exchange('GET', '/topics?after=0&limit=1&label=orders-*', '/ps/topics');
    assertMatches('TopicPage', JSON.parse(page.text));
    const lastPage = await exchange('GET', `/topics?after=${topicId}`, '/ps/topics');
    assertMatches('TopicPage', JSON.parse(lastPage.text));

    // Text and base64 messages, and a reset notice (the cursor is beyond the end).
    const answer = await exchange('GET', `/subscriptions?topics=${topicId}:1`, '/ps/subscriptions');
    assert.equal(answer.status, 200);
    assertMatches('PollAnswer', JSON.parse(answer.text));
    assert.deepEqual(JSON.parse(answer.text).messages.map((m) => m.encoding), ['text', 'base64']);
    const reset = await exchange('GET', `/subscriptions?subs[0][topicid]=${topicId}&subs[0][from]=10`, '/ps/subscriptions');
    assertMatches('PollAnswer', JSON.parse(reset.text));
    assert.equal(JSON.parse(reset.text).notices[0].type, 'reset');
    const multipart = await exchange('GET', `/subscriptions?topics=${topicId}:1`, '/ps/subscriptions', { headers: { Accept: 'multipart/mixed' } });
    assert.equal(multipart.type, 'multipart/mixed');
    const timedOut = await exchange('GET', `/subscriptions?topics=${topicId}&timeout=0`, '/ps/subscriptions');
    assert.equal(timedOut.status, 204);

    // Problems: validation, unknown topic, wrong epoch, not acceptable, too many topics for this server.
    const invalid = await exchange('GET', '/subscriptions?topics=abc', '/ps/subscriptions');
    assert.equal(invalid.status, 400);
    assertMatches('HttpValidationProblemDetails', JSON.parse(invalid.text));
    const missing = await exchange('GET', '/topics/999999', '/ps/topics/{topicId}');
    assert.equal(missing.status, 404);
    assertMatches('ProblemDetails', JSON.parse(missing.text));
    const stale = await exchange('POST', `/topics/${topicId}`, '/ps/topics/{topicId}', { body: 'x', contentType: 'text/plain', headers: { 'If-Match': '"0000000000000000"' } });
    assert.equal(stale.status, 412);
    assertMatches('ProblemDetails', JSON.parse(stale.text));
    assert.equal(JSON.parse(stale.text).epoch, epoch);
    const refused = await exchange('GET', `/subscriptions?topics=${topicId}`, '/ps/subscriptions', { headers: { Accept: 'text/html' } });
    assert.equal(refused.status, 406);
    const tooBig = await exchange('POST', `/topics/${topicId}`, '/ps/topics/{topicId}', { body: new Uint8Array(300 * 1024), contentType: 'application/octet-stream' });
    assert.equal(tooBig.status, 413);
    const deleted = await exchange('DELETE', `/topics/${topicId}`, '/ps/topics/{topicId}');
    assert.equal(deleted.status, 204);
    const gone = await exchange('DELETE', `/topics/${topicId}`, '/ps/topics/{topicId}');
    assert.equal(gone.status, 404);
    const head = await exchange('HEAD', `/topics/${topicId}`, '/ps/topics/{topicId}');
    assert.equal(head.status, 404);
  });
});

describe('the OpenAPI document in Jwt mode', () => {
  let server;

  before(async () => {
    server = await startServer({ settings: {
      'Auth:Mode': 'Jwt', 'Auth:Jwt:SigningKey': 'a-test-signing-key-of-at-least-32-bytes!', 'Auth:Jwt:Issuer': 'tests', 'Auth:Jwt:Audience': 'laharsub',
    } });
  });

  after(async () => {
    await server?.stop();
  });

  test('is valid, requires the bearer scheme on every operation and describes 401 and 403', async () => {
    const document = await (await fetch(`${server.url}/openapi/v1.json`, { signal: AbortSignal.timeout(10000) })).json();
    await SwaggerParser.validate(structuredClone(document));

    assert.deepEqual(document.components.securitySchemes.Bearer, {
      type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: document.components.securitySchemes.Bearer.description,
    });
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, op] of Object.entries(item)) {
        assert.deepEqual(op.security, [{ Bearer: [] }], `${method} ${path}`);
        assert.ok(op.responses['401']?.headers?.['WWW-Authenticate'], `${method} ${path} does not describe 401`);
        assert.ok(op.responses['403'], `${method} ${path} does not describe 403`);
      }
    }
    const refused = await fetch(`${server.api}/topics`, { method: 'POST', signal: AbortSignal.timeout(10000) });
    assert.equal(refused.status, 401);
    assert.equal(refused.headers.get('content-type').split(';')[0], 'application/problem+json');
  });

  test('leaves the admin page out of the document, and its data closed without a token', async () => {
    const document = await (await fetch(`${server.url}/openapi/v1.json`, { signal: AbortSignal.timeout(10000) })).json();
    assert.deepEqual(Object.keys(document.paths).filter((p) => p.startsWith('/admin')), []);
    const page = await fetch(`${server.url}/admin/`, { signal: AbortSignal.timeout(10000) });
    assert.equal(page.status, 200, 'the page itself holds no data');
    const stats = await fetch(`${server.url}/admin/stats`, { signal: AbortSignal.timeout(10000) });
    assert.equal(stats.status, 401);
  });
});
