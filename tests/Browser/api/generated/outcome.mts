// What each TypeScript scenario reports, for support/generated.js's assertScenario to check.
export interface Outcome {
  plain: number;
  room: number;
  roomPresence: boolean | null | undefined;
  published: number[];
  many: [number, number][];
  delivered: [number, number, string, string][];
  occupancy: number;
  members: [string, unknown][];
  // The problems' details as the caller gets them: an unknown topic, a bad label.
  notFound: string | null | undefined;
  invalid: string | null | undefined;
}

export const member = { client: 'alice', member: JSON.stringify({ name: 'Alice' }) };

/** The Outcome from what the generated functions answered (structurally: each generator names its types). */
export function outcomeOf(answers: {
  plain: { topicId: number };
  room: { topicId: number; presence?: boolean | null };
  published: { messageId: number }[];
  many: { messages: { topicId: number; messageId: number }[] };
  polled: { messages: { topicId: number; messageId: number; contentType: string; body: string }[] };
  presence: { occupancy: number; members?: { member: string; data?: unknown }[] | null };
  notFound: string | null | undefined;
  invalid: string | null | undefined;
}): Outcome {
  return {
    plain: answers.plain.topicId,
    room: answers.room.topicId,
    roomPresence: answers.room.presence,
    published: answers.published.map((m) => m.messageId),
    many: answers.many.messages.map((m) => [m.topicId, m.messageId]),
    delivered: answers.polled.messages.map((m) => [m.topicId, m.messageId, m.contentType, m.body]),
    occupancy: answers.presence.occupancy,
    members: (answers.presence.members ?? []).map((m) => [m.member, m.data]),
    notFound: answers.notFound,
    invalid: answers.invalid,
  };
}

/** Each answer's data, for clients that answer { data, ... } (openapi-fetch, orval's fetch client). */
export function dataOf<T extends Record<string, { data?: unknown }>>(answers: T): { [K in keyof T]: NonNullable<T[K]['data']> } {
  return Object.fromEntries(Object.entries(answers).map(([name, answer]) => [name, answer.data])) as { [K in keyof T]: NonNullable<T[K]['data']> };
}
