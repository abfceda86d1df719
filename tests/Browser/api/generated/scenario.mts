// The common scenario (outcome.mts) and a few checks of the protocol's corners through a client generated
// from the server's OpenAPI document: the types come from openapi-typescript (./schema.d.ts, written by
// generated-client.test.js), the calls from openapi-fetch. The TypeScript compiler checks these calls
// against the generated types before they run.
import createClient from 'openapi-fetch';
import type { paths } from './schema.js';
import { dataOf, member, outcomeOf, type Outcome } from './outcome.mjs';

export interface Corners {
  headStatus: number;
  quietStatus: number;
  quietData: unknown;
  quietError: unknown;
  wildcardStatus: number;
  wildcardErrors: unknown;
}

export async function run(baseUrl: string): Promise<{ outcome: Outcome; corners: Corners }> {
  const client = createClient<paths>({ baseUrl });
  const bounded = () => AbortSignal.timeout(10000);
  const fail = (what: string, answer: { response: Response; error?: unknown }): never => {
    throw new Error(`${what} answered ${answer.response.status}: ${JSON.stringify(answer.error)}`);
  };

  const plain = await client.POST('/ps/topics', { signal: bounded() });
  const room = await client.POST('/ps/topics', { body: { label: 'openapi-fetch-room', presence: true }, signal: bounded() });
  if (!plain.data || !room.data) {
    return fail('createTopic', plain.data ? room : plain);
  }
  const topicId: number = plain.data.topicId;

  // openapi-fetch sends JSON unless told otherwise; text/plain with its header and the body as it is.
  const json = await client.POST('/ps/topics/{topicId}', { params: { path: { topicId } }, body: { greeting: 'hello', count: 2 }, signal: bounded() });
  const text = await client.POST('/ps/topics/{topicId}', {
    params: { path: { topicId } },
    body: 'hello from openapi-fetch',
    bodySerializer: (body) => String(body),
    headers: { 'Content-Type': 'text/plain' },
    signal: bounded(),
  });
  const many = await client.POST('/ps/topics/publish', { params: { query: { topics: `${topicId},${room.data.topicId}` } }, body: { to: 'both' }, signal: bounded() });
  if (!json.data || !text.data || !many.data) {
    return fail('a publish', !json.data ? json : !text.data ? text : many);
  }

  const polled = await client.GET('/ps/subscriptions', {
    params: { query: { topics: `${topicId}:1,${room.data.topicId}:1`, timeout: 0, ...member } },
    headers: { Accept: 'application/json' },
    signal: bounded(),
  });
  // The 200 is declared in three formats; with Accept: application/json it is the PollAnswer object.
  if (!polled.data || typeof polled.data === 'string') {
    return fail('poll', polled);
  }
  const presence = await client.GET('/ps/topics/{topicId}/presence', { params: { path: { topicId: room.data.topicId }, query: { limit: 10 } }, signal: bounded() });
  if (!presence.data) {
    return fail('getPresence', presence);
  }
  const missing = await client.GET('/ps/topics/{topicId}', { params: { path: { topicId: 999999 } }, signal: bounded() });
  const invalid = await client.POST('/ps/topics', { body: { label: '9lives' }, signal: bounded() });

  const head = await client.HEAD('/ps/topics/{topicId}', { params: { path: { topicId } }, signal: bounded() });
  // Nothing new after the messages: a quiet poll answers 204, a success without a body.
  const quiet = await client.GET('/ps/subscriptions', { params: { query: { topics: `${topicId}:4`, timeout: 0 } }, signal: bounded() });
  // What a generator sends when a body is declared */*: refused, naming Content-Type.
  const wildcard = await client.POST('/ps/topics/{topicId}', {
    params: { path: { topicId } },
    body: 'x',
    bodySerializer: (body) => String(body),
    headers: { 'Content-Type': '*/*' },
    signal: bounded(),
  });

  return {
    outcome: outcomeOf({
      ...dataOf({ plain, room, many, presence }),
      polled: polled.data,
      published: [json.data, text.data],
      notFound: missing.error?.detail,
      invalid: invalid.error?.detail,
    }),
    corners: {
      headStatus: head.response.status,
      quietStatus: quiet.response.status,
      quietData: quiet.data,
      quietError: quiet.error,
      wildcardStatus: wildcard.response.status,
      wildcardErrors: (wildcard.error as { errors?: unknown } | undefined)?.errors,
    },
  };
}
