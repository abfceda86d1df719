/*!
 * jquery.laharsub.js: the jQuery client for Laharsub, HTTP pub/sub. All of a page's subscriptions share
 * one connection, a WebSocket, a Server-Sent Events stream or a long poll (tried in that order).
 * $.laharsub over the laharsub module, bundled: jQuery 3.7 or 4 and nothing else. Wire protocol: docs/protocol.md.
 * Built by src/Clients/JQuery/build.mjs from src/Clients/JQuery/src and src/Clients/JavaScript: edit those.
 * Copyright (c) 2026 the Laharsub contributors. MIT licence: see LICENSE at the repository root.
 */
(function (factory) {
  'use strict';
  if (typeof define === 'function' && define.amd) {
    define(['jquery'], factory);
  } else if (typeof module === 'object' && module.exports) {
    // CommonJS gets the factory: jQuery needs a window, which only the caller has.
    module.exports = factory;
  } else {
    factory(window.jQuery);
  }
}(function ($) {
var laharsubPlugin = (() => {
  var __defProp = Object.defineProperty;
  var __getOwnPropDesc = Object.getOwnPropertyDescriptor;
  var __getOwnPropNames = Object.getOwnPropertyNames;
  var __hasOwnProp = Object.prototype.hasOwnProperty;
  var __export = (target, all) => {
    for (var name in all)
      __defProp(target, name, { get: all[name], enumerable: true });
  };
  var __copyProps = (to, from, except, desc) => {
    if (from && typeof from === "object" || typeof from === "function") {
      for (let key of __getOwnPropNames(from))
        if (!__hasOwnProp.call(to, key) && key !== except)
          __defProp(to, key, { get: () => from[key], enumerable: !(desc = __getOwnPropDesc(from, key)) || desc.enumerable });
    }
    return to;
  };
  var __toCommonJS = (mod) => __copyProps(__defProp({}, "__esModule", { value: true }), mod);

  // ../../src/Clients/JQuery/src/jquery.laharsub.mjs
  var jquery_laharsub_exports = {};
  __export(jquery_laharsub_exports, {
    install: () => install
  });

  // ../../src/Clients/JavaScript/laharsub.js
  var TRANSPORTS = ["websocket", "sse", "longpoll"];
  var SUBPROTOCOL = "laharsub.v1";
  var JSON_TYPE = /^application\/(?:[\w.+-]*\+)?json\b/i;
  var PATCH_TYPE = "application/merge-patch+json";
  var EPOCH = /^[0-9A-Za-z_-]{1,32}$/;
  var CLIENT_ID = /^[A-Za-z0-9_.:@-]{1,64}$/;
  var KEY = /^[\x20\x21\x23-\x5b\x5d-\x7e]{1,255}$/;
  var MAX_FRAME = 320 * 1024;
  var DEFAULTS = {
    pollTimeout: 30,
    pollTimeoutMargin: 10,
    requestTimeout: 3e4,
    retryDelay: 500,
    maxRetryDelay: 3e4,
    retryJitter: 0.5,
    idempotentPublishes: true,
    publishAttempts: 4,
    headers: null,
    accessToken: null,
    transports: TRANSPORTS,
    sseOpenTimeout: 5e3,
    heartbeatTimeout: 45e3,
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
  var LaharsubError = class extends Error {
    constructor(message, { status = 0, problem = null, retryAfter = null, cause } = {}) {
      super(message, cause === void 0 ? void 0 : { cause });
      this.name = "LaharsubError";
      this.status = status;
      this.problem = problem;
      this.topicId = problem && isId(problem.topicId) ? problem.topicId : null;
      this.retryAfter = retryAfter;
    }
  };
  function fail(message) {
    throw new TypeError("laharsub: " + message);
  }
  function isId(value) {
    return Number.isSafeInteger(value) && value > 0;
  }
  function toId(value, what) {
    const id = typeof value === "string" && /^[0-9]+$/.test(value) ? Number(value) : value;
    if (!isId(id)) {
      fail(`${what} must be a positive integer (got ${String(value)}).`);
    }
    return id;
  }
  function isPlain(value) {
    const proto = value !== null && typeof value === "object" ? Object.getPrototypeOf(value) : void 0;
    return proto === null || proto !== void 0 && Object.getPrototypeOf(proto) === null && !Array.isArray(value);
  }
  function checkEpoch(epoch, what) {
    if (typeof epoch !== "string" || !EPOCH.test(epoch)) {
      fail(`${what} must be an epoch as the server gives it: 1 to 32 characters of 0-9, A-Z, a-z, _ and - (got ${String(epoch)}).`);
    }
    return epoch;
  }
  function epochOf(item) {
    return typeof item.epoch === "string" && EPOCH.test(item.epoch) ? item.epoch : null;
  }
  function validateOptions(options) {
    if (options != null && typeof options !== "object") {
      fail("options must be an object.");
    }
    for (const name of Object.keys(options || {})) {
      if (!(name in DEFAULTS)) {
        fail(`unknown option "${name}" (known: ${Object.keys(DEFAULTS).join(", ")}).`);
      }
    }
    const o = { ...DEFAULTS, ...options };
    const number = (name, min, max = Infinity, whole = false) => {
      const v = o[name];
      if (typeof v !== "number" || !(v >= min && v <= max) || whole && v % 1 !== 0) {
        fail(`option ${name} must be a ${whole ? "whole " : ""}number from ${min}${max < Infinity ? " to " + max : ""} (got ${String(v)}).`);
      }
    };
    number("pollTimeout", 1, Infinity, true);
    number("pollTimeoutMargin", 1);
    number("requestTimeout", 1);
    number("retryDelay", 1);
    number("maxRetryDelay", o.retryDelay);
    number("retryJitter", 0, 1);
    number("publishAttempts", 1, Infinity, true);
    number("sseOpenTimeout", 1);
    number("heartbeatTimeout", 1);
    number("conflate", 0, 6e4, true);
    for (const name of ["idempotentPublishes", "latest"]) {
      if (typeof o[name] !== "boolean") {
        fail(`option ${name} must be true or false (got ${String(o[name])}).`);
      }
    }
    for (const name of ["onStatus", "onTransport", "onError", "WebSocket"]) {
      if (o[name] != null && typeof o[name] !== "function") {
        fail(`option ${name} must be a function.`);
      }
    }
    if (o.headers != null && !isPlain(o.headers)) {
      fail("option headers must be a plain object of header names and values.");
    }
    if (o.accessToken != null && typeof o.accessToken !== "string" && typeof o.accessToken !== "function") {
      fail("option accessToken must be a token string or a function returning one (or a promise of one).");
    }
    if (o.clientId != null && (typeof o.clientId !== "string" || !CLIENT_ID.test(o.clientId))) {
      fail(`option clientId is 1 to 64 characters of A-Z a-z 0-9 _ . : @ - (got ${String(o.clientId)}).`);
    }
    if (o.member != null && !isPlain(o.member)) {
      fail(`option member must be a plain object such as { name: 'Alice' } (got ${String(o.member)}).`);
    }
    if (o.signal != null && typeof o.signal.addEventListener !== "function") {
      fail("option signal must be an AbortSignal.");
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
  function normalizeBaseUrls(baseUrl) {
    const list = Array.isArray(baseUrl) ? baseUrl : [baseUrl];
    if (!list.length) {
      fail("baseUrl is an empty array: list at least one API root.");
    }
    const urls = list.map((url) => {
      if (typeof url !== "string" || !url) {
        fail(`baseUrl must be the Laharsub API root, e.g. "/ps" or "https://example.com/ps", or an array of several instances' roots.`);
      }
      return url.replace(/\/+$/, "");
    });
    urls.forEach((url, i) => {
      if (urls.indexOf(url) !== i) {
        fail(`baseUrl lists "${url}" twice: list each instance once.`);
      }
    });
    return urls;
  }
  function isUnavailable(status) {
    return status === 0 || status === 502 || status === 503 || status === 504;
  }
  function isRetryable(status) {
    return status === 0 || status === 408 || status === 429 || status >= 500;
  }
  function backoffDelay(attempt, options, random = Math.random()) {
    const base = Math.min(options.maxRetryDelay, options.retryDelay * 2 ** Math.min(attempt, 30));
    return Math.round(base * (1 - options.retryJitter * random));
  }
  function parseRetryAfter(value, now = Date.now()) {
    if (value == null || value === "") {
      return null;
    }
    const text = String(value).trim();
    if (/^[0-9]+$/.test(text)) {
      return Number(text) * 1e3;
    }
    const date = Date.parse(text);
    return Number.isNaN(date) ? null : Math.max(0, date - now);
  }
  function compactTopics(entries) {
    return entries.map((e) => e.topicId + (e.cursor == null ? e.snapshot ? ":state" : "" : ":" + e.cursor + (e.epoch == null ? "" : "~" + e.epoch))).join(",");
  }
  var isObject = (value) => value !== null && typeof value === "object" && !Array.isArray(value);
  function mergePatch(target, patch) {
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
  function parseStateTag(tag) {
    const match = /^(?:W\/)?"([0-9A-Za-z_-]{1,32}):([0-9]+)"$/.exec(tag || "");
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
    let binary = "";
    for (let i = 0; i < bytes.length; i += 8192) {
      binary += String.fromCharCode.apply(null, bytes.subarray(i, i + 8192));
    }
    return btoa(binary);
  }
  function decodeMessage(message) {
    let data = message.body;
    if (message.encoding === "base64") {
      data = decodeBase64(message.body);
    } else if (JSON_TYPE.test(message.contentType || "")) {
      try {
        data = JSON.parse(message.body);
      } catch {
      }
    }
    return { type: "message", ...message, data };
  }
  function publishBody(data, contentType) {
    if (contentType != null && (typeof contentType !== "string" || !contentType)) {
      fail('publish contentType must be a media type such as "text/plain; charset=utf-8".');
    }
    if (data == null || data === "") {
      fail("publish needs a non-empty message: Laharsub refuses empty bodies.");
    }
    if (data instanceof ArrayBuffer || ArrayBuffer.isView(data) || typeof Blob !== "undefined" && data instanceof Blob) {
      return { body: data, contentType: contentType || "application/octet-stream" };
    }
    if (typeof data === "string") {
      return { body: data, contentType: contentType || "text/plain; charset=utf-8" };
    }
    if (contentType && !JSON_TYPE.test(contentType)) {
      fail(`publish got ${Array.isArray(data) ? "an array" : typeof data} with content type "${contentType}": pass a string or bytes for other types, or omit the type to send JSON.`);
    }
    return { body: JSON.stringify(data), contentType: contentType || "application/json" };
  }
  function publishFrame(target, body, key) {
    const frame = { type: "publish", ...target, contentType: body.contentType };
    if (key != null) {
      frame.idempotencyKey = key;
    }
    const data = body.body;
    if (typeof data === "string") {
      frame.encoding = "text";
      frame.body = data;
    } else if (data instanceof ArrayBuffer || ArrayBuffer.isView(data)) {
      frame.encoding = "base64";
      frame.body = encodeBase64(data instanceof ArrayBuffer ? new Uint8Array(data) : new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    } else {
      return null;
    }
    return frame.body.length > MAX_FRAME ? null : frame;
  }
  function describeProblem(problem) {
    if (!problem || !(problem.detail || problem.title)) {
      return null;
    }
    let text = problem.detail || problem.title;
    if (problem.errors && typeof problem.errors === "object") {
      text += " " + Object.entries(problem.errors).map(([key, messages]) => key + ": " + [].concat(messages).join(" ")).join("; ");
    }
    return text;
  }
  function problemError(what, problem) {
    problem = problem && typeof problem === "object" ? problem : {};
    const status = isId(problem.status) ? problem.status : 0;
    const retryAfter = typeof problem.retryAfter === "number" ? problem.retryAfter * 1e3 : null;
    return new LaharsubError(`${what} failed: ${describeProblem(problem) || "status " + status}`, { status, problem, retryAfter });
  }
  async function errorFromResponse(response, what) {
    let problem = null;
    if (/json/i.test(response.headers.get("Content-Type") || "")) {
      try {
        problem = await response.json();
      } catch {
        problem = null;
      }
    }
    let reason = describeProblem(problem);
    if (!reason && response.status === 414) {
      reason = "HTTP 414: the subscription names more topics than fit in the server's request line. Split the topics over several clients, or raise Kestrel:Limits:MaxRequestLineSize.";
    }
    return new LaharsubError(`${what} failed: ${reason || "HTTP " + response.status + (response.statusText ? " " + response.statusText : "")}`, {
      status: response.status,
      problem,
      retryAfter: parseRetryAfter(response.headers.get("Retry-After"))
    });
  }
  function newKey() {
    return Array.from(globalThis.crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
  }
  function report(callback, ...args) {
    if (callback) {
      try {
        callback(...args);
      } catch (error) {
        setTimeout(() => {
          throw error;
        }, 0);
      }
    }
  }
  function abortError(signal) {
    return signal.reason instanceof Error ? signal.reason : new DOMException("The operation was aborted.", "AbortError");
  }
  var Subscription = class {
    constructor(client, entries, options) {
      this._client = client;
      this._entries = entries;
      this._onItem = options.onItem || null;
      this._queue = [];
      this._waiter = null;
      this._ended = false;
      this._error = null;
      let settle;
      this.ready = new Promise((resolve, reject) => {
        settle = { resolve, reject };
      });
      this.ready.catch(() => {
      });
      this._settle = settle;
      this._unjoined = entries.length;
      if (options.signal) {
        if (options.signal.aborted) {
          queueMicrotask(() => this.unsubscribe());
        } else {
          options.signal.addEventListener("abort", () => this.unsubscribe(), { once: true });
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
        fail("this subscription hands its items to onItem: subscribe without onItem to iterate it.");
      }
      const next = async () => {
        while (!this._queue.length && !this._ended) {
          await new Promise((resolve) => {
            this._waiter = { resolve };
          });
        }
        if (this._queue.length) {
          return { value: this._queue.shift(), done: false };
        }
        const error = this._error;
        this._error = null;
        if (error) {
          throw error;
        }
        return { value: void 0, done: true };
      };
      return {
        next,
        return: () => {
          this.unsubscribe();
          return Promise.resolve({ value: void 0, done: true });
        },
        [Symbol.asyncIterator]() {
          return this;
        }
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
      this._settle.reject(error || new LaharsubError("the subscription ended before it started."));
      this._wake();
    }
  };
  var LaharsubClient = class {
    constructor(baseUrl, options) {
      this.baseUrls = normalizeBaseUrls(baseUrl);
      this.options = validateOptions(options);
      this._base = 0;
      this.transport = null;
      this.status = "idle";
      this._listeners = { status: /* @__PURE__ */ new Set(), transport: /* @__PURE__ */ new Set(), error: /* @__PURE__ */ new Set() };
      this._subs = /* @__PURE__ */ new Map();
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
          signal.addEventListener("abort", () => this.close(), { once: true });
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
      report(this.options["on" + type[0].toUpperCase() + type.slice(1)], ...args);
      for (const listener of [...this._listeners[type]]) {
        report(listener, ...args);
      }
    }
    _setStatus(status, info = {}) {
      if (status !== this.status || status === "retrying") {
        this.status = status;
        this._emit("status", status, info);
      }
    }
    // ---- REST -------------------------------------------------------------------------------------
    async _token(accessToken = this.options.accessToken) {
      try {
        return typeof accessToken === "function" ? await accessToken() : accessToken;
      } catch (cause) {
        throw new LaharsubError("the accessToken function failed, so nothing was sent.", { cause });
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
      const refreshable = token === void 0 && typeof this.options.accessToken === "function";
      for (let refreshed = false; ; refreshed = true) {
        const bearer = token === void 0 ? await this._token() : token;
        const all = { ...this.options.headers, ...headers };
        if (bearer) {
          all.Authorization = "Bearer " + bearer;
        }
        let response;
        try {
          response = await fetch(this.baseUrls[address] + path, { method, body, headers: all, signal: combined });
        } catch (cause) {
          if (signal?.aborted) {
            throw abortError(signal);
          }
          const timedOut = cause?.name === "TimeoutError";
          const error2 = new LaharsubError(`${what} failed: ${timedOut ? "no answer in time" : "the server could not be reached"}.`, { cause });
          this._failOver(address);
          throw error2;
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
    async _json(method, path, what, init, read = (response) => response.status === 204 ? void 0 : response.json()) {
      try {
        return await read(await this._send(method, path, what, init));
      } catch (error) {
        if (error instanceof LaharsubError) {
          this._emit("error", error);
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
      for (const [name, value] of [["presence", presence], ["state", state]]) {
        if (value != null && typeof value !== "boolean") {
          fail(`${name} must be true or false (got ${String(value)}).`);
        }
      }
      if (label != null && (typeof label !== "string" || !label)) {
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
        init.headers = { "Content-Type": "application/json" };
      }
      return this._json("POST", "/topics", "create topic", init);
    }
    /** One page of topics in id order: { topics, next } where next (when present) is the `after` of the next page. */
    async listTopics({ after = 0, limit = 100, label, signal } = {}) {
      const query = new URLSearchParams({ after: after === 0 ? "0" : String(toId(after, "after")), limit: String(toId(limit, "limit")) });
      if (label != null) {
        query.set("label", label);
      }
      const page = await this._json("GET", "/topics?" + query, "list topics", { signal });
      const next = page.next && /[?&]after=([0-9]+)/.exec(page.next);
      return next ? { topics: page.topics, next: Number(next[1]) } : { topics: page.topics };
    }
    /** The topic's info (epoch, lastMessageId, firstRetainedMessageId, ...). */
    getTopic(topicId, { signal } = {}) {
      const id = toId(topicId, "topicId");
      return this._json("GET", "/topics/" + id, "get topic " + id, { signal });
    }
    /** Deletes a topic; its subscribers get a topicDeleted notice. */
    async deleteTopic(topicId, { signal } = {}) {
      const id = toId(topicId, "topicId");
      await this._json("DELETE", "/topics/" + id, "delete topic " + id, { signal });
    }
    /** One page of a presence topic's members: { topicId, occupancy, members: [{ member, data }], next }. */
    getPresence(topicId, { after, limit = 100, signal } = {}) {
      const id = toId(topicId, "topicId");
      const query = new URLSearchParams({ limit: String(toId(limit, "limit")) });
      if (after != null) {
        if (typeof after !== "string" || !after) {
          fail(`after must be a member id (got ${String(after)}).`);
        }
        query.set("after", after);
      }
      return this._json("GET", `/topics/${id}/presence?${query}`, "get presence of topic " + id, { signal });
    }
    /** Changes the member data sent from the next poll or connection on (a plain object, or null). */
    setMember(member) {
      if (member != null && !isPlain(member)) {
        fail("member must be a plain object such as { name: 'Alice' }.");
      }
      this.options.member = member == null ? null : { ...member };
    }
    // ---- Publishing --------------------------------------------------------------------------------
    /**
     * Publishes one message; resolves with { topicId, messageId, epoch }. Options: contentType,
     * idempotencyKey, ifEpoch (publish only to that incarnation), signal.
     */
    publish(topicId, data, { contentType, idempotencyKey, ifEpoch, signal } = {}) {
      const id = toId(topicId, "topicId");
      const body = publishBody(data, contentType);
      const target = { topicId: id };
      const headers = {};
      if (ifEpoch != null) {
        target.ifEpoch = checkEpoch(ifEpoch, "ifEpoch");
        headers["If-Match"] = `"${ifEpoch}"`;
      }
      return this._publish(target, "/topics/" + id, "publish to topic " + id, body, this._key(idempotencyKey), headers, signal, false);
    }
    /**
     * Publishes one message to several topics, all or none; resolves with one { topicId, messageId, epoch }
     * per topic in the order given. `epochs` maps a topic id to the epoch it must have.
     */
    publishMany(topicIds, data, { contentType, idempotencyKey, epochs = {}, signal } = {}) {
      if (!Array.isArray(topicIds) || !topicIds.length) {
        fail("publishMany needs a non-empty array of topic ids.");
      }
      const seen = /* @__PURE__ */ new Set();
      const topics = topicIds.map((value) => {
        const id = toId(value, "topicIds");
        if (seen.has(id)) {
          fail(`publishMany names topic ${id} twice.`);
        }
        seen.add(id);
        return epochs[id] != null ? id + "~" + checkEpoch(epochs[id], `epochs[${id}]`) : String(id);
      }).join(",");
      const body = publishBody(data, contentType);
      return this._publish({ topics }, "/topics/publish?topics=" + topics, "publish to topics " + topics, body, this._key(idempotencyKey), {}, signal, true);
    }
    _key(key) {
      if (key != null && (typeof key !== "string" || !KEY.test(key))) {
        fail("idempotencyKey must be 1 to 255 printable ASCII characters without quotes or backslashes, such as a UUID.");
      }
      return key == null && this.options.idempotentPublishes ? newKey() : key;
    }
    async _publish(target, path, what, body, key, headers, signal, many) {
      signal?.throwIfAborted();
      const overRest = () => this._publishRest(path, what, body, key, headers, signal, many);
      const conn = this._conn;
      const frame = conn?.kind === "websocket" && conn.established ? publishFrame(target, body, key) : null;
      if (!frame) {
        return overRest();
      }
      try {
        const answer = await conn.publish(frame, signal);
        return many ? answer.messages : { topicId: answer.topicId, messageId: answer.messageId, epoch: answer.epoch };
      } catch (error) {
        if (error.notSent || error.status === 503 || error.unknown && key != null) {
          return overRest();
        }
        this._emit("error", error);
        throw error;
      }
    }
    // A REST publish with its key, sent again with the same key while its outcome is unknown.
    async _publishRest(path, what, body, key, headers, signal, many, method = "POST") {
      const attempts = key == null ? 1 : this.options.publishAttempts;
      const all = { "Content-Type": body.contentType, ...headers };
      if (key != null) {
        all["Idempotency-Key"] = `"${key}"`;
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
          signals.forEach((s) => s.removeEventListener("abort", done));
          const aborted = signals.find((s) => s.aborted);
          aborted ? reject(abortError(aborted)) : resolve();
        };
        const timer = setTimeout(done, ms);
        signals.forEach((s) => s.addEventListener("abort", done, { once: true }));
      });
    }
    // ---- State topics ------------------------------------------------------------------------------
    /** A state topic's document: { topicId, document, epoch, version }. */
    getState(topicId, { signal } = {}) {
      const id = toId(topicId, "topicId");
      return this._json("GET", `/topics/${id}/state`, "get state of topic " + id, { signal, headers: { Accept: "application/json" } }, async (response) => {
        const tag = parseStateTag(response.headers.get("ETag"));
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
      const id = toId(topicId, "topicId");
      if (!isObject(value)) {
        fail(`${replace ? "a state document" : "a merge patch"} must be a JSON object (got ${Array.isArray(value) ? "an array" : String(value)}).`);
      }
      const headers = {};
      if (ifVersion != null) {
        if (!(Number.isSafeInteger(ifVersion) && ifVersion >= 0) || ifEpoch == null) {
          fail("ifVersion is a version (a whole number from 0) and needs ifEpoch, the incarnation it belongs to.");
        }
        headers["If-Match"] = `"${checkEpoch(ifEpoch, "ifEpoch")}:${ifVersion}"`;
      } else if (ifEpoch != null) {
        headers["If-Match"] = `"${checkEpoch(ifEpoch, "ifEpoch")}"`;
      }
      const body = publishBody(value, replace ? "application/json" : PATCH_TYPE);
      const key = this._key(idempotencyKey);
      if (replace) {
        return this._publishRest(`/topics/${id}/state`, "replace state of topic " + id, body, key, headers, signal, false, "PUT");
      }
      return ifVersion != null ? this._publishRest("/topics/" + id, "patch topic " + id, body, key, headers, signal, false) : this._publish({ topicId: id, ...ifEpoch != null && { ifEpoch } }, "/topics/" + id, "patch topic " + id, body, key, headers, signal, false);
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
        fail("this client is closed: create a new one.");
      }
      if (onItem != null && typeof onItem !== "function") {
        fail("onItem must be a function.");
      }
      const list = Array.isArray(topics) ? topics : [topics];
      if (!list.length) {
        fail("subscribe needs a topic id, { topicId, from, epoch }, or an array of them.");
      }
      const seen = /* @__PURE__ */ new Set();
      const entries = list.map((spec) => {
        const s = typeof spec === "object" && spec !== null ? spec : { topicId: spec };
        const topicId = toId(s.topicId, "topicId");
        if (seen.has(topicId) || this._subs.has(topicId)) {
          fail(`topic ${topicId} is already subscribed on this client: unsubscribe it first, or use another client.`);
        }
        seen.add(topicId);
        const snapshot = s.from === "state";
        const cursor = s.from == null || snapshot ? null : toId(s.from, "from");
        const epoch = s.epoch == null ? null : checkEpoch(s.epoch, "epoch");
        if (epoch != null && cursor == null) {
          fail("epoch needs from: an epoch says which incarnation of the topic the cursor belongs to.");
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
      this._lifetime.abort(new LaharsubError("the client was closed."));
      this._conn?.abort();
      this._wake?.();
      this._setStatus("closed");
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
        owner._push({ type: "error", topicId: entry.topicId, error });
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
          this._loop().finally(() => {
            this._running = false;
          });
        }
        this._wake?.();
      }, 0);
    }
    async _loop() {
      while (!this._closed) {
        if (!this._joined().length && !this._conn) {
          this._setStatus("idle");
          await new Promise((resolve) => {
            this._wake = resolve;
          });
          this._wake = null;
          continue;
        }
        const kind = this._nextTransport();
        if (kind == null) {
          const error = new LaharsubError(`subscribing failed: the server answers, but none of the transports ${this.options.transports.join(", ")} could be opened (a proxy on the way may refuse WebSocket upgrades or buffer event streams): add 'longpoll' to the option transports.`);
          this._chain = 0;
          this._skipped = [];
          this._emit("error", error);
          await this._retry(backoffDelay(this._attempt++, this.options), error);
          continue;
        }
        if (this.status !== "connected" && this.status !== "retrying") {
          this._setStatus("connecting");
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
      if (kind === "websocket") {
        return typeof (this.options.WebSocket || globalThis.WebSocket) === "function";
      }
      return kind === "longpoll" || typeof TextDecoderStream === "function";
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
        this._emit("transport", kind, { previous, skipped, baseUrl: this.baseUrl });
      }
      this._setStatus(this._joined().length ? "connected" : "idle");
    }
    _retry(delay, error) {
      this._setStatus("retrying", { delay, error, baseUrl: this.baseUrl });
      return this._sleep(delay).catch(() => {
      });
    }
    // A connection failed: fall back to the next transport, retry, or end the subscriptions it names.
    async _failed(error, kind) {
      if (error.openFailed) {
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
          if (checked.status === 401 && typeof this.options.accessToken === "function" && !this._tokenRetried) {
            this._tokenRetried = true;
            return;
          }
          error = checked;
        }
      }
      if (error.tokenExpired) {
        if (typeof this.options.accessToken === "function" && !this._tokenRetried) {
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
        this._emit("error", error);
        await this._retry(backoffDelay(this._attempt++, this.options), error);
        return;
      }
      if (!(error instanceof LaharsubError)) {
        this._emit("error", error);
        await this._retry(backoffDelay(this._attempt++, this.options), error);
        return;
      }
      if (isRetryable(error.status)) {
        const failures = ++this._attempt;
        const count = this.baseUrls.length;
        const unavailable = isUnavailable(error.status);
        if (unavailable) {
          this._chain = 0;
          this._skipped = [];
        }
        const delay = unavailable && count > 1 && failures < count ? 0 : error.retryAfter ?? backoffDelay(failures - (unavailable ? count : 1), this.options);
        await this._retry(delay, error);
        return;
      }
      const entry = error.topicId != null ? this._subs.get(error.topicId) : null;
      if ((error.status === 404 || error.status === 403) && error.topicId != null) {
        if (entry) {
          this._refuse(entry, error);
          this._emit("error", error);
        }
        return;
      }
      for (const each of this._joined()) {
        this._refuse(each, error);
      }
      this._emit("error", error);
      this._setStatus("idle", { error });
    }
    _extraQuery() {
      const query = new URLSearchParams();
      if (this.options.clientId != null) {
        query.set("client", this.options.clientId);
      }
      if (this.options.member != null) {
        query.set("member", JSON.stringify(this.options.member));
      }
      if (this.options.conflate > 0) {
        query.set("conflate", String(this.options.conflate));
      }
      if (this._latestPending) {
        query.set("latest", "true");
      }
      return query;
    }
    _subscriptionPath(entries, extra) {
      const query = this._extraQuery();
      if (entries.length) {
        query.set("topics", compactTopics(entries));
      }
      for (const [name, value] of Object.entries(extra)) {
        query.set(name, value);
      }
      const text = query.toString().replace(/%2C/g, ",").replace(/%3A/g, ":").replace(/%7E/gi, "~");
      return "/subscriptions" + (text ? "?" + text : "");
    }
    // One long poll for `entries`; resolves with the answer (or null for 204).
    async _poll(entries, timeout, token, signal) {
      const response = await this._send("GET", this._subscriptionPath(entries, { timeout: String(timeout) }), "poll", {
        signal,
        token,
        timeout: (timeout + this.options.pollTimeoutMargin) * 1e3,
        headers: { Accept: "application/json" }
      });
      return response.status === 204 ? null : response.json();
    }
    // Runs one connection on `kind` until it is aborted for a change of the subscriptions (resolves) or fails (throws).
    _run(kind) {
      if (kind === "longpoll") {
        return this._runPoll();
      }
      return kind === "sse" ? this._runSse() : this._runSocket();
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
        const conn = this._newConn("longpoll", entries);
        const timeout = this.status === "connected" && this.transport === "longpoll" ? this.options.pollTimeout : 0;
        const started = Date.now();
        let answer;
        try {
          answer = await this._poll(entries, timeout, void 0, conn.signal);
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
        this._established("longpoll");
        if (!answer) {
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
      if (notice.type === "gap" || notice.type === "conflated") {
        entry.cursor = Math.max(entry.cursor || 0, notice.toMessageId + 1);
      } else if (notice.type === "state") {
        entry.cursor = notice.version + 1;
      } else if (notice.type === "reset") {
        entry.cursor = notice.firstMessageId;
        item = { ...notice, epochChanged: notice.reason === "epochChanged" };
      } else if (notice.type === "topicDeleted") {
        this._drop(entry);
        entry.owner._push(item);
        entry.owner._topicEnded(null);
        return;
      }
      entry.epoch = epoch || entry.epoch;
      entry.owner._push(item);
    }
    _applyMessage(entry, message) {
      this._latestPending = false;
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
      const conn = this._newConn("sse", entries);
      conn.deleted = /* @__PURE__ */ new Set();
      conn.update = (joined) => joined.length === [...conn.entries.values()].filter((e) => e.active).length && joined.every((e) => conn.entries.get(e.topicId) === e) && [...conn.entries.values()].every((e) => e.active || conn.deleted.has(e.topicId));
      let timer = null;
      const watchdog = (ms, make) => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          conn.failure = make();
          conn.abort();
        }, ms);
      };
      try {
        let response;
        try {
          watchdog(this.options.requestTimeout, () => Object.assign(new LaharsubError("the event stream did not open in time."), { openFailed: true }));
          response = await this._send("GET", this._subscriptionPath(entries, {}), "subscription", {
            signal: conn.signal,
            timeout: 0,
            headers: { Accept: "text/event-stream" }
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
        if (!/^text\/event-stream/i.test(response.headers.get("Content-Type") || "")) {
          await response.body?.cancel();
          throw Object.assign(new LaharsubError("the subscription URL did not answer an event stream."), { openFailed: true });
        }
        watchdog(this.options.sseOpenTimeout, () => Object.assign(new LaharsubError("the event stream did not start in time (a buffering proxy?)."), { openFailed: true }));
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        const parser = sseParser((event) => this._onSseEvent(conn, event, watchdog));
        for (; ; ) {
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
            throw new LaharsubError("the event stream was cut.", { cause: error });
          }
          if (chunk.done) {
            if (conn.failure) {
              throw conn.failure;
            }
            throw conn.established ? new LaharsubError("the event stream ended.") : Object.assign(new LaharsubError("the event stream ended before it started."), { openFailed: true });
          }
          if (conn.established) {
            watchdog(this.options.heartbeatTimeout, () => new LaharsubError("the event stream went silent (no heartbeat)."));
          }
          parser(chunk.value);
          if (conn.failure) {
            reader.cancel().catch(() => {
            });
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
      if (!data || typeof data !== "object") {
        return;
      }
      if (event.type === "message") {
        const entry = this._route(conn, data.topicId);
        if (entry) {
          this._stopStreak = 0;
          this._applyMessage(entry, data);
        }
      } else if (event.type === "notice") {
        const entry = this._route(conn, data.topicId);
        if (entry) {
          this._stopStreak = 0;
          if (data.type === "topicDeleted") {
            conn.deleted.add(data.topicId);
          }
          this._applyNotice(entry, data);
        }
      } else if (event.type === "reconnect") {
        const error = new LaharsubError(`the server ended the event stream (${String(data.reason)}${data.detail ? ": " + data.detail : ""})`);
        conn.failure = Object.assign(error, data.reason === "tokenExpired" ? { tokenExpired: true } : data.reason === "redecide" ? { slow: true } : { stopping: true });
      } else if (Array.isArray(data.topics) && !conn.established) {
        for (const position of data.topics) {
          const entry = position && this._route(conn, position.topicId);
          if (entry && entry.epoch == null) {
            entry.epoch = epochOf(position);
          }
        }
        conn.established = true;
        watchdog(this.options.heartbeatTimeout, () => new LaharsubError("the event stream went silent (no heartbeat)."));
        this._established("sse");
      }
    }
    // ---- WebSocket ----------------------------------------------------------------------------------
    async _runSocket() {
      const token = this.options.accessToken == null ? null : await this._token();
      const entries = this._joined();
      const conn = this._newConn("websocket", entries);
      const topics = new Map(entries.map((e) => [e.topicId, { entry: e, pending: 0 }]));
      const frames = /* @__PURE__ */ new Map();
      const publishes = /* @__PURE__ */ new Map();
      let count = 0;
      const Ctor = this.options.WebSocket || globalThis.WebSocket;
      const extra = token ? { access_token: token } : {};
      const url = new URL(this.baseUrls[conn.address] + this._subscriptionPath(entries, extra), globalThis.location?.href);
      url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
      let socket;
      try {
        socket = new Ctor(url.href, SUBPROTOCOL);
      } catch (cause) {
        this._conn = null;
        throw Object.assign(new LaharsubError("the WebSocket could not be created.", { cause }), { openFailed: true, token });
      }
      const send = (frame) => {
        frame.id = "c" + ++count;
        socket.send(JSON.stringify(frame));
        return count;
      };
      const sync = (joined) => {
        if (!conn.established || socket.readyState !== 1) {
          return true;
        }
        const wanted = /* @__PURE__ */ new Set();
        for (const entry of joined) {
          wanted.add(entry.topicId);
          if (topics.get(entry.topicId)?.entry !== entry) {
            const n = send({ type: "subscribe", topics: compactTopics([entry]) });
            frames.set("c" + n, { n, kind: "subscribe", topicId: entry.topicId });
            topics.set(entry.topicId, { entry, pending: n });
            conn.entries.set(entry.topicId, entry);
          }
        }
        const gone = [...topics.keys()].filter((id) => !wanted.has(id));
        if (gone.length) {
          gone.forEach((id) => topics.delete(id));
          const n = send({ type: "unsubscribe", topics: gone.join(",") });
          frames.set("c" + n, { n, kind: "unsubscribe" });
        }
        this._setStatus(joined.length ? "connected" : "idle");
        return true;
      };
      conn.update = sync;
      conn.publish = (frame, signal) => new Promise((resolve, reject) => {
        const n = ++count;
        frame.id = "c" + n;
        const pending = { resolve, reject };
        const settle = (error) => {
          publishes.delete(frame.id);
          clearTimeout(pending.timer);
          signal?.removeEventListener("abort", pending.aborted);
          if (error) {
            reject(error);
          }
        };
        pending.settle = settle;
        pending.timer = setTimeout(() => settle(Object.assign(new LaharsubError("the publish got no answer in time on the WebSocket (it may have been stored)."), { unknown: true })), this.options.requestTimeout);
        pending.aborted = () => settle(abortError(signal));
        signal?.addEventListener("abort", pending.aborted, { once: true });
        publishes.set(frame.id, pending);
        try {
          socket.send(JSON.stringify(frame));
        } catch (cause) {
          settle(Object.assign(new LaharsubError("the publish could not be sent on the WebSocket.", { cause }), { notSent: true }));
        }
      });
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
          const error = problemError("subscribe to topic " + topicId, problem);
          this._refuse(entry, error);
          this._emit("error", error);
        }
      };
      const onFrame = (text) => {
        let frame;
        try {
          frame = JSON.parse(text);
        } catch {
          return;
        }
        if (!frame || typeof frame !== "object") {
          return;
        }
        if (frame.type === "message" && frame.message) {
          const entry = route(frame.message.topicId);
          if (entry) {
            this._stopStreak = 0;
            this._applyMessage(entry, frame.message);
          }
        } else if (frame.type === "notice" && frame.notice) {
          const entry = route(frame.notice.topicId);
          if (entry) {
            this._stopStreak = 0;
            if (frame.notice.type === "topicDeleted") {
              topics.delete(frame.notice.topicId);
            }
            this._applyNotice(entry, frame.notice);
          }
        } else if (frame.type === "subscribed") {
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
            this._established("websocket");
            sync(this._joined());
          }
        } else if (frame.type === "published" || frame.type === "problem" && publishes.has(frame.id)) {
          const pending = publishes.get(frame.id);
          if (pending) {
            pending.settle(frame.type === "problem" ? problemError("publish", frame.problem) : null);
            if (frame.type === "published") {
              pending.resolve(frame);
            }
          }
        } else if (frame.type === "problem") {
          const problem = frame.problem && typeof frame.problem === "object" ? frame.problem : {};
          const sent = frames.get(frame.id);
          if (problem.status === 404 && isId(problem.topicId)) {
            if (sent) {
              settleFrames(sent.n);
            }
            refused(problem.topicId, null, problem);
          } else if (sent?.kind === "subscribe") {
            frames.delete(frame.id);
            refused(sent.topicId, sent.n, problem);
          } else {
            this._emit("error", problemError("changing the subscriptions", problem));
          }
        }
      };
      let openTimer;
      try {
        await new Promise((resolve, reject) => {
          openTimer = setTimeout(() => reject(Object.assign(new LaharsubError("the WebSocket did not open in time."), { openFailed: true, token })), this.options.requestTimeout);
          conn.signal.addEventListener("abort", () => resolve(), { once: true });
          socket.onmessage = (event) => {
            if (!conn.signal.aborted && typeof event.data === "string") {
              onFrame(event.data);
            }
          };
          socket.onclose = (event) => reject(this._closeError(conn, event.code, event.reason, token));
          socket.onerror = () => reject(this._closeError(conn, 1006, "", token));
        });
      } finally {
        clearTimeout(openTimer);
        socket.onmessage = socket.onclose = socket.onerror = null;
        try {
          socket.close(1e3);
        } catch {
        }
        if (this._conn === conn) {
          this._conn = null;
        }
        for (const pending of [...publishes.values()]) {
          pending.settle(Object.assign(new LaharsubError("the WebSocket closed before the publish was answered: it may have been stored."), { unknown: true }));
        }
      }
    }
    _closeError(conn, code, reason, token) {
      const said = ` (WebSocket close code ${code}${reason ? ": " + reason : ""})`;
      if (code === 4001) {
        return Object.assign(new LaharsubError("the access token expired" + said + "."), { tokenExpired: true });
      }
      if (code === 4e3) {
        return Object.assign(new LaharsubError("the server closed the WebSocket, refusing a frame of this client" + said + "."), { refusedFrame: true });
      }
      if (code === 1001) {
        return Object.assign(new LaharsubError("the server is stopping" + said + "."), { stopping: true });
      }
      if (code === 4002) {
        return Object.assign(new LaharsubError("the server decides this socket's access again" + said + "."), { slow: true });
      }
      if (code === 4008) {
        return Object.assign(new LaharsubError("the server closed the WebSocket for reading too slowly" + said + "."), { slow: true });
      }
      return conn.established ? new LaharsubError("the WebSocket was cut" + said + ".") : Object.assign(new LaharsubError("the WebSocket could not be opened" + said + "."), { openFailed: true, token });
    }
  };
  function sseParser(dispatch) {
    let buffer = "";
    let type = "";
    let data = [];
    let id = null;
    let afterCR = false;
    return (text) => {
      buffer += afterCR && text[0] === "\n" ? text.slice(1) : text;
      afterCR = text.endsWith("\r");
      const lines = buffer.split(/\r\n|\r|\n/);
      buffer = lines.pop();
      for (const line of lines) {
        if (line === "") {
          if (data.length) {
            dispatch({ type: type || "message", data: data.join("\n"), id });
          }
          type = "";
          data = [];
          continue;
        }
        if (line[0] === ":") {
          continue;
        }
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? "" : line.slice(colon + 1);
        if (value[0] === " ") {
          value = value.slice(1);
        }
        if (field === "event") {
          type = value;
        } else if (field === "data") {
          data.push(value);
        } else if (field === "id") {
          id = value;
        }
      }
    };
  }
  function presenceEvent(message) {
    const event = message && message.data;
    if (!isPlain(event) || event.type !== "join" && event.type !== "leave" || typeof event.member !== "string" || typeof event.occupancy !== "number") {
      return null;
    }
    return { type: event.type, member: event.member, data: isPlain(event.data) ? event.data : null, occupancy: event.occupancy };
  }
  function watchPresence(client, topicId, { onChange, onError, signal } = {}) {
    const id = toId(topicId, "topicId");
    const controller = new AbortController();
    signal?.addEventListener("abort", () => controller.abort(), { once: true });
    let members = /* @__PURE__ */ new Map();
    let pending = null;
    let subscription = null;
    const changed = (event) => report(onChange, members, event);
    const apply = (event) => {
      if (event.type === "join") {
        members.set(event.member, event.data);
      } else {
        members.delete(event.member);
      }
      changed(event);
    };
    const reload = async () => {
      pending = [];
      const list = /* @__PURE__ */ new Map();
      for (let after; ; ) {
        const page = await client.getPresence(id, { after, limit: 1e3, signal: controller.signal });
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
      subscription = client.subscribe(info.presenceTopicId, {
        signal: controller.signal,
        onItem: (item) => {
          if (item.type === "message") {
            const event = presenceEvent(item);
            if (event) {
              pending ? pending.push(event) : apply(event);
            }
          } else if (item.type === "gap" || item.type === "reset") {
            reload().catch(failed);
          } else if (item.type === "topicDeleted") {
            members = /* @__PURE__ */ new Map();
            changed(null);
          } else if (item.type === "error") {
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
      get occupancy() {
        return members.size;
      },
      stop: () => controller.abort()
    };
  }
  var StateSubscription = class {
    constructor(client, topicId, { onState, onItem, signal } = {}) {
      for (const [name, value] of [["onState", onState], ["onItem", onItem]]) {
        if (value != null && typeof value !== "function") {
          fail(`${name} must be a function.`);
        }
      }
      this.topicId = toId(topicId, "topicId");
      this.document = null;
      this.version = null;
      this.epoch = null;
      this._client = client;
      this._onState = onState || null;
      this._onItem = onItem || null;
      this._conflatedTo = null;
      let settle;
      this.ready = new Promise((resolve, reject) => {
        settle = { resolve, reject };
      });
      this.ready.catch(() => {
      });
      this._settle = settle;
      this._follow();
      if (signal) {
        signal.aborted ? queueMicrotask(() => this.unsubscribe()) : signal.addEventListener("abort", () => this.unsubscribe(), { once: true });
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
      this._settle.reject(new LaharsubError("the state subscription ended before its first document."));
    }
    _condition(ifCurrent, options) {
      if (ifCurrent && this.version == null) {
        fail("ifCurrent needs the document: wait for ready.");
      }
      return ifCurrent ? { ...options, ifEpoch: this.epoch, ifVersion: this.version } : options;
    }
    _follow() {
      this._sub = this._client.subscribe({ topicId: this.topicId, from: "state" }, { onItem: (item) => this._apply(item) });
    }
    _apply(item) {
      let document;
      if (item.type === "state") {
        document = item.document;
        this.version = item.version;
      } else if (item.type === "conflated") {
        this._conflatedTo = item.toMessageId;
      } else if (item.type === "message" && this.document != null && (item.messageId === this.version + 1 || this._conflatedTo != null && item.messageId === this._conflatedTo + 1)) {
        this._conflatedTo = null;
        const type = item.contentType || "";
        if (type.toLowerCase().startsWith(PATCH_TYPE)) {
          document = mergePatch(this.document, item.data);
        } else if (JSON_TYPE.test(type) && isObject(item.data)) {
          document = item.data;
        }
        this.version = item.messageId;
      }
      report(this._onItem, item, this);
      if (document === void 0) {
        if (item.type === "gap" || item.type === "message") {
          this._sub.unsubscribe();
          this._follow();
        } else if (item.type === "error" || item.type === "topicDeleted") {
          this._settle.reject(item.error || new LaharsubError(`topic ${this.topicId} was deleted.`));
        }
        return;
      }
      this.document = document;
      this.epoch = item.epoch || this.epoch;
      this._settle.resolve(this);
      report(this._onState, document, { version: this.version, epoch: this.epoch, item });
    }
  };

  // ../../src/Clients/JQuery/src/jquery.laharsub.mjs
  var moduleDefaults = validateOptions();
  var defaults = {};
  for (const name of [
    "pollTimeout",
    "pollTimeoutMargin",
    "requestTimeout",
    "retryDelay",
    "maxRetryDelay",
    "retryJitter",
    "idempotentPublishes",
    "publishAttempts",
    "ajax",
    "accessToken",
    "transports",
    "sseOpenTimeout",
    "conflate",
    "latest",
    "clientId",
    "member",
    "onError",
    "onStatus",
    "onTransport"
  ]) {
    defaults[name] = name === "ajax" ? null : moduleDefaults[name];
  }
  var subscriptionDefaults = {
    from: null,
    epoch: null,
    onMessage: null,
    onGap: null,
    onConflated: null,
    // Resets go to onReset when it is given, otherwise to onGap (notice.type === 'reset').
    onReset: null,
    onTopicDeleted: null,
    onError: null
  };
  function fail2(message) {
    throw new Error("$.laharsub: " + message);
  }
  function guard(call) {
    try {
      return call();
    } catch (error) {
      if (error instanceof TypeError && /^laharsub: /.test(error.message)) {
        fail2(error.message.slice("laharsub: ".length));
      }
      throw error;
    }
  }
  function checkKnown(options, known, what) {
    for (const name of Object.keys(options)) {
      if (!Object.prototype.hasOwnProperty.call(known, name)) {
        fail2(`unknown ${what} option "${name}" (known: ${Object.keys(known).join(", ")}).`);
      }
    }
  }
  function checkCallbacks(settings, names) {
    for (const name of names) {
      if (settings[name] != null && typeof settings[name] !== "function") {
        fail2(`option ${name} must be a function.`);
      }
    }
  }
  function install($) {
    if (!$ || typeof $.Deferred !== "function" || typeof $.extend !== "function") {
      throw new Error("jquery.laharsub.js needs jQuery (3.7 or 4): load jquery.js before it.");
    }
    function deferred(promise) {
      const result = $.Deferred();
      promise.then(result.resolve, result.reject);
      return result.promise();
    }
    function coreOptions(settings, client) {
      const ajax = settings.ajax;
      if (ajax != null && (!$.isPlainObject(ajax) || Object.keys(ajax).some((name) => name !== "headers"))) {
        fail2("option ajax takes { headers } only: the client sends its requests with fetch (the laharsub module), not $.ajax.");
      }
      const options = {};
      for (const name of Object.keys(defaults)) {
        if (!/^(ajax|on[A-Z]\w*)$/.test(name)) {
          options[name] = settings[name];
        }
      }
      options.headers = ajax && ajax.headers ? $.extend({}, ajax.headers) : null;
      for (const name of ["onError", "onStatus", "onTransport"]) {
        const callback = settings[name];
        options[name] = callback ? (...args) => callback.apply(client, args) : null;
      }
      return options;
    }
    function Client(baseUrl, options) {
      checkKnown(options || {}, defaults, "client");
      const settings = $.extend({}, defaults, options);
      checkCallbacks(settings, ["onError", "onStatus", "onTransport"]);
      this._core = guard(() => new LaharsubClient(baseUrl, coreOptions(settings, this)));
      this.options = settings;
      this.baseUrls = this._core.baseUrls;
      this._handles = [];
    }
    Client.prototype = {
      constructor: Client,
      /** The API root in use (several instances: the one the client moved to). */
      get baseUrl() {
        return this._core.baseUrl;
      },
      /** The transport of the connection in use (or of the last one); null until one started. */
      get transport() {
        return this._core.transport;
      },
      /** 'idle' | 'connecting' | 'connected' | 'retrying' | 'closed' */
      get status() {
        return this._core.status;
      },
      /** Another listener for 'status', 'transport' or 'error' (as the options' callbacks); returns a function that removes it. */
      on(type, listener) {
        return guard(() => this._core.on(type, listener));
      },
      createTopic(options) {
        return deferred(guard(() => this._core.createTopic($.extend({}, options))));
      },
      listTopics(options) {
        return deferred(guard(() => this._core.listTopics($.extend({}, options))));
      },
      getPresence(topicId, options) {
        const settings = $.extend({ limit: 100 }, options);
        if (typeof settings.limit === "number" && settings.limit > 1e3) {
          fail2(`limit is 1 to 1000 (got ${settings.limit}).`);
        }
        return deferred(guard(() => this._core.getPresence(topicId, settings)));
      },
      setMember(member) {
        guard(() => this._core.setMember(member));
        this.options.member = member == null ? null : $.extend({}, member);
      },
      getTopic(topicId) {
        return deferred(guard(() => this._core.getTopic(topicId)));
      },
      deleteTopic(topicId) {
        return deferred(guard(() => this._core.deleteTopic(topicId)));
      },
      /** Options: idempotencyKey, ifEpoch (that incarnation only). */
      publish(topicId, data, contentType, options) {
        const settings = $.extend({}, options, { contentType: contentType == null ? void 0 : contentType });
        return deferred(guard(() => this._core.publish(topicId, data, settings)));
      },
      /** Options: idempotencyKey, epochs (topic id -> the epoch it must have). */
      publishMany(topicIds, data, contentType, options) {
        const settings = $.extend({}, options, { contentType: contentType == null ? void 0 : contentType });
        return deferred(guard(() => this._core.publishMany(topicIds, data, settings)));
      },
      /**
       * Subscribes to a topic from `from` (absent: the next message published), in the incarnation `epoch`
       * when given. Returns a handle with unsubscribe(), cursor(), epoch(), active() and `ready`.
       */
      subscribe(topicId, options) {
        if (options != null && !$.isPlainObject(options)) {
          fail2("subscribe options must be an object like { from: 1, onMessage: function (message) {} }.");
        }
        checkKnown(options || {}, subscriptionDefaults, "subscribe");
        const settings = $.extend({}, subscriptionDefaults, options);
        checkCallbacks(settings, ["onMessage", "onGap", "onConflated", "onReset", "onTopicDeleted", "onError"]);
        return this._follow(topicId, settings, (item, handle) => {
          const callback = {
            message: settings.onMessage,
            gap: settings.onGap,
            conflated: settings.onConflated,
            reset: settings.onReset || settings.onGap,
            topicDeleted: settings.onTopicDeleted
          }[item.type];
          if (item.type === "error") {
            settings.onError?.call(handle, item.error, handle);
          } else if (callback) {
            callback.call(handle, item, handle);
          }
        });
      },
      // A handle on one topic's subscription of the module, `deliver(item, handle)` getting its items.
      _follow(topicId, settings, deliver) {
        let handle = null;
        const sub = guard(() => this._core.subscribe({ topicId, from: settings.from, epoch: settings.epoch }, {
          onItem: (item) => deliver(item, handle)
        }));
        const ready = $.Deferred();
        handle = {
          topicId: sub.positions()[0].topicId,
          ready: ready.promise(),
          /** The smallest message id still wanted: pass it as `from` to resume elsewhere. */
          cursor: () => sub.cursor(),
          /** The topic's epoch the cursor belongs to: keep it with the cursor. */
          epoch: () => sub.epoch(),
          active: () => sub.active,
          unsubscribe: () => sub.unsubscribe()
        };
        sub.ready.then(() => ready.resolve(handle), ready.reject);
        this._handles = this._handles.filter((h) => h.active()).concat(handle);
        return handle;
      },
      /** A state topic's document: resolves with { topicId, document, epoch, version }. */
      getState(topicId) {
        return deferred(guard(() => this._core.getState(topicId)));
      },
      /** An RFC 7396 merge patch (an object) to a state topic. Options: ifEpoch, ifVersion (compare-and-set), idempotencyKey. */
      publishPatch(topicId, patch, options) {
        return deferred(guard(() => this._core.publishPatch(topicId, patch, $.extend({}, options))));
      },
      /** Replaces a state topic's document (an object); options as publishPatch's. */
      replaceState(topicId, document, options) {
        return deferred(guard(() => this._core.replaceState(topicId, document, $.extend({}, options))));
      },
      /**
       * Keeps a state topic's document for the page: onState(document, info) with every version of it
       * (info: version, epoch, item). Returns a handle with document(), version(), epoch(), active(),
       * patch(patch, { ifCurrent }), replace(document, { ifCurrent }), unsubscribe() and `ready`,
       * resolved once the first document is in. onError(error) when the subscription ends on an error.
       */
      subscribeState(topicId, options) {
        const settings = $.extend({ onState: null, onError: null }, options);
        checkKnown(settings, { onState: null, onError: null }, "subscribeState");
        checkCallbacks(settings, ["onState", "onError"]);
        const handle = {};
        const state = guard(() => this._core.subscribeState(topicId, {
          onState: (document, info) => settings.onState?.call(handle, document, info, handle),
          onItem: (item) => {
            if (item.type === "error") {
              settings.onError?.call(handle, item.error, handle);
            }
          }
        }));
        return Object.assign(handle, {
          topicId: state.topicId,
          ready: deferred(state.ready.then(() => handle)),
          document: () => state.document,
          version: () => state.version,
          epoch: () => state.epoch,
          active: () => state.active,
          patch: (patch, patchOptions) => deferred(guard(() => state.patch(patch, $.extend({}, patchOptions)))),
          replace: (document, replaceOptions) => deferred(guard(() => state.replace(document, $.extend({}, replaceOptions)))),
          unsubscribe: () => state.unsubscribe()
        });
      },
      /** Every active subscription's cursor, by topic id. */
      cursors() {
        return this._core.cursors();
      },
      /** Every active subscription's epoch (null where not yet known), by topic id. */
      epochs() {
        return this._core.epochs();
      },
      /** The ids of the active subscriptions, in subscription order. */
      topics() {
        return this._handles.filter((h) => h.active()).map((h) => h.topicId);
      },
      /** Ends every subscription and the connection; the client cannot be used afterwards. */
      close() {
        this._core.close();
      },
      /**
       * Keeps a live member list of a topic with presence. Callbacks: onChange(members, event) with members
       * an object member id -> data and event the join or leave (null for a fresh list); onError(error).
       * Returns a handle with members(), occupancy(), stop() and `ready`.
       */
      watchPresence(topicId, callbacks) {
        const settings = $.extend({ onChange: null, onError: null }, callbacks);
        checkCallbacks(settings, ["onChange", "onError"]);
        let members = {};
        const handle = {};
        const watch = guard(() => watchPresence(this._core, topicId, {
          onChange: (map, event) => {
            members = Object.fromEntries(map);
            settings.onChange?.call(handle, members, event);
          },
          onError: (error) => settings.onError?.call(handle, error)
        }));
        return Object.assign(handle, {
          topicId: watch.topicId,
          ready: deferred(watch.ready.then(() => handle)),
          members: () => members,
          occupancy: () => Object.keys(members).length,
          stop: () => watch.stop()
        });
      }
    };
    $.laharsub = function(baseUrl, options) {
      return new Client(baseUrl, options);
    };
    $.laharsub.defaults = defaults;
    $.laharsub.Client = Client;
    $.laharsub.presenceEvent = presenceEvent;
    return $.laharsub;
  }
  return __toCommonJS(jquery_laharsub_exports);
})();
  return laharsubPlugin.install($);
}));
