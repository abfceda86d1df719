// The common scenario (outcome.mts) through the axios client orval generates (./api.ts, written by
// orval-client.test.js with splitByContentType and ./orval-http.ts as its mutator, through which each
// function sends its media type's Content-Type). Problems arrive as axios errors whose response data they are.
import axios from 'axios';
import { createTopic, getPresence, getTopic, poll, publishManyWithJson, publishWithJson, publishWithText } from './api.js';
import { member, outcomeOf, type Outcome } from './outcome.mjs';

/** The problem's detail of a refused call, or what else happened. */
async function refusal(call: Promise<unknown>): Promise<string | null | undefined> {
  try {
    await call;
    return 'answered a success';
  } catch (error) {
    if (axios.isAxiosError<{ detail?: string | null }>(error)) {
      return error.response?.data?.detail;
    }
    throw error;
  }
}

export async function run(): Promise<Outcome> {
  const bounded = () => ({ signal: AbortSignal.timeout(10000) });

  const plain = await createTopic(undefined, bounded());
  const room = await createTopic({ label: 'orval-axios-room', presence: true }, bounded());
  const json = await publishWithJson(plain.topicId, { greeting: 'hello', count: 2 }, bounded());
  const text = await publishWithText(plain.topicId, 'hello from orval axios', bounded());
  const many = await publishManyWithJson({ to: 'both' }, { topics: `${plain.topicId},${room.topicId}` }, bounded());
  const polled = await poll({ topics: `${plain.topicId}:1,${room.topicId}:1`, timeout: 0, ...member }, bounded());
  if (typeof polled !== 'object') {
    throw new Error(`poll answered ${JSON.stringify(polled)}`);
  }
  const presence = await getPresence(room.topicId, { limit: 10 }, bounded());

  return outcomeOf({
    plain,
    room,
    published: [json, text],
    many,
    polled,
    presence,
    notFound: await refusal(getTopic(999999, bounded())),
    invalid: await refusal(createTopic({ label: '9lives' }, bounded())),
  });
}
