// Create, publish and poll through a client generated from the server's OpenAPI document: the types
// come from openapi-typescript (./schema.d.ts, written by generated-client.test.js), the calls from
// openapi-fetch. The TypeScript compiler checks these calls against the generated types before they run.
import createClient from 'openapi-fetch';
import type { paths } from './schema.js';

export interface Outcome {
  topicId: number;
  headStatus: number;
  messageId: number;
  delivered: { contentType: string; body: string; messageId: number }[];
  quietStatus: number;
  quietData: unknown;
  quietError: unknown;
  wildcardStatus: number;
  wildcardErrors: unknown;
}

export async function run(baseUrl: string): Promise<Outcome> {
  const client = createClient<paths>({ baseUrl });
  const bounded = () => AbortSignal.timeout(10000);

  const created = await client.POST('/ps/topics', { body: { label: 'generated-client' }, signal: bounded() });
  if (!created.data) {
    throw new Error(`createTopic answered ${created.response.status}: ${JSON.stringify(created.error)}`);
  }
  const topicId: number = created.data.topicId;

  const head = await client.HEAD('/ps/topics/{topicId}', { params: { path: { topicId } }, signal: bounded() });

  const published = await client.POST('/ps/topics/{topicId}', {
    params: { path: { topicId } },
    body: 'hello from a generated client',
    bodySerializer: (body) => String(body),
    headers: { 'Content-Type': 'text/plain' },
    signal: bounded(),
  });
  if (!published.data) {
    throw new Error(`publish answered ${published.response.status}: ${JSON.stringify(published.error)}`);
  }

  const polled = await client.GET('/ps/subscriptions', {
    params: { query: { topics: `${topicId}:1`, timeout: 0 } },
    headers: { Accept: 'application/json' },
    signal: bounded(),
  });
  // The 200 is declared in three formats; with Accept: application/json it is the PollAnswer object.
  if (!polled.data || typeof polled.data === 'string') {
    throw new Error(`poll answered ${polled.response.status}: ${JSON.stringify(polled.error ?? polled.data)}`);
  }

  // Nothing new after the message: a quiet poll answers 204, a success without a body.
  const next = published.data.messageId + 1;
  const quiet = await client.GET('/ps/subscriptions', { params: { query: { topics: `${topicId}:${next}`, timeout: 0 } }, signal: bounded() });

  // What a generator sends when a body is declared */*: refused, naming Content-Type.
  const wildcard = await client.POST('/ps/topics/{topicId}', {
    params: { path: { topicId } },
    body: 'x',
    bodySerializer: (body) => String(body),
    headers: { 'Content-Type': '*/*' },
    signal: bounded(),
  });

  return {
    topicId,
    headStatus: head.response.status,
    messageId: published.data.messageId,
    delivered: polled.data.messages.map((m) => ({ contentType: m.contentType, body: m.body, messageId: m.messageId })),
    quietStatus: quiet.response.status,
    quietData: quiet.data,
    quietError: quiet.error,
    wildcardStatus: wildcard.response.status,
    wildcardErrors: (wildcard.error as { errors?: unknown } | undefined)?.errors,
  };
}
