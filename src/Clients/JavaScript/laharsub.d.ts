// Types of laharsub, the JavaScript client for Laharsub. Wire protocol: docs/protocol.md.

export type TopicId = number;
export type Transport = 'websocket' | 'sse' | 'longpoll';
export type Status = 'idle' | 'connecting' | 'connected' | 'retrying' | 'closed';
export type AccessToken = string | null | undefined;

export interface ClientOptions {
  /** Seconds the server may hold a long poll (whole seconds, at most the server's MaxPollTimeout). Default 30. */
  pollTimeout?: number;
  /** Seconds added to pollTimeout before the client gives a poll up. Default 10. */
  pollTimeoutMargin?: number;
  /** Milliseconds for every other request, a WebSocket publish and a stream to open. Default 30000. */
  requestTimeout?: number;
  /** Backoff after failures: first delay (ms), cap (ms), random share taken off. Defaults 500, 30000, 0.5. */
  retryDelay?: number;
  maxRetryDelay?: number;
  retryJitter?: number;
  /** Send a new random Idempotency-Key with every publish, and resend one whose outcome is unknown. Default true. */
  idempotentPublishes?: boolean;
  /** Attempts in all for a keyed publish whose outcome is unknown. Default 4. */
  publishAttempts?: number;
  /** Extra headers for every HTTP request (not the WebSocket). */
  headers?: Record<string, string> | null;
  /** Jwt mode: a token, or a function asked before every request and once more after a 401. */
  accessToken?: string | (() => AccessToken | Promise<AccessToken>) | null;
  /** The transports to try, in order. Default ['websocket', 'sse', 'longpoll']. */
  transports?: Transport[];
  /** Milliseconds an event stream may take to deliver its first event before a buffering proxy is assumed. Default 5000. */
  sseOpenTimeout?: number;
  /** Milliseconds of silence (no event, no heartbeat) after which an event stream is taken to be dead. Default 45000. */
  heartbeatTimeout?: number;
  /** Milliseconds: at most one delivery per interval, the latest message of each topic (0 off, to 60000). */
  conflate?: number;
  /** Start each topic that is behind at its latest retained message. Default false. */
  latest?: boolean;
  /** Presence identity in Open mode (1 to 64 characters of A-Z a-z 0-9 _ . : @ -). */
  clientId?: string | null;
  /** Data shown with this member (a plain object of at most the server's Presence:MaxMemberDataBytes as JSON). */
  member?: Record<string, unknown> | null;
  /** Closes the client when aborted. */
  signal?: AbortSignal | null;
  /** A WebSocket constructor where the platform has none (such as the `ws` package on Node 20). */
  WebSocket?: (new (url: string, protocols?: string | string[]) => WebSocket) | null;
  onStatus?: ((status: Status, info: StatusInfo) => void) | null;
  onTransport?: ((transport: Transport, info: TransportInfo) => void) | null;
  onError?: ((error: Error) => void) | null;
}

export interface StatusInfo {
  /** retrying: milliseconds until the next attempt. */
  delay?: number;
  error?: Error | null;
  /** retrying: the API root tried next. */
  baseUrl?: string;
}

export interface TransportInfo {
  previous: Transport | null;
  /** Transports that could not be opened on the way to this one. */
  skipped: Transport[];
  baseUrl: string;
}

export interface TopicInfo {
  topicId: TopicId;
  epoch: string;
  label?: string;
  createdAt?: string;
  lastMessageId?: number;
  firstRetainedMessageId?: number;
  retainedMessages?: number;
  retainedBytes?: number;
  waitingPolls?: number;
  presence?: true;
  /** A state topic: it holds one JSON document (see subscribeState). */
  state?: true;
  presenceTopicId?: TopicId;
  presenceOf?: TopicId;
}

export interface Published {
  topicId: TopicId;
  messageId: number;
  epoch: string;
}

/** A message as the subscription hands it out; T is the type of `data` for JSON messages. */
export interface Message<T = unknown> {
  type: 'message';
  topicId: TopicId;
  epoch: string;
  messageId: number;
  publishedAt: string;
  contentType: string;
  encoding: 'text' | 'base64';
  /** The body as the wire carries it: the text, or base64. */
  body: string;
  /** Parsed JSON for JSON types, the text for text, the bytes for binary bodies. */
  data: T | string | Uint8Array;
}

/** Messages fromMessageId..toMessageId expired before they were read: lost to this subscriber. */
export interface GapNotice {
  type: 'gap';
  topicId: TopicId;
  epoch: string;
  fromMessageId: number;
  toMessageId: number;
}

/** Messages fromMessageId..toMessageId were skipped because the client asked for conflation. */
export interface ConflatedNotice {
  type: 'conflated';
  topicId: TopicId;
  epoch: string;
  fromMessageId: number;
  toMessageId: number;
}

/** The topic is not where the cursor said: the subscription continues from firstMessageId in `epoch`. */
export interface ResetNotice {
  type: 'reset';
  topicId: TopicId;
  epoch: string;
  reason: 'beyondEnd' | 'epochChanged';
  /** Another incarnation than the one the cursor belonged to (deleted and created again, or a restart). */
  epochChanged: boolean;
  requestedFrom: number;
  requestedEpoch?: string;
  firstMessageId: number;
  lastMessageId: number;
}

/** The topic was deleted: it is no longer followed. */
export interface TopicDeletedNotice {
  type: 'topicDeleted';
  topicId: TopicId;
  epoch: string;
}

/** The server refused this topic (404, 403, ...): it is no longer followed. */
export interface ErrorItem {
  type: 'error';
  topicId: TopicId;
  error: LaharsubError;
}

/** A state topic's whole document at `version`: its changes follow from version + 1. */
export interface StateNotice<D = JsonObject> {
  type: 'state';
  topicId: TopicId;
  epoch: string;
  version: number;
  document: D;
}

export type Notice = GapNotice | ConflatedNotice | ResetNotice | TopicDeletedNotice | StateNotice;
export type Item<T = unknown> = Message<T> | Notice | ErrorItem;

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/**
 * A topic to subscribe to, optionally from a cursor (the next message id wanted) in an incarnation.
 * `from: 'state'` asks a state topic for its document first (a StateNotice), then its changes.
 */
export interface TopicPosition {
  topicId: TopicId;
  from?: number | 'state' | null;
  epoch?: string | null;
}

export interface SubscribeOptions<T = unknown> {
  /** Receives the items; without it they wait for `for await`. */
  onItem?: ((item: Item<T>, subscription: Subscription<T>) => void) | null;
  /** Unsubscribes when aborted. */
  signal?: AbortSignal | null;
}

export interface PublishOptions {
  /** Default: application/json for objects, text/plain; charset=utf-8 for strings, application/octet-stream for bytes. */
  contentType?: string;
  idempotencyKey?: string;
  signal?: AbortSignal;
}

export interface PresenceMember {
  member: string;
  data: Record<string, unknown> | null;
}

export interface PresencePage {
  topicId: TopicId;
  occupancy: number;
  members?: PresenceMember[];
  next?: string | null;
}

export interface PresenceEvent {
  type: 'join' | 'leave';
  member: string;
  data: Record<string, unknown> | null;
  occupancy: number;
}

export interface PresenceWatch {
  topicId: TopicId;
  /** Resolves once the first member list is in. */
  ready: Promise<void>;
  members(): Map<string, Record<string, unknown> | null>;
  readonly occupancy: number;
  stop(): void;
}

export class LaharsubError extends Error {
  constructor(message: string, init?: { status?: number; problem?: Problem | null; retryAfter?: number | null; cause?: unknown });
  /** The HTTP status, or 0 when there was no answer. */
  status: number;
  /** The server's problem detail (RFC 9457). */
  problem: Problem | null;
  /** The topic the server named, if any. */
  topicId: TopicId | null;
  /** Milliseconds the server asked to wait (Retry-After), if it did. */
  retryAfter: number | null;
}

export interface Problem {
  type?: string;
  title?: string;
  status?: number;
  detail?: string;
  errors?: Record<string, string[]>;
  topicId?: TopicId;
  [extension: string]: unknown;
}

/** A compare-and-set: `ifVersion` (with `ifEpoch`) applies the write only if the document is still at that version (else a 412 whose problem has `epoch` and `version`). */
export interface StateWriteOptions {
  ifEpoch?: string;
  ifVersion?: number;
  idempotencyKey?: string;
  signal?: AbortSignal;
}

export interface StateInfo<D = JsonObject> {
  version: number;
  epoch: string;
  /** What changed it: the StateNotice, or the message (a merge patch or a whole document). */
  item: StateNotice<D> | Message;
}

/** A state topic's document kept current: the snapshot, then every change applied in order. */
export class StateSubscription<D = JsonObject> {
  readonly topicId: TopicId;
  /** Resolves once the first document is in. */
  readonly ready: Promise<StateSubscription<D>>;
  /** The document (null until ready), its version and epoch. */
  readonly document: D | null;
  readonly version: number | null;
  readonly epoch: string | null;
  readonly active: boolean;
  /** A merge patch; `ifCurrent: true` applies it only if the document is still the one held here. */
  patch(patch: JsonObject, options?: StateWriteOptions & { ifCurrent?: boolean }): Promise<Published>;
  replace(document: D, options?: StateWriteOptions & { ifCurrent?: boolean }): Promise<Published>;
  unsubscribe(): void;
}

/** RFC 7396: `target` with `patch` applied; a new value (the objects on changed paths are copies). */
export function mergePatch<T = JsonValue>(target: JsonValue | undefined, patch: JsonValue): T;

export class Subscription<T = unknown> implements AsyncIterable<Item<T>> {
  /** Resolves once every cursor is fixed: whatever is published afterwards is delivered. */
  readonly ready: Promise<Subscription<T>>;
  readonly topics: TopicId[];
  readonly active: boolean;
  /** The next message id wanted on `topicId` (the first topic by default). */
  cursor(topicId?: TopicId): number | null;
  /** The epoch the cursor belongs to (null until known). */
  epoch(topicId?: TopicId): string | null;
  /** Every topic's position: pass it back to subscribe() to resume exactly. */
  positions(): Required<TopicPosition>[];
  unsubscribe(): void;
  [Symbol.asyncIterator](): AsyncIterator<Item<T>>;
}

export class LaharsubClient {
  constructor(baseUrl: string | string[], options?: ClientOptions);
  readonly baseUrls: string[];
  readonly baseUrl: string;
  readonly options: Readonly<Required<ClientOptions>>;
  readonly transport: Transport | null;
  readonly status: Status;
  on(type: 'status', listener: (status: Status, info: StatusInfo) => void): () => void;
  on(type: 'transport', listener: (transport: Transport, info: TransportInfo) => void): () => void;
  on(type: 'error', listener: (error: Error) => void): () => void;
  createTopic(options?: { label?: string; presence?: boolean; state?: boolean; signal?: AbortSignal }): Promise<TopicInfo>;
  listTopics(options?: { after?: TopicId; limit?: number; label?: string; signal?: AbortSignal }): Promise<{ topics: TopicInfo[]; next?: TopicId }>;
  getTopic(topicId: TopicId, options?: { signal?: AbortSignal }): Promise<TopicInfo>;
  deleteTopic(topicId: TopicId, options?: { signal?: AbortSignal }): Promise<void>;
  getPresence(topicId: TopicId, options?: { after?: string; limit?: number; signal?: AbortSignal }): Promise<PresencePage>;
  setMember(member: Record<string, unknown> | null): void;
  publish(topicId: TopicId, data: unknown, options?: PublishOptions & { ifEpoch?: string }): Promise<Published>;
  publishMany(topicIds: TopicId[], data: unknown, options?: PublishOptions & { epochs?: Record<TopicId, string> }): Promise<Published[]>;
  /** A state topic's document with its version and epoch (from the ETag). */
  getState<D = JsonObject>(topicId: TopicId, options?: { signal?: AbortSignal }): Promise<{ topicId: TopicId; document: D; epoch: string; version: number }>;
  /** An RFC 7396 merge patch to a state topic's document; messageId is the new version. */
  publishPatch(topicId: TopicId, patch: JsonObject, options?: StateWriteOptions): Promise<Published>;
  /** Replaces a state topic's document. */
  replaceState(topicId: TopicId, document: JsonObject, options?: StateWriteOptions): Promise<Published>;
  subscribeState<D = JsonObject>(topicId: TopicId, options?: {
    onState?: (document: D, info: StateInfo<D>) => void;
    /** Every item of the topic's subscription (the notices included), before onState. */
    onItem?: (item: Item, state: StateSubscription<D>) => void;
    signal?: AbortSignal;
  }): StateSubscription<D>;
  subscribe<T = unknown>(topics: TopicId | TopicPosition | Array<TopicId | TopicPosition>, options?: SubscribeOptions<T>): Subscription<T>;
  cursors(): Record<TopicId, number | null>;
  epochs(): Record<TopicId, string | null>;
  close(): void;
}

export function createClient(baseUrl: string | string[], options?: ClientOptions): LaharsubClient;
export function watchPresence(client: LaharsubClient, topicId: TopicId, options?: {
  onChange?: (members: Map<string, Record<string, unknown> | null>, event: PresenceEvent | null) => void;
  onError?: (error: Error) => void;
  signal?: AbortSignal;
}): PresenceWatch;
export function presenceEvent(message: Message): PresenceEvent | null;
