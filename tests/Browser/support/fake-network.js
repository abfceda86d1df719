'use strict';
// Real jQuery and the real client in a jsdom window; only the network is scripted, through jQuery's
// own transport extension point, so $.ajax (conversion, abort, timeouts) runs unchanged, and, for the
// stream tests, by WebSocket and EventSource classes the test plays the server of.
const fs = require('node:fs');
const { JSDOM } = require('jsdom');
const paths = require('./paths');

/**
 * jQuery `jqueryVersion` and the client in a jsdom window. Without `streams` the window has neither
 * WebSocket nor EventSource (jsdom has no EventSource, and its WebSocket would dial out), so the
 * client passes over both and long-polls; with `streams`, scripted ones (FakeStreams) stand in.
 */
function loadClient(jqueryVersion, { streams = false } = {}) {
  const dom = new JSDOM('<!doctype html><html><body></body></html>', { runScripts: 'outside-only', url: 'http://127.0.0.1:9/' });
  const { window } = dom;
  const fakes = streams ? new FakeStreams() : null;
  window.WebSocket = fakes ? fakes.WebSocket : undefined;
  window.EventSource = fakes ? fakes.EventSource : undefined;
  window.eval(fs.readFileSync(paths.jqueryVersions[jqueryVersion], 'utf8'));
  window.eval(fs.readFileSync(paths.clientScript, 'utf8'));
  const $ = window.jQuery;
  const network = new FakeNetwork($);
  return { window, $, network, streams: fakes, close: () => window.close() };
}

/** The subscriptions of a compact `topics` value (`14:43~e1,15`) as [topicId, from|null, epoch|null]. */
function parseTopics(text) {
  return text ? text.split(',').map((part) => {
    const [, id, from, epoch] = /^(\d+)(?::(\d+))?(?:~(.+))?$/.exec(part);
    return [Number(id), from === undefined ? null : Number(from), epoch === undefined ? null : epoch];
  }) : [];
}

/** A stream URL's subscriptions (see parseTopics) and its access_token. */
function streamQuery(url) {
  const query = new URL(url, 'http://x/').searchParams;
  return { topics: parseTopics(query.get('topics')), token: query.get('access_token') };
}

/**
 * Scripted WebSocket and EventSource classes: the test plays the server (accept, receive frames,
 * close with a code; emit events, fail) and reads what the client sent.
 */
class FakeStreams {
  constructor() {
    const streams = this;
    this.sockets = [];
    this.sources = [];
    this.waiters = [];

    this.WebSocket = class FakeWebSocket {
      constructor(url, protocol) {
        this.url = url;
        this.protocol = protocol;
        this.readyState = 0;
        this.sent = [];
        this.closedByClient = null;
        this.onopen = this.onmessage = this.onclose = this.onerror = null;
        streams.sockets.push(this);
        streams.notify();
      }

      get query() {
        return streamQuery(this.url);
      }

      send(text) {
        if (this.readyState !== 1) {
          throw new Error('InvalidStateError: the socket is not open');
        }
        this.sent.push(JSON.parse(text));
      }

      close(code) {
        if (this.readyState < 2) {
          this.readyState = 3;
          this.closedByClient = code === undefined ? 1005 : code;
          // As a browser does, the close event comes later.
          setTimeout(() => this.onclose?.({ code: this.closedByClient, reason: '' }), 0);
        }
      }

      /** The server accepts the upgrade (the client then waits for the first `subscribed`). */
      accept() {
        this.readyState = 1;
        this.onopen?.({});
      }

      receive(frame) {
        this.onmessage?.({ data: typeof frame === 'string' ? frame : JSON.stringify(frame) });
      }

      serverClose(code, reason = '') {
        this.readyState = 3;
        this.onerror?.({});
        this.onclose?.({ code, reason });
      }
    };

    this.EventSource = class FakeEventSource {
      constructor(url) {
        this.url = url;
        this.readyState = 0;
        this.listeners = {};
        this.onerror = this.onmessage = this.onopen = null;
        streams.sources.push(this);
        streams.notify();
      }

      get query() {
        return streamQuery(this.url);
      }

      addEventListener(type, listener) {
        (this.listeners[type] = this.listeners[type] || []).push(listener);
      }

      close() {
        this.readyState = 2;
      }

      dispatch(type, event) {
        if (this.readyState === 2) {
          throw new Error(`dispatching ${type} on a closed EventSource`);
        }
        (this.listeners[type] || []).forEach((listener) => listener(event));
        const property = this['on' + type];
        if (property) {
          property(event);
        }
      }

      /** The response's headers arrived: the browser's own open event, which carries no data. */
      headers() {
        this.readyState = 1;
        this.dispatch('open', { type: 'open' });
      }

      /** One event from the server: `type` is 'subscribed', 'message', 'notice' or 'reconnect'. */
      emit(type, data, id) {
        this.readyState = 1;
        this.dispatch(type, { type, data: JSON.stringify(data), lastEventId: id || '' });
      }

      fail() {
        this.dispatch('error', { type: 'error' });
      }
    };
  }

  notify() {
    const waiting = this.waiters;
    this.waiters = [];
    waiting.forEach((waiter) => waiter());
  }

  /** The socket (or EventSource) number `index` (0-based), once the client has made it. */
  socket(index, timeoutMs = 2000) {
    return this.made(() => this.sockets[index], `WebSocket #${index + 1}`, timeoutMs);
  }

  source(index, timeoutMs = 2000) {
    return this.made(() => this.sources[index], `EventSource #${index + 1}`, timeoutMs);
  }

  made(find, what, timeoutMs) {
    const found = find();
    if (found) {
      return Promise.resolve(found);
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${what} within ${timeoutMs} ms (sockets: ${this.sockets.map((s) => s.url).join(', ')}; sources: ${this.sources.map((s) => s.url).join(', ')})`)), timeoutMs);
      const check = () => {
        const now = find();
        if (now) {
          clearTimeout(timer);
          resolve(now);
        } else {
          this.waiters.push(check);
        }
      };
      this.waiters.push(check);
    });
  }
}

class FakeNetwork {
  constructor($) {
    this.requests = [];
    this.waiters = [];
    const network = this;
    $.ajaxTransport('+*', (options) => {
      let request;
      return {
        send(headers, complete) {
          request = new FakeRequest(options, headers, complete);
          network.requests.push(request);
          network.waiters.filter((w) => w.match(request)).forEach((w) => w.resolve(request));
          network.waiters = network.waiters.filter((w) => !w.match(request));
        },
        abort() {
          request.aborted = true;
        },
      };
    });
  }

  /** The pending requests (neither answered nor aborted). */
  pending() {
    return this.requests.filter((r) => !r.aborted && !r.answered);
  }

  pendingPolls() {
    return this.pending().filter((r) => r.isPoll);
  }

  /** Resolves with the next request (already sent or future) that matches and is still pending. */
  next(match, timeoutMs = 2000) {
    const found = this.pending().find(match);
    if (found) {
      return Promise.resolve(found);
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no matching request within ' + timeoutMs + ' ms; seen: ' +
        this.requests.map((r) => r.method + ' ' + r.url).join(', '))), timeoutMs);
      this.waiters.push({ match, resolve: (r) => { clearTimeout(timer); resolve(r); } });
    });
  }

  nextPoll(timeoutMs) {
    return this.next((r) => r.isPoll, timeoutMs);
  }
}

class FakeRequest {
  constructor(options, headers, complete) {
    this.url = options.url;
    this.method = options.type;
    this.headers = headers;
    this.body = options.data;
    this.contentType = options.contentType;
    this.complete = complete;
    this.aborted = false;
    this.answered = false;
    this.isPoll = /\/subscriptions\?/.test(this.url);
  }

  /**
   * The poll's subscriptions as [topicId, from|null] pairs, their epochs (null where absent) in the
   * same order, and its timeout, decoded from the query.
   */
  get poll() {
    const query = new URL(this.url, 'http://x/').searchParams;
    const subs = [];
    const epochs = [];
    if (query.has('topics')) {
      // The compact form (the check a stream that could not be opened is followed by).
      for (const [topicId, from, epoch] of parseTopics(query.get('topics'))) {
        subs.push([topicId, from]);
        epochs.push(epoch);
      }
      return { subs, epochs, timeout: Number(query.get('timeout')), compact: true };
    }
    for (let i = 0; query.has(`subs[${i}][topicid]`); i++) {
      const from = query.get(`subs[${i}][from]`);
      subs.push([Number(query.get(`subs[${i}][topicid]`)), from === null ? null : Number(from)]);
      epochs.push(query.get(`subs[${i}][epoch]`));
    }
    return { subs, epochs, timeout: Number(query.get('timeout')) };
  }

  /** The API root the request went to, e.g. "http://a.test/ps". */
  get root() {
    return this.url.replace(/\/(topics|subscriptions)([/?].*)?$/, '');
  }

  respond(status, body, headers = {}) {
    if (this.aborted) {
      throw new Error('responding to an aborted request: ' + this.url);
    }
    this.answered = true;
    const text = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
    const allHeaders = Object.assign(body !== undefined && typeof body !== 'string' ? { 'Content-Type': 'application/json' } : {}, headers);
    const raw = Object.entries(allHeaders).map(([k, v]) => `${k}: ${v}`).join('\r\n');
    this.complete(status, status === 0 ? 'error' : 'status ' + status, { text }, raw);
  }

  fail() {
    this.respond(0, undefined);
  }
}

/** Waits until `condition()` is truthy, polling every few ms; fails after timeoutMs. */
async function until(condition, timeoutMs = 2000, what = 'condition') {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = condition();
    if (value) {
      return value;
    }
    if (Date.now() > deadline) {
      throw new Error('timed out waiting for ' + what);
    }
    await new Promise((r) => setTimeout(r, 5));
  }
}

module.exports = { loadClient, until, parseTopics };
