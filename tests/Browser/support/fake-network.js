'use strict';
// Real jQuery and the real client in a jsdom window; only the network is scripted, through jQuery's
// own transport extension point, so $.ajax (conversion, abort, timeouts) runs unchanged.
const fs = require('node:fs');
const { JSDOM } = require('jsdom');
const paths = require('./paths');

function loadClient(jqueryVersion) {
  const dom = new JSDOM('<!doctype html><html><body></body></html>', { runScripts: 'outside-only', url: 'http://127.0.0.1:9/' });
  const { window } = dom;
  window.eval(fs.readFileSync(paths.jqueryVersions[jqueryVersion], 'utf8'));
  window.eval(fs.readFileSync(paths.clientScript, 'utf8'));
  const $ = window.jQuery;
  const network = new FakeNetwork($);
  return { window, $, network, close: () => window.close() };
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

module.exports = { loadClient, until };
