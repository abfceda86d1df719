/*!
 * laharsub: the JavaScript client for Laharsub, HTTP pub/sub. Every subscription of a client shares one
 * connection: a WebSocket, a Server-Sent Events stream or a long poll, whichever gets through.
 * A dependency-free ES module for browsers and Node 22+. Wire protocol: docs/protocol.md.
 * Copyright (c) 2026 the Laharsub contributors. MIT licence.
 */

const TRANSPORTS = ['websocket', 'sse', 'longpoll'];
const SUBPROTOCOL = 'laharsub.v1';
const JSON_TYPE = /^application\/(?:[\w.+-]*\+)?json\b/i;
const PATCH_TYPE = 'application/merge-patch+json';
const EPOCH = /^[0-9A-Za-z_-]{1,32}$/;
const CLIENT_ID = /^[A-Za-z0-9_.:@-]{1,64}$/;
const KEY = /^[\x20\x21\x23-\x5b\x5d-\x7e]{1,255}$/;
// A publish frame longer than this goes over REST: the server closes a socket whose frame exceeds
// Streams:MaxReceiveFrameBytes (1 MiB), which would take the subscriptions' connection with it.
const MAX_FRAME = 320 * 1024;

const DEFAULTS = {
  pollTimeout: 30,
  pollTimeoutMargin: 10,
  requestTimeout: 30000,
  retryDelay: 500,
  maxRetryDelay: 30000,
  retryJitter: 0.5,
  idempotentPublishes: true,
  publishAttempts: 4,
  headers: null,
  accessToken: null,
  transports: TRANSPORTS,
  sseOpenTimeout: 5000,
  heartbeatTimeout: 45000,
  conflate: 0,
  latest: false,
  clientId: null,
  member: null,
  signal: null,
  WebSocket: null,
  onStatus: null,
  onTransport: null,
  onError: null
};

/** An error with the HTTP status (0: no answer) and the server's problem detail (RFC 9457), if any. */
export class LaharsubError extends Error {
  constructor(message, { status = 0, problem = null, retryAfter = null, cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'LaharsubError';
    this.status = status;
    this.problem = problem;
    this.topicId = problem && isId(problem.topicId) ? problem.topicId : null;
    this.retryAfter = retryAfter;
  }
}

function fail(message) {
  throw new TypeError('laharsub: ' + message);
}

function isId(value) {
  return Number.isSafeInteger(value) && value > 0;
}

function toId(value, what) {
  const id = typeof value === 'string' && /^[0-9]+$/.test(value) ? Number(value) : value;
  if (!isId(id)) {
    fail(`${what} must be a positive integer (got ${String(value)}).`);
  }
  return id;
}

// A plain object of any realm (a page's frame, a jsdom window): its prototype is the last one.
function isPlain(value) {
  const proto = value !== null && typeof value === 'object' ? Object.getPrototypeOf(value) : undefined;
  return proto === null || (proto !== undefined && Object.getPrototypeOf(proto) === null && !Array.isArray(value));
}

function checkEpoch(epoch, what) {
  if (typeof epoch !== 'string' || !EPOCH.test(epoch)) {
    fail(`${what} must be an epoch as the server gives it: 1 to 32 characters of 0-9, A-Z, a-z, _ and - (got ${String(epoch)}).`);
  }
  return epoch;
}

function epochOf(item) {
  return typeof item.epoch === 'string' && EPOCH.test(item.epoch) ? item.epoch : null;
}

/** Checks and completes the client options; unknown or invalid options throw a TypeError that says what is expected. */
export function validateOptions(options) {
  if (options != null && typeof options !== 'object') {
    fail('options must be an object.');
  }
  for (const name of Object.keys(options || {})) {
    if (!(name in DEFAULTS)) {
      fail(`unknown option "${name}" (known: ${Object.keys(DEFAULTS).join(', ')}).`);
    }
  }
  const o = { ...DEFAULTS, ...options };
  const number = (name, min, max = Infinity, whole = false) => {
    const v = o[name];
    if (typeof v !== 'number' || !(v >= min && v <= max) || (whole && v % 1 !== 0)) {
      fail(`option ${name} must be a ${whole ? 'whole ' : ''}number from ${min}${max < Infinity ? ' to ' + max : ''} (got ${String(v)}).`);
    }
  };
  // At least 1 s: a poll that may not wait answers 204 at once, and polling again at once would spin.
  number('pollTimeout', 1, Infinity, true);
  number('pollTimeoutMargin', 1);
  number('requestTimeout', 1);
  number('retryDelay', 1);
  number('maxRetryDelay', o.retryDelay);
  number('retryJitter', 0, 1);
  number('publishAttempts', 1, Infinity, true);
  number('sseOpenTimeout', 1);
  number('heartbeatTimeout', 1);
  number('conflate', 0, 60000, true);
  for (const name of ['idempotentPublishes', 'latest']) {
    if (typeof o[name] !== 'boolean') {
      fail(`option ${name} must be true or false (got ${String(o[name])}).`);
    }
  }
  for (const name of ['onStatus', 'onTransport', 'onError', 'WebSocket']) {
    if (o[name] != null && typeof o[name] !== 'function') {
      fail(`option ${name} must be a function.`);
    }
  }
  if (o.headers != null && !isPlain(o.headers)) {
    fail('option headers must be a plain object of header names and values.');
  }
  if (o.accessToken != null && typeof o.accessToken !== 'string' && typeof o.accessToken !== 'function') {
    fail('option accessToken must be a token string or a function returning one (or a promise of one).');
  }
  if (o.clientId != null && (typeof o.clientId !== 'string' || !CLIENT_ID.test(o.clientId))) {
    fail(`option clientId is 1 to 64 characters of A-Z a-z 0-9 _ . : @ - (got ${String(o.clientId)}).`);
  }
  if (o.member != null && !isPlain(o.member)) {
    fail(`option member must be a plain object such as { name: 'Alice' } (got ${String(o.member)}).`);
  }
  if (o.signal != null && typeof o.signal.addEventListener !== 'function') {
    fail('option signal must be an AbortSignal.');
  }
  if (!Array.isArray(o.transports) || !o.transports.length) {
    fail('option transports must be a non-empty array of "websocket", "sse" and "longpoll", in the order to try them.');
  }
  o.transports.forEach((name, i) => {
    if (!TRANSPORTS.includes(name)) {
      fail(`option transports names "${String(name)}": the transports are "websocket", "sse" and "longpoll".`);
    }
    if (o.transports.indexOf(name) !== i) {
      fail(`option transports lists "${name}" twice: list each transport once.`);
    }
  });
  o.transports = o.transports.slice();
  return o;
}

/** The API roots, each without a trailing slash; several are instances of one service, tried in order. */
export function normalizeBaseUrls(baseUrl) {
  const list = Array.isArray(baseUrl) ? baseUrl : [baseUrl];
  if (!list.length) {
    fail('baseUrl is an empty array: list at least one API root.');
  }
  const urls = list.map((url) => {
    if (typeof url !== 'string' || !url) {
      fail('baseUrl must be the Laharsub API root, e.g. "/ps" or "https://example.com/ps", or an array of several instances\' roots.');
    }
    return url.replace(/\/+$/, '');
  });
  urls.forEach((url, i) => {
    if (urls.indexOf(url) !== i) {
      fail(`baseUrl lists "${url}" twice: list each instance once.`);
    }
  });
  return urls;
}

/** No answer, or 502/503/504: this instance cannot serve now while another may. */
function isUnavailable(status) {
  return status === 0 || status === 502 || status === 503 || status === 504;
}

function isRetryable(status) {
  return status === 0 || status === 408 || status === 429 || status >= 500;
}

/** The delay in ms before retry number `attempt` (from 0): doubling, capped, shortened by a random share. */
export function backoffDelay(attempt, options, random = Math.random()) {
  const base = Math.min(options.maxRetryDelay, options.retryDelay * 2 ** Math.min(attempt, 30));
  return Math.round(base * (1 - options.retryJitter * random));
}

/** Retry-After (seconds or an HTTP date) in ms, or null. */
export function parseRetryAfter(value, now = Date.now()) {
  if (value == null || value === '') {
    return null;
  }
  const text = String(value).trim();
  if (/^[0-9]+$/.test(text)) {
    return Number(text) * 1000;
  }
  const date = Date.parse(text);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/** The compact form of subscriptions, `14:43~epoch,15`: the `topics` of a poll, a stream URL, a subscribe frame. */
export function compactTopics(entries) {
  return entries.map((e) => e.topicId + (e.cursor == null ? (e.snapshot ? ':state' : '') : ':' + e.cursor + (e.epoch == null ? '' : '~' + e.epoch))).join(',');
}

const isObject = (value) => value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * RFC 7396: `target` with the JSON merge patch `patch` applied (null deletes a key, an object merges,
 * anything else replaces). Returns a new value; the objects on the changed paths are copies.
 */
export function mergePatch(target, patch) {
  if (!isObject(patch)) {
    return patch;
  }
  const result = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) {
      delete result[key];
    } else {
      result[key] = mergePatch(result[key], value);
    }
  }
  return result;
}

/** `"<epoch>:<version>"`, a state's ETag, as { epoch, version }, or null. */
function parseStateTag(tag) {
  const match = /^(?:W\/)?"([0-9A-Za-z_-]{1,32}):([0-9]+)"$/.exec(tag || '');
  return match ? { epoch: match[1], version: Number(match[2]) } : null;
}

function decodeBase64(text) {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) {
    bytes[i] = binary.charCodeAt(i);
  }
  return bytes;
}

function encodeBase64(bytes) {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 8192) {
    binary += String.fromCharCode.apply(null, bytes.subarray(i, i + 8192));
  }
  return btoa(binary);
}

/** A wire message as the client hands it out: `type: 'message'` and `data` (parsed JSON, the text, or the bytes). */
export function decodeMessage(message) {
  let data = message.body;
  if (message.encoding === 'base64') {
    data = decodeBase64(message.body);
  } else if (JSON_TYPE.test(message.contentType || '')) {
    try {
      data = JSON.parse(message.body);
    } catch {
      // Not JSON after all: the text as it came.
    }
  }
  return { type: 'message', ...message, data };
}

/** What a publish sends: objects as JSON, strings as UTF-8 text, binary as it is. */
export function publishBody(data, contentType) {
  if (contentType != null && (typeof contentType !== 'string' || !contentType)) {
    fail('publish contentType must be a media type such as "text/plain; charset=utf-8".');
  }
  if (data == null || data === '') {
    fail('publish needs a non-empty message: Laharsub refuses empty bodies.');
  }
  if (data instanceof ArrayBuffer || ArrayBuffer.isView(data) || (typeof Blob !== 'undefined' && data instanceof Blob)) {
    return { body: data, contentType: contentType || 'application/octet-stream' };
  }
  if (typeof data === 'string') {
    return { body: data, contentType: contentType || 'text/plain; charset=utf-8' };
  }
  if (contentType && !JSON_TYPE.test(contentType)) {
    fail(`publish got ${Array.isArray(data) ? 'an array' : typeof data} with content type "${contentType}": pass a string or bytes for other types, or omit the type to send JSON.`);
  }
  return { body: JSON.stringify(data), contentType: contentType || 'application/json' };
}

/** The WebSocket publish frame for a body (without its id), or null when it must go over REST (a Blob, a large body). */
export function publishFrame(target, body, key) {
  const frame = { type: 'publish', ...target, contentType: body.contentType };
  if (key != null) {
    frame.idempotencyKey = key;
  }
  const data = body.body;
  if (typeof data === 'string') {
    frame.encoding = 'text';
    frame.body = data;
  } else if (data instanceof ArrayBuffer || ArrayBuffer.isView(data)) {
    frame.encoding = 'base64';
    frame.body = encodeBase64(data instanceof ArrayBuffer ? new Uint8Array(data) : new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  } else {
    return null;
  }
  return frame.body.length > MAX_FRAME ? null : frame;
}

/** What a problem detail says (its detail or title, then each invalid field's messages), or null. */
function describeProblem(problem) {
  if (!problem || !(problem.detail || problem.title)) {
    return null;
  }
  let text = problem.detail || problem.title;
  if (problem.errors && typeof problem.errors === 'object') {
    text += ' ' + Object.entries(problem.errors).map(([key, messages]) => key + ': ' + [].concat(messages).join(' ')).join('; ');
  }
  return text;
}

function problemError(what, problem) {
  problem = problem && typeof problem === 'object' ? problem : {};
  const status = isId(problem.status) ? problem.status : 0;
  const retryAfter = typeof problem.retryAfter === 'number' ? problem.retryAfter * 1000 : null;
  return new LaharsubError(`${what} failed: ${describeProblem(problem) || 'status ' + status}`, { status, problem, retryAfter });
}

async function errorFromResponse(response, what) {
  let problem = null;
  if (/json/i.test(response.headers.get('Content-Type') || '')) {
    try {
      problem = await response.json();
    } catch {
      problem = null;
    }
  }
  let reason = describeProblem(problem);
  if (!reason && response.status === 414) {
    // Kestrel refuses an over-long request line before Laharsub runs: no problem detail says it.
    reason = 'HTTP 414: the subscription names more topics than fit in the server\'s request line. Split the topics over several clients, or raise Kestrel:Limits:MaxRequestLineSize.';
  }
  return new LaharsubError(`${what} failed: ${reason || 'HTTP ' + response.status + (response.statusText ? ' ' + response.statusText : '')}`, {
    status: response.status, problem, retryAfter: parseRetryAfter(response.headers.get('Retry-After'))
  });
}

// getRandomValues, unlike randomUUID, works on pages that are not a secure context (plain http).
function newKey() {
  return Array.from(globalThis.crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
}

function report(callback, ...args) {
  if (callback) {
    try {
      callback(...args);
    } catch (error) {
      // A caller's callback that throws must not stop delivery to the others; surface it anyway.
      setTimeout(() => { throw error; }, 0);
    }
  }
}

function abortError(signal) {
  return signal.reason instanceof Error ? signal.reason : new DOMException('The operation was aborted.', 'AbortError');
}

/**
 * A subscription to one or several topics of a client, sharing the client's connection. Its items
 * (messages and notices) go to `onItem` when given; otherwise they are queued for `for await`.
 */
export class Subscription {
  constructor(client, entries, options) {
    this._client = client;
    this._entries = entries;
    this._onItem = options.onItem || null;
    this._queue = [];
    this._waiter = null;
    this._ended = false;
    this._error = null;
    let settle;
    this.ready = new Promise((resolve, reject) => { settle = { resolve, reject }; });
    // An unobserved `ready` that rejects must not be reported as unhandled: the error reaches the items too.
    this.ready.catch(() => {});
    this._settle = settle;
    this._unjoined = entries.length;
    if (options.signal) {
      if (options.signal.aborted) {
        queueMicrotask(() => this.unsubscribe());
      } else {
        options.signal.addEventListener('abort', () => this.unsubscribe(), { once: true });
      }
    }
  }

  /** The topic ids still followed. */
  get topics() {
    return this._entries.filter((e) => e.active).map((e) => e.topicId);
  }

  /** Whether any of its topics is still followed. */
  get active() {
    return !this._ended;
  }

  /** The next message id wanted on `topicId` (the only topic by default): keep it, with epoch(), to resume. */
  cursor(topicId) {
    return this._entry(topicId).cursor;
  }

  /** The epoch `cursor()` belongs to (null until the server has named it). */
  epoch(topicId) {
    return this._entry(topicId).epoch;
  }

  /** Every topic's position, `{ topicId, from, epoch }`: pass it back to subscribe() to resume exactly. */
  positions() {
    return this._entries.filter((e) => e.active).map((e) => ({ topicId: e.topicId, from: e.cursor, epoch: e.epoch }));
  }

  /** Stops following its topics; an iteration in progress ends. */
  unsubscribe() {
    for (const entry of this._entries) {
      this._client._drop(entry);
    }
    this._end(null);
  }

  [Symbol.asyncIterator]() {
    if (this._onItem) {
      fail('this subscription hands its items to onItem: subscribe without onItem to iterate it.');
    }
    const next = async () => {
      while (!this._queue.length && !this._ended) {
        await new Promise((resolve) => { this._waiter = { resolve }; });
      }
      if (this._queue.length) {
        return { value: this._queue.shift(), done: false };
      }
      const error = this._error;
      this._error = null;
      if (error) {
        throw error;
      }
      return { value: undefined, done: true };
    };
    return {
      next,
      return: () => {
        this.unsubscribe();
        return Promise.resolve({ value: undefined, done: true });
      },
      [Symbol.asyncIterator]() { return this; }
    };
  }

  _entry(topicId) {
    const entry = topicId == null ? this._entries[0] : this._entries.find((e) => e.topicId === topicId);
    if (!entry) {
      fail(`topic ${String(topicId)} is not part of this subscription.`);
    }
    return entry;
  }

  _push(item) {
    if (this._onItem) {
      report(this._onItem, item, this);
      return;
    }
    this._queue.push(item);
    this._wake();
  }

  _wake() {
    const waiter = this._waiter;
    this._waiter = null;
    waiter?.resolve();
  }

  _joined() {
    if (--this._unjoined === 0) {
      this._settle.resolve(this);
    }
  }

  // A topic ended (deleted, refused, unsubscribed): the subscription ends with its last topic.
  _topicEnded(error) {
    if (this._entries.every((e) => !e.active)) {
      this._end(error);
    }
  }

  _end(error) {
    if (this._ended) {
      return;
    }
    this._ended = true;
    this._error = error && !this._onItem ? error : null;
    this._settle.reject(error || new LaharsubError('the subscription ended before it started.'));
    this._wake();
  }
}

/** Creates a client for the Laharsub API at `baseUrl` (e.g. "/ps"), or at several instances' roots. */
export function createClient(baseUrl, options) {
  return new LaharsubClient(baseUrl, options);
}

export class LaharsubClient {
  constructor(baseUrl, options) {
    this.baseUrls = normalizeBaseUrls(baseUrl);
    this.options = validateOptions(options);
    this._base = 0;
    /** The transport of the connection in use (or of the last one), null until one started. */
    this.transport = null;
    /** 'idle' | 'connecting' | 'connected' | 'retrying' | 'closed' */
    this.status = 'idle';
    this._listeners = { status: new Set(), transport: new Set(), error: new Set() };
    this._subs = new Map();
    this._conn = null;
    this._chain = 0;
    this._skipped = [];
    this._attempt = 0;
    this._stopStreak = 0;
    this._tokenRetried = false;
    this._latestPending = this.options.latest;
    this._closed = false;
    this._kickPending = false;
    this._wake = null;
    this._running = false;
    this._lifetime = new AbortController();
    const signal = this.options.signal;
    if (signal) {
      if (signal.aborted) {
        this.close();
      } else {
        signal.addEventListener('abort', () => this.close(), { once: true });
      }
    }
  }

  /** The API root in use. */
  get baseUrl() {
    return this.baseUrls[this._base];
  }

  /** Adds a listener for 'status' (status, info), 'transport' (transport, info) or 'error' (error); returns a function that removes it. */
  on(type, listener) {
    const set = this._listeners[type];
    if (!set) {
      fail(`unknown event "${String(type)}": use "status", "transport" or "error".`);
    }
    set.add(listener);
    return () => set.delete(listener);
  }

  _emit(type, ...args) {
    report(this.options['on' + type[0].toUpperCase() + type.slice(1)], ...args);
    for (const listener of [...this._listeners[type]]) {
      report(listener, ...args);
    }
  }

  _setStatus(status, info = {}) {
    if (status !== this.status || status === 'retrying') {
      this.status = status;
      this._emit('status', status, info);
    }
  }

  // ---- REST -------------------------------------------------------------------------------------

  async _token(accessToken = this.options.accessToken) {
    try {
      return typeof accessToken === 'function' ? await accessToken() : accessToken;
    } catch (cause) {
      throw new LaharsubError('the accessToken function failed, so nothing was sent.', { cause });
    }
  }

  /**
   * A request to `path` under the API root in use, with the token (asked again once after a 401), the
   * headers option and a timeout (0: none); resolves with the Response when it is a success.
   */
  async _send(method, path, what, { body, headers, signal, timeout = this.options.requestTimeout, token } = {}) {
    if (this._closed) {
      throw new LaharsubError(`${what} failed: the client is closed.`);
    }
    const address = this._base;
    const signals = [this._lifetime.signal];
    if (signal) {
      signals.push(signal);
    }
    if (timeout) {
      signals.push(AbortSignal.timeout(timeout));
    }
    const combined = AbortSignal.any(signals);
    const refreshable = token === undefined && typeof this.options.accessToken === 'function';
    for (let refreshed = false; ; refreshed = true) {
      const bearer = token === undefined ? await this._token() : token;
      const all = { ...this.options.headers, ...headers };
      if (bearer) {
        all.Authorization = 'Bearer ' + bearer;
      }
      let response;
      try {
        response = await fetch(this.baseUrls[address] + path, { method, body, headers: all, signal: combined });
      } catch (cause) {
        if (signal?.aborted) {
          throw abortError(signal);
        }
        const timedOut = cause?.name === 'TimeoutError';
        const error = new LaharsubError(`${what} failed: ${timedOut ? 'no answer in time' : 'the server could not be reached'}.`, { cause });
        this._failOver(address);
        throw error;
      }
      if (response.ok) {
        return response;
      }
      if (response.status === 401 && refreshable && !refreshed) {
        await response.body?.cancel();
        continue;
      }
      const error = await errorFromResponse(response, what);
      if (isUnavailable(error.status)) {
        this._failOver(address);
      }
      throw error;
    }
  }

  async _json(method, path, what, init, read = (response) => response.status === 204 ? undefined : response.json()) {
    try {
      return await read(await this._send(method, path, what, init));
    } catch (error) {
      if (error instanceof LaharsubError) {
        this._emit('error', error);
      }
      throw error;
    }
  }

  _failOver(failed) {
    if (this.baseUrls.length > 1 && this._base === failed) {
      this._base = (failed + 1) % this.baseUrls.length;
    }
  }

  /** Creates a topic: { label, presence } optional; resolves with { topicId, epoch, ... }. */
  createTopic({ label, presence, state, signal } = {}) {
    for (const [name, value] of [['presence', presence], ['state', state]]) {
      if (value != null && typeof value !== 'boolean') {
        fail(`${name} must be true or false (got ${String(value)}).`);
      }
    }
    if (label != null && (typeof label !== 'string' || !label)) {
      fail(`label must be a non-empty string (got ${String(label)}).`);
    }
    const description = {};
    if (label != null) {
      description.label = label;
    }
    if (presence) {
      description.presence = true;
    }
    if (state) {
      description.state = true;
    }
    const init = { signal };
    if (Object.keys(description).length) {
      init.body = JSON.stringify(description);
      init.headers = { 'Content-Type': 'application/json' };
    }
    return this._json('POST', '/topics', 'create topic', init);
  }

  /** One page of topics in id order: { topics, next } where next (when present) is the `after` of the next page. */
  async listTopics({ after = 0, limit = 100, label, signal } = {}) {
    const query = new URLSearchParams({ after: after === 0 ? '0' : String(toId(after, 'after')), limit: String(toId(limit, 'limit')) });
    if (label != null) {
      query.set('label', label);
    }
    const page = await this._json('GET', '/topics?' + query, 'list topics', { signal });
    const next = page.next && /[?&]after=([0-9]+)/.exec(page.next);
    return next ? { topics: page.topics, next: Number(next[1]) } : { topics: page.topics };
  }

  /** The topic's info (epoch, lastMessageId, firstRetainedMessageId, ...). */
  getTopic(topicId, { signal } = {}) {
    const id = toId(topicId, 'topicId');
    return this._json('GET', '/topics/' + id, 'get topic ' + id, { signal });
  }

  /** Deletes a topic; its subscribers get a topicDeleted notice. */
  async deleteTopic(topicId, { signal } = {}) {
    const id = toId(topicId, 'topicId');
    await this._json('DELETE', '/topics/' + id, 'delete topic ' + id, { signal });
  }

  /** One page of a presence topic's members: { topicId, occupancy, members: [{ member, data }], next }. */
  getPresence(topicId, { after, limit = 100, signal } = {}) {
    const id = toId(topicId, 'topicId');
    const query = new URLSearchParams({ limit: String(toId(limit, 'limit')) });
    if (after != null) {
      if (typeof after !== 'string' || !after) {
        fail(`after must be a member id (got ${String(after)}).`);
      }
      query.set('after', after);
    }
    return this._json('GET', `/topics/${id}/presence?${query}`, 'get presence of topic ' + id, { signal });
  }

  /** Changes the member data sent from the next poll or connection on (a plain object, or null). */
  setMember(member) {
    if (member != null && !isPlain(member)) {
      fail('member must be a plain object such as { name: \'Alice\' }.');
    }
    this.options.member = member == null ? null : { ...member };
  }

  // ---- Publishing --------------------------------------------------------------------------------

  /**
   * Publishes one message; resolves with { topicId, messageId, epoch }. Options: contentType,
   * idempotencyKey, ifEpoch (publish only to that incarnation), signal.
   */
  publish(topicId, data, { contentType, idempotencyKey, ifEpoch, signal } = {}) {
    const id = toId(topicId, 'topicId');
    const body = publishBody(data, contentType);
    const target = { topicId: id };
    const headers = {};
    if (ifEpoch != null) {
      target.ifEpoch = checkEpoch(ifEpoch, 'ifEpoch');
      headers['If-Match'] = `"${ifEpoch}"`;
    }
    return this._publish(target, '/topics/' + id, 'publish to topic ' + id, body, this._key(idempotencyKey), headers, signal, false);
  }

  /**
   * Publishes one message to several topics, all or none; resolves with one { topicId, messageId, epoch }
   * per topic in the order given. `epochs` maps a topic id to the epoch it must have.
   */
  publishMany(topicIds, data, { contentType, idempotencyKey, epochs = {}, signal } = {}) {
    if (!Array.isArray(topicIds) || !topicIds.length) {
      fail('publishMany needs a non-empty array of topic ids.');
    }
    const seen = new Set();
    const topics = topicIds.map((value) => {
      const id = toId(value, 'topicIds');
      if (seen.has(id)) {
        fail(`publishMany names topic ${id} twice.`);
      }
      seen.add(id);
      return epochs[id] != null ? id + '~' + checkEpoch(epochs[id], `epochs[${id}]`) : String(id);
    }).join(',');
    const body = publishBody(data, contentType);
    return this._publish({ topics }, '/topics/publish?topics=' + topics, 'publish to topics ' + topics, body, this._key(idempotencyKey), {}, signal, true);
  }

  _key(key) {
    if (key != null && (typeof key !== 'string' || !KEY.test(key))) {
      fail('idempotencyKey must be 1 to 255 printable ASCII characters without quotes or backslashes, such as a UUID.');
    }
    return key == null && this.options.idempotentPublishes ? newKey() : key;
  }

  async _publish(target, path, what, body, key, headers, signal, many) {
    signal?.throwIfAborted();
    const overRest = () => this._publishRest(path, what, body, key, headers, signal, many);
    const conn = this._conn;
    const frame = conn?.kind === 'websocket' && conn.established ? publishFrame(target, body, key) : null;
    if (!frame) {
      return overRest();
    }
    try {
      const answer = await conn.publish(frame, signal);
      return many ? answer.messages : { topicId: answer.topicId, messageId: answer.messageId, epoch: answer.epoch };
    } catch (error) {
      // Not stored (not sent, a stopping instance), or unknown with a key: REST stores it once.
      if (error.notSent || error.status === 503 || (error.unknown && key != null)) {
        return overRest();
      }
      this._emit('error', error);
      throw error;
    }
  }

  // A REST publish with its key, sent again with the same key while its outcome is unknown.
  async _publishRest(path, what, body, key, headers, signal, many, method = 'POST') {
    const attempts = key == null ? 1 : this.options.publishAttempts;
    const all = { 'Content-Type': body.contentType, ...headers };
    if (key != null) {
      all['Idempotency-Key'] = `"${key}"`;
    }
    for (let n = 0; ; n++) {
      try {
        const answer = await this._json(method, path, what, { body: body.body, headers: all, signal });
        return many ? answer.messages : answer;
      } catch (error) {
        const unknown = error instanceof LaharsubError && (isUnavailable(error.status) || error.status === 409);
        if (!unknown || n + 1 >= attempts || this._closed) {
          throw error;
        }
        const delay = error.retryAfter ?? (isUnavailable(error.status) && n + 1 < this.baseUrls.length ? 0 : backoffDelay(n, this.options));
        await this._sleep(delay, signal);
      }
    }
  }

  _sleep(ms, signal) {
    return new Promise((resolve, reject) => {
      const signals = signal ? [signal, this._lifetime.signal] : [this._lifetime.signal];
      const done = () => {
        clearTimeout(timer);
        signals.forEach((s) => s.removeEventListener('abort', done));
        const aborted = signals.find((s) => s.aborted);
        aborted ? reject(abortError(aborted)) : resolve();
      };
      const timer = setTimeout(done, ms);
      signals.forEach((s) => s.addEventListener('abort', done, { once: true }));
    });
  }

  // ---- State topics ------------------------------------------------------------------------------

  /** A state topic's document: { topicId, document, epoch, version }. */
  getState(topicId, { signal } = {}) {
    const id = toId(topicId, 'topicId');
    return this._json('GET', `/topics/${id}/state`, 'get state of topic ' + id, { signal, headers: { Accept: 'application/json' } }, async (response) => {
      const tag = parseStateTag(response.headers.get('ETag'));
      return { topicId: id, document: await response.json(), epoch: tag && tag.epoch, version: tag ? tag.version : 0 };
    });
  }

  /**
   * Applies an RFC 7396 merge patch (an object) to a state topic's document; resolves with
   * { topicId, messageId, epoch } (messageId: the new version). `ifVersion` (with `ifEpoch`) makes it a
   * compare-and-set: a 412 when the document moved on, whose problem names the current epoch and version.
   */
  publishPatch(topicId, patch, options = {}) {
    return this._writeState(topicId, patch, options, false);
  }

  /** Replaces a state topic's document (an object) with PUT; options and answer as publishPatch's. */
  replaceState(topicId, document, options = {}) {
    return this._writeState(topicId, document, options, true);
  }

  _writeState(topicId, value, { ifEpoch, ifVersion, idempotencyKey, signal } = {}, replace) {
    const id = toId(topicId, 'topicId');
    if (!isObject(value)) {
      fail(`${replace ? 'a state document' : 'a merge patch'} must be a JSON object (got ${Array.isArray(value) ? 'an array' : String(value)}).`);
    }
    const headers = {};
    if (ifVersion != null) {
      if (!(Number.isSafeInteger(ifVersion) && ifVersion >= 0) || ifEpoch == null) {
        fail('ifVersion is a version (a whole number from 0) and needs ifEpoch, the incarnation it belongs to.');
      }
      headers['If-Match'] = `"${checkEpoch(ifEpoch, 'ifEpoch')}:${ifVersion}"`;
    } else if (ifEpoch != null) {
      headers['If-Match'] = `"${checkEpoch(ifEpoch, 'ifEpoch')}"`;
    }
    const body = publishBody(value, replace ? 'application/json' : PATCH_TYPE);
    const key = this._key(idempotencyKey);
    if (replace) {
      return this._publishRest(`/topics/${id}/state`, 'replace state of topic ' + id, body, key, headers, signal, false, 'PUT');
    }
    // A compare-and-set goes over REST: the WebSocket's publish frame names an epoch, not a version.
    return ifVersion != null ? this._publishRest('/topics/' + id, 'patch topic ' + id, body, key, headers, signal, false)
      : this._publish({ topicId: id, ...(ifEpoch != null && { ifEpoch }) }, '/topics/' + id, 'patch topic ' + id, body, key, headers, signal, false);
  }

  /**
   * Follows a state topic's document: the server's snapshot first, then every change applied, so that
   * `onState(document, { version, epoch, item })` always gets the exact current document.
   */
  subscribeState(topicId, options = {}) {
    return new StateSubscription(this, topicId, options);
  }

  // ---- Subscribing -------------------------------------------------------------------------------

  /**
   * Subscribes to one topic or several: a topic id, { topicId, from, epoch }, or an array of them
   * (from: the next message id wanted, absent for new messages only; epoch: the incarnation `from`
   * belongs to). Options: onItem (items go there instead of to `for await`), signal.
   */
  subscribe(topics, { onItem, signal } = {}) {
    if (this._closed) {
      fail('this client is closed: create a new one.');
    }
    if (onItem != null && typeof onItem !== 'function') {
      fail('onItem must be a function.');
    }
    const list = Array.isArray(topics) ? topics : [topics];
    if (!list.length) {
      fail('subscribe needs a topic id, { topicId, from, epoch }, or an array of them.');
    }
    const seen = new Set();
    const entries = list.map((spec) => {
      const s = typeof spec === 'object' && spec !== null ? spec : { topicId: spec };
      const topicId = toId(s.topicId, 'topicId');
      if (seen.has(topicId) || this._subs.has(topicId)) {
        fail(`topic ${topicId} is already subscribed on this client: unsubscribe it first, or use another client.`);
      }
      seen.add(topicId);
      // from: 'state' asks a state topic for its document first (a `state` notice), then its changes.
      const snapshot = s.from === 'state';
      const cursor = s.from == null || snapshot ? null : toId(s.from, 'from');
      const epoch = s.epoch == null ? null : checkEpoch(s.epoch, 'epoch');
      if (epoch != null && cursor == null) {
        fail('epoch needs from: an epoch says which incarnation of the topic the cursor belongs to.');
      }
      return { topicId, cursor, epoch, snapshot, active: true, joined: false, owner: null };
    });
    const subscription = new Subscription(this, entries, { onItem, signal });
    for (const entry of entries) {
      entry.owner = subscription;
      this._subs.set(entry.topicId, entry);
      if (entry.cursor != null || entry.snapshot) {
        this._join(entry);
      } else {
        // The cursor is fixed before joining: a connection opened later without `from` would start at
        // the topic's end again and lose what was published in between.
        this.getTopic(entry.topicId).then((info) => {
          if (entry.active) {
            entry.cursor = info.lastMessageId + 1;
            entry.epoch = epochOf(info);
            this._join(entry);
          }
        }, (error) => {
          if (entry.active) {
            this._refuse(entry, error);
          }
        });
      }
    }
    return subscription;
  }

  /** Every subscribed topic's cursor, by topic id. */
  cursors() {
    return Object.fromEntries([...this._subs].map(([id, e]) => [id, e.cursor]));
  }

  /** Every subscribed topic's epoch (null where not yet known), by topic id. */
  epochs() {
    return Object.fromEntries([...this._subs].map(([id, e]) => [id, e.epoch]));
  }

  /** Ends every subscription and the connection; the client cannot be used afterwards. */
  close() {
    if (this._closed) {
      return;
    }
    this._closed = true;
    for (const entry of [...this._subs.values()]) {
      this._drop(entry);
      entry.owner._end(null);
    }
    this._lifetime.abort(new LaharsubError('the client was closed.'));
    this._conn?.abort();
    this._wake?.();
    this._setStatus('closed');
  }

  _join(entry) {
    entry.joined = true;
    entry.owner._joined();
    this._kick();
  }

  _drop(entry) {
    if (!entry.active) {
      return;
    }
    entry.active = false;
    if (this._subs.get(entry.topicId) === entry) {
      this._subs.delete(entry.topicId);
    }
    if (entry.joined) {
      this._kick();
    }
  }

  // A topic's subscription ended with an error: the owner hears of it, as an item and as the end when it was the last.
  // When it was the last topic of an iterated subscription, the iteration throws the error instead.
  _refuse(entry, error) {
    this._drop(entry);
    const owner = entry.owner;
    if (owner._onItem || owner._entries.some((e) => e.active)) {
      owner._push({ type: 'error', topicId: entry.topicId, error });
    }
    owner._topicEnded(error);
    if (!entry.joined) {
      owner._joined();
    }
  }

  _joined() {
    return [...this._subs.values()].filter((e) => e.joined);
  }

  // Brings the connection in line with the subscriptions, once per burst of subscribe and unsubscribe calls.
  _kick() {
    if (this._closed || this._kickPending) {
      return;
    }
    this._kickPending = true;
    setTimeout(() => {
      this._kickPending = false;
      if (this._closed) {
        return;
      }
      const conn = this._conn;
      if (conn && !conn.update(this._joined())) {
        conn.abort();
      }
      if (!this._running) {
        this._running = true;
        this._loop().finally(() => { this._running = false; });
      }
      this._wake?.();
    }, 0);
  }

  async _loop() {
    while (!this._closed) {
      if (!this._joined().length && !this._conn) {
        this._setStatus('idle');
        await new Promise((resolve) => { this._wake = resolve; });
        this._wake = null;
        continue;
      }
      const kind = this._nextTransport();
      if (kind == null) {
        const error = new LaharsubError(`subscribing failed: the server answers, but none of the transports ${this.options.transports.join(', ')} could be opened (a proxy on the way may refuse WebSocket upgrades or buffer event streams): add 'longpoll' to the option transports.`);
        this._chain = 0;
        this._skipped = [];
        this._emit('error', error);
        await this._retry(backoffDelay(this._attempt++, this.options), error);
        continue;
      }
      if (this.status !== 'connected' && this.status !== 'retrying') {
        this._setStatus('connecting');
      }
      try {
        await this._run(kind);
      } catch (error) {
        if (this._closed) {
          return;
        }
        await this._failed(error, kind);
      }
    }
  }

  _nextTransport() {
    const list = this.options.transports;
    for (; this._chain < list.length; this._chain++) {
      if (this._supported(list[this._chain])) {
        return list[this._chain];
      }
    }
    return null;
  }

  _supported(kind) {
    if (kind === 'websocket') {
      return typeof (this.options.WebSocket || globalThis.WebSocket) === 'function';
    }
    return kind === 'longpoll' || typeof TextDecoderStream === 'function';
  }

  // A connection started on `kind`: it is the one in use.
  _established(kind) {
    const skipped = this._skipped;
    this._attempt = 0;
    this._tokenRetried = false;
    this._skipped = [];
    if (this.transport !== kind) {
      const previous = this.transport;
      this.transport = kind;
      this._emit('transport', kind, { previous, skipped, baseUrl: this.baseUrl });
    }
    this._setStatus(this._joined().length ? 'connected' : 'idle');
  }

  _retry(delay, error) {
    this._setStatus('retrying', { delay, error, baseUrl: this.baseUrl });
    return this._sleep(delay).catch(() => {});
  }

  // A connection failed: fall back to the next transport, retry, or end the subscriptions it names.
  async _failed(error, kind) {
    if (error.openFailed) {
      // The stream could not be opened and the browser hides why: one poll that answers at once asks the
      // server. An error there is handled as a poll's; an answer means the server accepts these
      // subscriptions and the stream was held back on the way: the next transport is tried.
      const joined = this._joined();
      if (!joined.length) {
        return;
      }
      try {
        const answer = await this._poll(joined, 0, error.token);
        this._skipped.push(kind);
        this._chain++;
        this._deliver(answer, new Map(joined.map((e) => [e.topicId, e])));
        return;
      } catch (checked) {
        if (this._closed) {
          return;
        }
        if (checked.status === 401 && typeof this.options.accessToken === 'function' && !this._tokenRetried) {
          this._tokenRetried = true;
          return;
        }
        error = checked;
      }
    }
    if (error.tokenExpired) {
      if (typeof this.options.accessToken === 'function' && !this._tokenRetried) {
        this._tokenRetried = true;
        return;
      }
      error = new LaharsubError(error.message, { status: 401 });
    }
    if (error.stopping) {
      this._attempt = Math.max(this._attempt, this._stopStreak++);
    }
    if (error.slow) {
      await this._retry(0, error);
      return;
    }
    if (error.refusedFrame) {
      this._emit('error', error);
      await this._retry(backoffDelay(this._attempt++, this.options), error);
      return;
    }
    if (!(error instanceof LaharsubError)) {
      // Not the server's answer (a fault of this client, say): said, and retried like a lost connection.
      this._emit('error', error);
      await this._retry(backoffDelay(this._attempt++, this.options), error);
      return;
    }
    if (isRetryable(error.status)) {
      const failures = ++this._attempt;
      const count = this.baseUrls.length;
      const unavailable = isUnavailable(error.status);
      if (unavailable) {
        // Once the server answers again, the preferred transport is tried first again.
        this._chain = 0;
        this._skipped = [];
      }
      // Another instance is tried at once; once every one has failed in a row, the usual backoff.
      const delay = unavailable && count > 1 && failures < count ? 0
        : error.retryAfter ?? backoffDelay(failures - (unavailable ? count : 1), this.options);
      await this._retry(delay, error);
      return;
    }
    // 404 (unknown topic) and 403 (forbidden) name the topic that made the server refuse: only it ends.
    const entry = error.topicId != null ? this._subs.get(error.topicId) : null;
    if ((error.status === 404 || error.status === 403) && error.topicId != null) {
      if (entry) {
        this._refuse(entry, error);
        this._emit('error', error);
      }
      return;
    }
    // Any other 4xx would fail the same way again: every subscription ends, saying why.
    for (const each of this._joined()) {
      this._refuse(each, error);
    }
    this._emit('error', error);
    this._setStatus('idle', { error });
  }

  _extraQuery() {
    const query = new URLSearchParams();
    if (this.options.clientId != null) {
      query.set('client', this.options.clientId);
    }
    if (this.options.member != null) {
      query.set('member', JSON.stringify(this.options.member));
    }
    if (this.options.conflate > 0) {
      query.set('conflate', String(this.options.conflate));
    }
    if (this._latestPending) {
      query.set('latest', 'true');
    }
    return query;
  }

  _subscriptionPath(entries, extra) {
    const query = this._extraQuery();
    if (entries.length) {
      query.set('topics', compactTopics(entries));
    }
    for (const [name, value] of Object.entries(extra)) {
      query.set(name, value);
    }
    // `~`, `:` and `,` need no escaping in the topics list; keeping them readable keeps URLs short.
    const text = query.toString().replace(/%2C/g, ',').replace(/%3A/g, ':').replace(/%7E/gi, '~');
    return '/subscriptions' + (text ? '?' + text : '');
  }

  // One long poll for `entries`; resolves with the answer (or null for 204).
  async _poll(entries, timeout, token, signal) {
    const response = await this._send('GET', this._subscriptionPath(entries, { timeout: String(timeout) }), 'poll', {
      signal, token, timeout: (timeout + this.options.pollTimeoutMargin) * 1000, headers: { Accept: 'application/json' }
    });
    return response.status === 204 ? null : response.json();
  }

  // Runs one connection on `kind` until it is aborted for a change of the subscriptions (resolves) or fails (throws).
  _run(kind) {
    if (kind === 'longpoll') {
      return this._runPoll();
    }
    return kind === 'sse' ? this._runSse() : this._runSocket();
  }

  _newConn(kind, entries) {
    const controller = new AbortController();
    const conn = {
      kind,
      address: this._base,
      established: false,
      entries: new Map(entries.map((e) => [e.topicId, e])),
      signal: AbortSignal.any([controller.signal, this._lifetime.signal]),
      abort: () => controller.abort(),
      update: () => false
    };
    this._conn = conn;
    return conn;
  }

  // The subscription a delivery of `conn` for `topicId` belongs to, or null when it was dropped or replaced.
  _route(conn, topicId) {
    const entry = conn.entries.get(topicId);
    return entry && entry.active && this._subs.get(topicId) === entry ? entry : null;
  }

  async _runPoll() {
    let earlyEmpty = 0;
    while (!this._closed) {
      const entries = this._joined();
      if (!entries.length) {
        return;
      }
      const conn = this._newConn('longpoll', entries);
      // Until a poll has been answered, ask for an answer at once, so that the page learns quickly that
      // the server is reachable instead of after a whole poll.
      const timeout = this.status === 'connected' && this.transport === 'longpoll' ? this.options.pollTimeout : 0;
      const started = Date.now();
      let answer;
      try {
        answer = await this._poll(entries, timeout, undefined, conn.signal);
      } catch (error) {
        if (conn.signal.aborted) {
          return;
        }
        throw error;
      } finally {
        if (this._conn === conn) {
          this._conn = null;
        }
      }
      this._established('longpoll');
      if (!answer) {
        // 204 long before the timeout: the server is stopping (it answers waiting polls at once). Poll
        // again at once, but back off if it keeps happening, so a draining server is not hammered.
        earlyEmpty = timeout > 0 && Date.now() - started < timeout * 500 ? earlyEmpty + 1 : 0;
        if (earlyEmpty > 1) {
          await this._retry(backoffDelay(earlyEmpty - 2, this.options), null);
        }
        continue;
      }
      earlyEmpty = 0;
      this._stopStreak = 0;
      this._deliver(answer, conn.entries);
    }
  }

  // Applies one poll answer: notices first, then messages, following the protocol's cursor rule.
  _deliver(answer, entries) {
    if (!answer) {
      return;
    }
    const route = (id) => {
      const entry = entries.get(id);
      return entry && entry.active && this._subs.get(id) === entry ? entry : null;
    };
    for (const notice of answer.notices || []) {
      const entry = route(notice.topicId);
      if (entry) {
        this._applyNotice(entry, notice);
      }
    }
    for (const message of answer.messages || []) {
      const entry = route(message.topicId);
      if (entry) {
        this._applyMessage(entry, message);
      }
    }
  }

  _applyNotice(entry, notice) {
    this._latestPending = false;
    const epoch = epochOf(notice);
    let item = { ...notice };
    if (notice.type === 'gap' || notice.type === 'conflated') {
      entry.cursor = Math.max(entry.cursor || 0, notice.toMessageId + 1);
    } else if (notice.type === 'state') {
      // The document at `version`: its changes follow from the next id on.
      entry.cursor = notice.version + 1;
    } else if (notice.type === 'reset') {
      entry.cursor = notice.firstMessageId;
      item = { ...notice, epochChanged: notice.reason === 'epochChanged' };
    } else if (notice.type === 'topicDeleted') {
      this._drop(entry);
      entry.owner._push(item);
      entry.owner._topicEnded(null);
      return;
    }
    entry.epoch = epoch || entry.epoch;
    // Every notice is surfaced, those of a type this client does not know too.
    entry.owner._push(item);
  }

  _applyMessage(entry, message) {
    this._latestPending = false;
    // A message below the cursor was delivered before (a stream resumed, a poll that raced a change):
    // each (topic, message id) is handed out once.
    if (entry.cursor != null && message.messageId < entry.cursor) {
      return;
    }
    entry.cursor = message.messageId + 1;
    entry.epoch = epochOf(message) || entry.epoch;
    entry.owner._push(decodeMessage(message));
  }

  // ---- Server-Sent Events (over fetch, so the status of a refusal is seen and the token goes in a header) ----

  async _runSse() {
    const entries = this._joined();
    const conn = this._newConn('sse', entries);
    conn.deleted = new Set();
    // The stream carries exactly its topics: any other change of the set opens it again.
    conn.update = (joined) => joined.length === [...conn.entries.values()].filter((e) => e.active).length
      && joined.every((e) => conn.entries.get(e.topicId) === e)
      && [...conn.entries.values()].every((e) => e.active || conn.deleted.has(e.topicId));
    let timer = null;
    const watchdog = (ms, make) => {
      clearTimeout(timer);
      timer = setTimeout(() => { conn.failure = make(); conn.abort(); }, ms);
    };
    try {
      let response;
      try {
        watchdog(this.options.requestTimeout, () => Object.assign(new LaharsubError('the event stream did not open in time.'), { openFailed: true }));
        response = await this._send('GET', this._subscriptionPath(entries, {}), 'subscription', {
          signal: conn.signal, timeout: 0, headers: { Accept: 'text/event-stream' }
        });
      } catch (error) {
        if (conn.failure) {
          throw conn.failure;
        }
        if (conn.signal.aborted) {
          return;
        }
        throw error;
      }
      if (!/^text\/event-stream/i.test(response.headers.get('Content-Type') || '')) {
        await response.body?.cancel();
        throw Object.assign(new LaharsubError('the subscription URL did not answer an event stream.'), { openFailed: true });
      }
      // The server writes its first event at once; a stream that says nothing for this long is held
      // back by a buffering proxy, which would deliver nothing until the stream ends.
      watchdog(this.options.sseOpenTimeout, () => Object.assign(new LaharsubError('the event stream did not start in time (a buffering proxy?).'), { openFailed: true }));
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      const parser = sseParser((event) => this._onSseEvent(conn, event, watchdog));
      for (;;) {
        let chunk;
        try {
          chunk = await reader.read();
        } catch (error) {
          if (conn.failure) {
            throw conn.failure;
          }
          if (conn.signal.aborted) {
            return;
          }
          throw new LaharsubError('the event stream was cut.', { cause: error });
        }
        if (chunk.done) {
          if (conn.failure) {
            throw conn.failure;
          }
          throw conn.established ? new LaharsubError('the event stream ended.') : Object.assign(new LaharsubError('the event stream ended before it started.'), { openFailed: true });
        }
        if (conn.established) {
          // Heartbeats every 15 s by default: silence longer than this means the connection is dead.
          watchdog(this.options.heartbeatTimeout, () => new LaharsubError('the event stream went silent (no heartbeat).'));
        }
        parser(chunk.value);
        if (conn.failure) {
          reader.cancel().catch(() => {});
          throw conn.failure;
        }
      }
    } finally {
      clearTimeout(timer);
      if (this._conn === conn) {
        this._conn = null;
      }
    }
  }

  _onSseEvent(conn, event, watchdog) {
    if (conn.signal.aborted) {
      return;
    }
    let data;
    try {
      data = JSON.parse(event.data);
    } catch {
      return;
    }
    if (!data || typeof data !== 'object') {
      return;
    }
    if (event.type === 'message') {
      const entry = this._route(conn, data.topicId);
      if (entry) {
        this._stopStreak = 0;
        this._applyMessage(entry, data);
      }
    } else if (event.type === 'notice') {
      const entry = this._route(conn, data.topicId);
      if (entry) {
        this._stopStreak = 0;
        if (data.type === 'topicDeleted') {
          conn.deleted.add(data.topicId);
        }
        this._applyNotice(entry, data);
      }
    } else if (event.type === 'reconnect') {
      const error = new LaharsubError(`the server ended the event stream (${String(data.reason)}${data.detail ? ': ' + data.detail : ''})`);
      // `redecide`: the server decides this stream's access again; reconnecting at once (from the cursors) is how.
      conn.failure = Object.assign(error, data.reason === 'tokenExpired' ? { tokenExpired: true } : data.reason === 'redecide' ? { slow: true } : { stopping: true });
    } else if (Array.isArray(data.topics) && !conn.established) {
      // The stream's first event (named `subscribed`, whatever its name) carries the resolved cursors.
      for (const position of data.topics) {
        const entry = position && this._route(conn, position.topicId);
        if (entry && entry.epoch == null) {
          entry.epoch = epochOf(position);
        }
      }
      conn.established = true;
      watchdog(this.options.heartbeatTimeout, () => new LaharsubError('the event stream went silent (no heartbeat).'));
      this._established('sse');
    }
  }

  // ---- WebSocket ----------------------------------------------------------------------------------

  async _runSocket() {
    const token = this.options.accessToken == null ? null : await this._token();
    const entries = this._joined();
    const conn = this._newConn('websocket', entries);
    // Each topic the socket follows, with the number of the frame that (re)positioned it while unanswered.
    const topics = new Map(entries.map((e) => [e.topicId, { entry: e, pending: 0 }]));
    const frames = new Map();
    const publishes = new Map();
    let count = 0;
    const Ctor = this.options.WebSocket || globalThis.WebSocket;
    const extra = token ? { access_token: token } : {};
    const url = new URL(this.baseUrls[conn.address] + this._subscriptionPath(entries, extra), globalThis.location?.href);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    let socket;
    try {
      socket = new Ctor(url.href, SUBPROTOCOL);
    } catch (cause) {
      this._conn = null;
      throw Object.assign(new LaharsubError('the WebSocket could not be created.', { cause }), { openFailed: true, token });
    }
    const send = (frame) => {
      frame.id = 'c' + ++count;
      socket.send(JSON.stringify(frame));
      return count;
    };
    const sync = (joined) => {
      if (!conn.established || socket.readyState !== 1) {
        return true;
      }
      const wanted = new Set();
      for (const entry of joined) {
        wanted.add(entry.topicId);
        if (topics.get(entry.topicId)?.entry !== entry) {
          const n = send({ type: 'subscribe', topics: compactTopics([entry]) });
          frames.set('c' + n, { n, kind: 'subscribe', topicId: entry.topicId });
          topics.set(entry.topicId, { entry, pending: n });
          conn.entries.set(entry.topicId, entry);
        }
      }
      const gone = [...topics.keys()].filter((id) => !wanted.has(id));
      if (gone.length) {
        gone.forEach((id) => topics.delete(id));
        const n = send({ type: 'unsubscribe', topics: gone.join(',') });
        frames.set('c' + n, { n, kind: 'unsubscribe' });
      }
      this._setStatus(joined.length ? 'connected' : 'idle');
      return true;
    };
    // An open socket changes its topics with frames, and stays open without any (it carries publishes).
    conn.update = sync;
    conn.publish = (frame, signal) => new Promise((resolve, reject) => {
      const n = ++count;
      frame.id = 'c' + n;
      const pending = { resolve, reject };
      const settle = (error) => {
        publishes.delete(frame.id);
        clearTimeout(pending.timer);
        signal?.removeEventListener('abort', pending.aborted);
        if (error) {
          reject(error);
        }
      };
      pending.settle = settle;
      pending.timer = setTimeout(() => settle(Object.assign(new LaharsubError('the publish got no answer in time on the WebSocket (it may have been stored).'), { unknown: true })), this.options.requestTimeout);
      pending.aborted = () => settle(abortError(signal));
      signal?.addEventListener('abort', pending.aborted, { once: true });
      publishes.set(frame.id, pending);
      try {
        socket.send(JSON.stringify(frame));
      } catch (cause) {
        settle(Object.assign(new LaharsubError('the publish could not be sent on the WebSocket.', { cause }), { notSent: true }));
      }
    });
    // The deliveries for `topicId`, or null: no longer followed, or re-positioned by an unanswered frame.
    const route = (topicId) => {
      const t = topics.get(topicId);
      return t && !t.pending && this._route(conn, topicId) === t.entry ? t.entry : null;
    };
    const settleFrames = (n) => {
      for (const t of topics.values()) {
        if (t.pending && t.pending <= n) {
          t.pending = 0;
        }
      }
      for (const [id, sent] of frames) {
        if (sent.n <= n) {
          frames.delete(id);
        }
      }
    };
    const refused = (topicId, frameNumber, problem) => {
      const t = topics.get(topicId);
      if (t && (frameNumber == null || t.pending === frameNumber)) {
        topics.delete(topicId);
      }
      const entry = t && this._subs.get(topicId) === t.entry ? t.entry : null;
      if (entry) {
        const error = problemError('subscribe to topic ' + topicId, problem);
        this._refuse(entry, error);
        this._emit('error', error);
      }
    };
    const onFrame = (text) => {
      let frame;
      try {
        frame = JSON.parse(text);
      } catch {
        return;
      }
      if (!frame || typeof frame !== 'object') {
        return;
      }
      if (frame.type === 'message' && frame.message) {
        const entry = route(frame.message.topicId);
        if (entry) {
          this._stopStreak = 0;
          this._applyMessage(entry, frame.message);
        }
      } else if (frame.type === 'notice' && frame.notice) {
        const entry = route(frame.notice.topicId);
        if (entry) {
          this._stopStreak = 0;
          if (frame.notice.type === 'topicDeleted') {
            // The server has left it out already: no unsubscribe frame.
            topics.delete(frame.notice.topicId);
          }
          this._applyNotice(entry, frame.notice);
        }
      } else if (frame.type === 'subscribed') {
        const sent = frames.get(frame.id);
        if (sent) {
          settleFrames(sent.n);
        }
        for (const position of frame.topics || []) {
          const entry = position && route(position.topicId);
          if (entry && entry.epoch == null) {
            entry.epoch = epochOf(position);
          }
        }
        if (!conn.established) {
          conn.established = true;
          clearTimeout(openTimer);
          this._established('websocket');
          sync(this._joined());
        }
      } else if (frame.type === 'published' || (frame.type === 'problem' && publishes.has(frame.id))) {
        const pending = publishes.get(frame.id);
        if (pending) {
          pending.settle(frame.type === 'problem' ? problemError('publish', frame.problem) : null);
          if (frame.type === 'published') {
            pending.resolve(frame);
          }
        }
      } else if (frame.type === 'problem') {
        const problem = frame.problem && typeof frame.problem === 'object' ? frame.problem : {};
        const sent = frames.get(frame.id);
        if (problem.status === 404 && isId(problem.topicId)) {
          // Unknown at the socket's start or when the frames up to this one were applied: applied without it.
          if (sent) {
            settleFrames(sent.n);
          }
          refused(problem.topicId, null, problem);
        } else if (sent?.kind === 'subscribe') {
          // This frame alone was refused (403, 409, 400): nothing changed.
          frames.delete(frame.id);
          refused(sent.topicId, sent.n, problem);
        } else {
          this._emit('error', problemError('changing the subscriptions', problem));
        }
      }
    };
    let openTimer;
    try {
      await new Promise((resolve, reject) => {
        // A proxy may also hold the upgrade without answering.
        openTimer = setTimeout(() => reject(Object.assign(new LaharsubError('the WebSocket did not open in time.'), { openFailed: true, token })), this.options.requestTimeout);
        conn.signal.addEventListener('abort', () => resolve(), { once: true });
        socket.onmessage = (event) => {
          if (!conn.signal.aborted && typeof event.data === 'string') {
            onFrame(event.data);
          }
        };
        socket.onclose = (event) => reject(this._closeError(conn, event.code, event.reason, token));
        // An abnormal end fires error before close (1006); some WebSocket implementations (Node 22's) fire
        // no close at all when the connection is refused.
        socket.onerror = () => reject(this._closeError(conn, 1006, '', token));
      });
    } finally {
      clearTimeout(openTimer);
      socket.onmessage = socket.onclose = socket.onerror = null;
      try {
        socket.close(1000);
      } catch {
        // Already closing.
      }
      if (this._conn === conn) {
        this._conn = null;
      }
      for (const pending of [...publishes.values()]) {
        pending.settle(Object.assign(new LaharsubError('the WebSocket closed before the publish was answered: it may have been stored.'), { unknown: true }));
      }
    }
  }

  _closeError(conn, code, reason, token) {
    const said = ` (WebSocket close code ${code}${reason ? ': ' + reason : ''})`;
    if (code === 4001) {
      return Object.assign(new LaharsubError('the access token expired' + said + '.'), { tokenExpired: true });
    }
    if (code === 4000) {
      return Object.assign(new LaharsubError('the server closed the WebSocket, refusing a frame of this client' + said + '.'), { refusedFrame: true });
    }
    if (code === 1001) {
      return Object.assign(new LaharsubError('the server is stopping' + said + '.'), { stopping: true });
    }
    if (code === 4002) {
      return Object.assign(new LaharsubError('the server decides this socket\'s access again' + said + '.'), { slow: true });
    }
    if (code === 4008) {
      return Object.assign(new LaharsubError('the server closed the WebSocket for reading too slowly' + said + '.'), { slow: true });
    }
    return conn.established ? new LaharsubError('the WebSocket was cut' + said + '.')
      : Object.assign(new LaharsubError('the WebSocket could not be opened' + said + '.'), { openFailed: true, token });
  }
}

/** A Server-Sent Events parser (the WHATWG rules): feed it text; it calls `dispatch({ type, data, id })`. */
export function sseParser(dispatch) {
  let buffer = '';
  let type = '';
  let data = [];
  let id = null;
  let afterCR = false;
  return (text) => {
    // A CRLF split between two chunks is one line end, not two.
    buffer += afterCR && text[0] === '\n' ? text.slice(1) : text;
    afterCR = text.endsWith('\r');
    const lines = buffer.split(/\r\n|\r|\n/);
    // The last piece is an incomplete line.
    buffer = lines.pop();
    for (const line of lines) {
      if (line === '') {
        if (data.length) {
          dispatch({ type: type || 'message', data: data.join('\n'), id });
        }
        type = '';
        data = [];
        continue;
      }
      if (line[0] === ':') {
        continue;
      }
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value[0] === ' ') {
        value = value.slice(1);
      }
      if (field === 'event') {
        type = value;
      } else if (field === 'data') {
        data.push(value);
      } else if (field === 'id') {
        id = value;
      }
    }
  };
}

/** The presence event a message of a companion topic carries, { type: 'join' | 'leave', member, data, occupancy }, or null. */
export function presenceEvent(message) {
  const event = message && message.data;
  if (!isPlain(event) || (event.type !== 'join' && event.type !== 'leave') || typeof event.member !== 'string' || typeof event.occupancy !== 'number') {
    return null;
  }
  return { type: event.type, member: event.member, data: isPlain(event.data) ? event.data : null, occupancy: event.occupancy };
}

/**
 * Keeps a live member list of a topic with presence: subscribes to its companion topic, reads the whole
 * list, and applies each join and leave (reading the list again after a gap or a reset).
 * `onChange(members, event)` gets a Map member id -> data and the event (null for a fresh list).
 */
export function watchPresence(client, topicId, { onChange, onError, signal } = {}) {
  const id = toId(topicId, 'topicId');
  const controller = new AbortController();
  signal?.addEventListener('abort', () => controller.abort(), { once: true });
  let members = new Map();
  let pending = null;
  let subscription = null;
  const changed = (event) => report(onChange, members, event);
  const apply = (event) => {
    if (event.type === 'join') {
      members.set(event.member, event.data);
    } else {
      members.delete(event.member);
    }
    changed(event);
  };
  const reload = async () => {
    pending = [];
    const list = new Map();
    for (let after; ;) {
      const page = await client.getPresence(id, { after, limit: 1000, signal: controller.signal });
      for (const m of page.members || []) {
        list.set(m.member, m.data);
      }
      if (page.next == null || page.next === after) {
        break;
      }
      after = page.next;
    }
    members = list;
    const events = pending;
    pending = null;
    changed(null);
    events.forEach(apply);
  };
  const failed = (error) => {
    if (!controller.signal.aborted) {
      report(onError, error);
    }
  };
  const ready = (async () => {
    const info = await client.getTopic(id, { signal: controller.signal });
    if (!info.presenceTopicId) {
      throw new LaharsubError(`topic ${id} has no presence: create it with createTopic({ presence: true }).`, { status: 409 });
    }
    // Subscribed first and read second, so that no change falls between the list and the events.
    subscription = client.subscribe(info.presenceTopicId, {
      signal: controller.signal,
      onItem: (item) => {
        if (item.type === 'message') {
          const event = presenceEvent(item);
          if (event) {
            pending ? pending.push(event) : apply(event);
          }
        } else if (item.type === 'gap' || item.type === 'reset') {
          reload().catch(failed);
        } else if (item.type === 'topicDeleted') {
          members = new Map();
          changed(null);
        } else if (item.type === 'error') {
          failed(item.error);
        }
      }
    });
    await subscription.ready;
    await reload();
  })();
  ready.catch(failed);
  return {
    topicId: id,
    ready,
    members: () => members,
    get occupancy() { return members.size; },
    stop: () => controller.abort()
  };
}

/**
 * A state topic's document kept current (client.subscribeState): the snapshot first, then each change
 * applied in order (a merge patch, or a whole document that replaces it), so that `document` is always
 * the topic's exact document at `version`. A change it cannot apply (a server that sent a gap) is
 * recovered from a fresh snapshot.
 */
export class StateSubscription {
  constructor(client, topicId, { onState, onItem, signal } = {}) {
    for (const [name, value] of [['onState', onState], ['onItem', onItem]]) {
      if (value != null && typeof value !== 'function') {
        fail(`${name} must be a function.`);
      }
    }
    this.topicId = toId(topicId, 'topicId');
    /** The document (null until the first snapshot), its version and epoch. */
    this.document = null;
    this.version = null;
    this.epoch = null;
    this._client = client;
    this._onState = onState || null;
    this._onItem = onItem || null;
    this._conflatedTo = null;
    let settle;
    this.ready = new Promise((resolve, reject) => { settle = { resolve, reject }; });
    this.ready.catch(() => {});
    this._settle = settle;
    this._follow();
    if (signal) {
      signal.aborted ? queueMicrotask(() => this.unsubscribe()) : signal.addEventListener('abort', () => this.unsubscribe(), { once: true });
    }
  }

  /** Whether the topic is still followed. */
  get active() {
    return this._sub.active;
  }

  /** Applies a merge patch; `ifCurrent: true` only if the document is still the one held here (else a 412). */
  patch(patch, { ifCurrent = false, ...options } = {}) {
    return this._client.publishPatch(this.topicId, patch, this._condition(ifCurrent, options));
  }

  /** Replaces the document; `ifCurrent` as for patch. */
  replace(document, { ifCurrent = false, ...options } = {}) {
    return this._client.replaceState(this.topicId, document, this._condition(ifCurrent, options));
  }

  unsubscribe() {
    this._sub.unsubscribe();
    this._settle.reject(new LaharsubError('the state subscription ended before its first document.'));
  }

  _condition(ifCurrent, options) {
    if (ifCurrent && this.version == null) {
      fail('ifCurrent needs the document: wait for ready.');
    }
    return ifCurrent ? { ...options, ifEpoch: this.epoch, ifVersion: this.version } : options;
  }

  _follow() {
    this._sub = this._client.subscribe({ topicId: this.topicId, from: 'state' }, { onItem: (item) => this._apply(item) });
  }

  _apply(item) {
    let document;
    if (item.type === 'state') {
      document = item.document;
      this.version = item.version;
    } else if (item.type === 'conflated') {
      // The next message composes the skipped run: it follows the run rather than the version.
      this._conflatedTo = item.toMessageId;
    } else if (item.type === 'message' && this.document != null
      && (item.messageId === this.version + 1 || (this._conflatedTo != null && item.messageId === this._conflatedTo + 1))) {
      this._conflatedTo = null;
      const type = item.contentType || '';
      if (type.toLowerCase().startsWith(PATCH_TYPE)) {
        document = mergePatch(this.document, item.data);
      } else if (JSON_TYPE.test(type) && isObject(item.data)) {
        document = item.data;
      }
      this.version = item.messageId;
    }
    report(this._onItem, item, this);
    if (document === undefined) {
      if (item.type === 'gap' || item.type === 'message') {
        // Not a change that follows the document held (a gap, a message out of sequence or of another
        // type): the document is read again.
        this._sub.unsubscribe();
        this._follow();
      } else if (item.type === 'error' || item.type === 'topicDeleted') {
        this._settle.reject(item.error || new LaharsubError(`topic ${this.topicId} was deleted.`));
      }
      return;
    }
    this.document = document;
    this.epoch = item.epoch || this.epoch;
    this._settle.resolve(this);
    report(this._onState, document, { version: this.version, epoch: this.epoch, item });
  }
}
