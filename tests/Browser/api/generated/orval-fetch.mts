// The common scenario (outcome.mts) through the fetch client orval generates (./api.ts, written by
// orval-client.test.js with splitByContentType, so that each media type of a body has its function).
// Each function answers { data, status, headers } for every declared status, problems included.
import { createTopic, getPresence, getTopic, poll, publishManyWithJson, publishWithJson, publishWithText } from './api.js';
import { dataOf, member, outcomeOf, type Outcome } from './outcome.mjs';

export async function run(): Promise<Outcome> {
  const bounded = () => ({ signal: AbortSignal.timeout(10000) });
  const fail = (what: string, answer: { status: number; data: unknown }): never => {
    throw new Error(`${what} answered ${answer.status}: ${JSON.stringify(answer.data)}`);
  };

  const plain = await createTopic(undefined, bounded());
  const room = await createTopic({ label: 'orval-fetch-room', presence: true }, bounded());
  if (plain.status !== 201 || room.status !== 201) {
    return fail('createTopic', plain.status !== 201 ? plain : room);
  }
  const topicId = plain.data.topicId;
  const json = await publishWithJson(topicId, { greeting: 'hello', count: 2 }, bounded());
  const text = await publishWithText(topicId, 'hello from orval fetch', bounded());
  const many = await publishManyWithJson({ to: 'both' }, { topics: `${topicId},${room.data.topicId}` }, bounded());
  if (json.status !== 201 || text.status !== 201 || many.status !== 201) {
    return fail('a publish', json.status !== 201 ? json : text.status !== 201 ? text : many);
  }
  const polled = await poll({ topics: `${topicId}:1,${room.data.topicId}:1`, timeout: 0, ...member }, bounded());
  if (polled.status !== 200 || typeof polled.data !== 'object') {
    return fail('poll', polled);
  }
  const presence = await getPresence(room.data.topicId, { limit: 10 }, bounded());
  if (presence.status !== 200) {
    return fail('getPresence', presence);
  }
  const missing = await getTopic(999999, bounded());
  const invalid = await createTopic({ label: '9lives' }, bounded());

  return outcomeOf({
    ...dataOf({ plain, room, many, presence }),
    polled: polled.data,
    published: [json.data, text.data],
    notFound: missing.status === 404 ? missing.data.detail : `answered ${missing.status}`,
    invalid: invalid.status === 400 ? invalid.data.detail : `answered ${invalid.status}`,
  });
}
