/*!
 * jquery.laharsub.js — jQuery client for Laharsub, HTTP pub/sub: all of a page's subscriptions share
 * one connection, a WebSocket, a Server-Sent Events stream or a long poll (tried in that order).
 * Works with jQuery 3.7 and jQuery 4; no other dependency. Wire protocol: docs/protocol.md.
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
  'use strict';

  if (!$ || typeof $.ajax !== 'function' || typeof $.Deferred !== 'function') {
    throw new Error('jquery.laharsub.js needs jQuery (3.7 or 4): load jquery.js before it.');
  }

  var defaults = {
    // Seconds the server may hold a poll (sent as `timeout`; the server caps it at MaxPollTimeout).
    pollTimeout: 30,
    // Seconds added to pollTimeout for the browser-side ajax timeout, so the server answers first.
    pollTimeoutMargin: 10,
    // Milliseconds before a topic request or a publish is abandoned.
    requestTimeout: 30000,
    // Backoff after network errors and 5xx: first delay, cap, and the random share taken off each delay.
    retryDelay: 500,
    maxRetryDelay: 30000,
    retryJitter: 0.5,
    // Every publish (REST, or a WebSocket frame) carries a new random idempotency key, and one whose outcome
    // is unknown (no answer, a socket closed before answering, 502, 503, 504, or 409: the same key still
    // being stored) is sent again over REST with the same key, up to publishAttempts times in all: the
    // server stores it once. Without keys a publish is never retried.
    idempotentPublishes: true,
    publishAttempts: 4,
    // Extra $.ajax settings for every request (e.g. headers); never used for url, type, data or callbacks.
    ajax: null,
    // Bearer token for a server in Jwt mode: a string, or a function returning a string or a promise of
    // one. A function is called before every request, and once more after a 401 (an expired token).
    accessToken: null,
    // The transports to try, in this order: 'websocket' (subprotocol laharsub.v1), 'sse' (the browser's
    // EventSource) and 'longpoll'. One that cannot be opened although the server answers a plain request
    // (a proxy that refuses the upgrade or buffers the stream) is passed over for the next.
    transports: ['websocket', 'sse', 'longpoll'],
    // Milliseconds an SSE stream may take to deliver the server's `subscribed` event before it is taken to be
    // held back by a buffering proxy (the next transport is then tried).
    sseOpenTimeout: 5000,
    // Conflation (docs/protocol.md, "Conflation"), for every subscription of the client, since they share
    // one connection: `conflate` asks for at most one delivery per that many milliseconds (0 to 60000; 0
    // is off), each with only the latest message of each topic; `latest: true` asks the client's first
    // delivery to start each topic that is behind at its latest retained message. Whatever is skipped
    // comes to the subscription's onConflated as a `conflated` notice, and the cursor moves past it.
    conflate: 0,
    latest: false,
    // Presence (docs/protocol.md, "Presence"), for every subscription of the client, since they share one
    // connection: `clientId` (1 to 64 characters of A-Z a-z 0-9 _ . : @ -; Open mode only, where it is
    // unauthenticated; in Jwt mode the token's subject is the identity) makes the client a member of the
    // topics with presence it subscribes to; `member` is a plain object shown with it (e.g. { name: 'Alice' },
    // at most the server's Presence:MaxMemberDataBytes, 256 bytes of JSON by default). Without either the
    // client is an anonymous observer.
    clientId: null,
    member: null,
    // Client-wide callbacks: onError(error) for failures no subscription owns; onStatus(status, info)
    // with status 'connecting' | 'connected' | 'retrying' | 'idle' | 'closed'; onTransport(transport,
    // info) when the connection in use starts on another transport than before.
    onError: null,
    onStatus: null,
    onTransport: null
  };

  var subscriptionDefaults = {
    from: null,
    // The topic's epoch that `from` belongs to (from getTopic, createTopic, or handle.epoch() saved
    // with the cursor), so that a topic re-created meanwhile is reported instead of read as the old one.
    epoch: null,
    onMessage: null,
    onGap: null,
    // conflated notices: messages fromMessageId..toMessageId skipped because the client asked for conflation.
    onConflated: null,
    // Resets go to onReset when it is given, otherwise to onGap as before (notice.type === 'reset').
    onReset: null,
    onTopicDeleted: null,
    onError: null
  };

  var jsonType = /^application\/(?:[\w.+-]*\+)?json\b/i;
  var transportNames = ['websocket', 'sse', 'longpoll'];
  var subprotocol = 'laharsub.v1';
  // A publish whose WebSocket frame is longer than this many UTF-16 units (up to 3 bytes each) goes over
  // REST instead: the server closes a socket that sends a frame above Laharsub:Streams:MaxReceiveFrameBytes
  // (1 MiB by default), and a closed socket would take the subscriptions' connection with it.
  var maxPublishFrameLength = 320 * 1024;
  // The protocol's epochs: opaque tokens of 1 to 32 characters from [0-9A-Za-z_-].
  var epochPattern = /^[0-9A-Za-z_-]{1,32}$/;
  // The protocol's client ids (presence in Open mode).
  var clientIdPattern = /^[A-Za-z0-9_.:@-]{1,64}$/;

  function fail(message) {
    throw new Error('$.laharsub: ' + message);
  }

  function isId(value) {
    return typeof value === 'number' && value > 0 && value % 1 === 0 && value <= Number.MAX_SAFE_INTEGER;
  }

  function toId(value, what) {
    var id = typeof value === 'string' && /^[0-9]+$/.test(value) ? Number(value) : value;
    if (!isId(id)) {
      fail(what + ' must be a positive integer (got ' + String(value) + ').');
    }
    return id;
  }

  function checkNumber(options, name, min) {
    var value = options[name];
    if (typeof value !== 'number' || !isFinite(value) || value < min) {
      fail('option ' + name + ' must be a number >= ' + min + ' (got ' + String(value) + ').');
    }
  }

  function checkCallback(options, name) {
    if (options[name] != null && typeof options[name] !== 'function') {
      fail('option ' + name + ' must be a function.');
    }
  }

  function checkKnown(options, known, what) {
    $.each(options, function (name) {
      if (!Object.prototype.hasOwnProperty.call(known, name)) {
        fail('unknown ' + what + ' option "' + name + '" (known: ' + Object.keys(known).join(', ') + ').');
      }
    });
  }

  function validateOptions(options) {
    checkKnown(options, defaults, 'client');
    var settings = $.extend({}, defaults, options);
    // At least 1: a poll that may not wait is answered 204 at once, and polling again at once would spin.
    checkNumber(settings, 'pollTimeout', 1);
    checkNumber(settings, 'pollTimeoutMargin', 1);
    checkNumber(settings, 'requestTimeout', 1);
    checkNumber(settings, 'retryDelay', 1);
    checkNumber(settings, 'maxRetryDelay', settings.retryDelay);
    checkNumber(settings, 'retryJitter', 0);
    if (settings.pollTimeout % 1 !== 0) {
      fail('option pollTimeout is whole seconds (got ' + settings.pollTimeout + ').');
    }
    if (settings.retryJitter > 1) {
      fail('option retryJitter is a share between 0 and 1 (got ' + settings.retryJitter + ').');
    }
    checkNumber(settings, 'publishAttempts', 1);
    if (settings.publishAttempts % 1 !== 0) {
      fail('option publishAttempts is a whole number of attempts (got ' + settings.publishAttempts + ').');
    }
    if (typeof settings.idempotentPublishes !== 'boolean') {
      fail('option idempotentPublishes is true or false.');
    }
    if (settings.ajax != null && !$.isPlainObject(settings.ajax)) {
      fail('option ajax must be a plain object of $.ajax settings.');
    }
    checkNumber(settings, 'sseOpenTimeout', 1);
    checkNumber(settings, 'conflate', 0);
    if (settings.conflate % 1 !== 0 || settings.conflate > 60000) {
      fail('option conflate is whole milliseconds from 0 (off) to 60000 (got ' + settings.conflate + ').');
    }
    if (typeof settings.latest !== 'boolean') {
      fail('option latest must be true or false (got ' + String(settings.latest) + ').');
    }
    if (settings.clientId != null && (typeof settings.clientId !== 'string' || !clientIdPattern.test(settings.clientId))) {
      fail('option clientId is 1 to 64 characters of A-Z a-z 0-9 _ . : @ - (got ' + String(settings.clientId) + ').');
    }
    if (settings.member != null && !$.isPlainObject(settings.member)) {
      fail('option member must be a plain object such as { name: \'Alice\' } (got ' + String(settings.member) + ').');
    }
    checkCallback(settings, 'onError');
    checkCallback(settings, 'onStatus');
    checkCallback(settings, 'onTransport');
    settings.transports = validateTransports(settings.transports);
    if (settings.accessToken != null && typeof settings.accessToken !== 'string' && typeof settings.accessToken !== 'function') {
      fail('option accessToken must be a token string or a function returning one (or a promise of one).');
    }
    return settings;
  }

  function validateTransports(list) {
    if (!Array.isArray(list) || !list.length) {
      fail('option transports must be a non-empty array of "websocket", "sse" and "longpoll", in the order to try them (got ' + String(list) + ').');
    }
    $.each(list, function (i, name) {
      if ($.inArray(name, transportNames) < 0) {
        fail('option transports names "' + String(name) + '": the transports are "websocket", "sse" and "longpoll".');
      }
      if ($.inArray(name, list) !== i) {
        fail('option transports lists "' + name + '" twice: list each transport once.');
      }
    });
    return list.slice();
  }

  /** Whether this browser has what the transport needs (jsdom, old browsers and some webviews lack EventSource). */
  function transportSupported(name) {
    if (name === 'websocket') {
      return typeof WebSocket === 'function';
    }
    if (name === 'sse') {
      return typeof EventSource === 'function';
    }
    return true;
  }

  function validateSubscription(options) {
    if (options != null && !$.isPlainObject(options)) {
      fail('subscribe options must be an object like { from: 1, onMessage: function (message) {} }.');
    }
    checkKnown(options || {}, subscriptionDefaults, 'subscribe');
    var settings = $.extend({}, subscriptionDefaults, options);
    if (settings.from != null) {
      settings.from = toId(settings.from, 'subscribe option from');
    }
    if (settings.epoch != null) {
      if (typeof settings.epoch !== 'string' || !epochPattern.test(settings.epoch)) {
        fail('subscribe option epoch must be the topic\'s epoch as the server reported it (1 to 32 characters of 0-9, A-Z, a-z, _ and -; got ' +
          String(settings.epoch) + '), or null when it is not known.');
      }
      if (settings.from == null) {
        fail('subscribe option epoch needs from: an epoch says which incarnation of the topic the cursor belongs to.');
      }
    }
    checkCallback(settings, 'onMessage');
    checkCallback(settings, 'onGap');
    checkCallback(settings, 'onConflated');
    checkCallback(settings, 'onReset');
    checkCallback(settings, 'onTopicDeleted');
    checkCallback(settings, 'onError');
    return settings;
  }

  function normalizeBaseUrl(baseUrl) {
    if (typeof baseUrl !== 'string' || !baseUrl) {
      fail('baseUrl must be the Laharsub API root, e.g. "/ps" or "https://example.com/ps", or an array of the roots of several instances.');
    }
    return baseUrl.replace(/\/+$/, '');
  }

  /** One API root, or several instances' roots in the order they are tried. */
  function normalizeBaseUrls(baseUrl) {
    if (!Array.isArray(baseUrl)) {
      return [normalizeBaseUrl(baseUrl)];
    }
    if (!baseUrl.length) {
      fail('baseUrl is an empty array: list at least one API root, e.g. ["https://a.example.com/ps", "https://b.example.com/ps"].');
    }
    var urls = $.map(baseUrl, function (url) { return [normalizeBaseUrl(url)]; });
    $.each(urls, function (i, url) {
      if ($.inArray(url, urls) !== i) {
        fail('baseUrl lists "' + url + '" twice: list each instance once.');
      }
    });
    return urls;
  }

  /**
   * Statuses that mean the instance cannot be reached or cannot serve now while another may: no
   * answer (connection refused or reset, timeout; browsers do not tell them apart) and 502/503/504.
   */
  function isUnavailable(status) {
    return status === 0 || status === 502 || status === 503 || status === 504;
  }

  /** A new random idempotency key: a UUID where the browser makes them, else 128 random bits in hex. */
  function newIdempotencyKey() {
    var crypto = typeof globalThis !== 'undefined' ? globalThis.crypto : null;
    if (crypto && typeof crypto.randomUUID === 'function') {
      return crypto.randomUUID();
    }
    var hex = '';
    for (var i = 0; i < 32; i++) {
      hex += Math.floor(Math.random() * 16).toString(16);
    }
    return hex;
  }

  /** Checks an epoch a caller gives: 1 to 32 characters of [0-9A-Za-z_-]. */
  function checkEpoch(epoch, what) {
    if (typeof epoch !== 'string' || !epochPattern.test(epoch)) {
      fail(what + ' must be an epoch as the server gives it: 1 to 32 characters of 0-9, A-Z, a-z, _ and -.');
    }
    return epoch;
  }

  /** Checks a caller's idempotency key: 1 to 255 printable ASCII characters without quotes or backslashes. */
  function checkIdempotencyKey(key) {
    if (key != null && (typeof key !== 'string' || !/^[\x20-\x21\x23-\x5b\x5d-\x7e]{1,255}$/.test(key))) {
      fail('idempotencyKey must be 1 to 255 printable ASCII characters without quotes or backslashes, such as a UUID.');
    }
    return key;
  }

  /** The `retry` delay in ms for the given attempt (0-based): exponential, capped, jittered downwards. */
  function backoffDelay(attempt, settings, random) {
    var base = Math.min(settings.maxRetryDelay, settings.retryDelay * Math.pow(2, Math.min(attempt, 30)));
    return Math.round(base * (1 - settings.retryJitter * random));
  }

  /** Retry-After (delta seconds or HTTP date) in ms, or null when absent or unreadable. */
  function parseRetryAfter(value, now) {
    if (value == null || value === '') {
      return null;
    }
    var text = String(value).trim();
    if (/^[0-9]+$/.test(text)) {
      return Number(text) * 1000;
    }
    var date = Date.parse(text);
    return isNaN(date) ? null : Math.max(0, date - now);
  }

  /** The poll's query string, in the indexed form that $.param produces: subs[i][topicid], [from], [epoch]. */
  function pollQuery(subscriptions, timeout, extra) {
    return $.param($.extend({
      subs: $.map(subscriptions, function (sub) {
        var entry = { topicid: sub.topicId };
        if (sub.cursor != null) {
          entry.from = sub.cursor;
          if (sub.epoch != null) {
            entry.epoch = sub.epoch;
          }
        }
        return entry;
      }),
      timeout: timeout
    }, extra));
  }

  /**
   * The compact form of a subscription set, `14:43~9f3c0a1b2c3d4e5f,15:8`: a stream's `topics` query
   * parameter, and the topics of a WebSocket's subscribe frame.
   */
  function compactTopics(subscriptions) {
    return $.map(subscriptions, function (sub) {
      var text = String(sub.topicId);
      if (sub.cursor != null) {
        text += ':' + sub.cursor;
        if (sub.epoch != null) {
          text += '~' + sub.epoch;
        }
      }
      return text;
    }).join(',');
  }

  /**
   * A stream's URL: the subscription URL with the topics in the compact form, and the token as
   * `access_token` (an EventSource or a WebSocket cannot send Authorization).
   */
  function streamUrl(baseUrl, subscriptions, token, extra) {
    var query = subscriptions.length ? 'topics=' + compactTopics(subscriptions) : '';
    query += extraQuerySuffix(extra || {});
    if (token) {
      query += '&access_token=' + encodeURIComponent(token);
    }
    return baseUrl + '/subscriptions' + (query ? '?' + query.replace(/^&/, '') : '');
  }

  /** `&name=value...` for extra query parameters, or nothing. */
  function extraQuerySuffix(query) {
    var text = $.param(query);
    return text ? '&' + text : '';
  }

  /** The ws: or wss: URL of a stream URL that may be relative to the page (as baseUrl may be). */
  function socketUrl(url) {
    var base = typeof document !== 'undefined' && document.baseURI ? document.baseURI : undefined;
    var absolute = new URL(url, base);
    absolute.protocol = absolute.protocol === 'https:' ? 'wss:' : 'ws:';
    return absolute.href;
  }

  /** The epoch a message or notice names, if it is one (anything else is ignored, not sent back). */
  function epochOf(item) {
    return typeof item.epoch === 'string' && epochPattern.test(item.epoch) ? item.epoch : null;
  }

  function decodeBase64(text) {
    var binary = atob(text);
    var bytes = new Uint8Array(binary.length);
    for (var i = 0; i < binary.length; i++) {
      bytes[i] = binary.charCodeAt(i);
    }
    return bytes;
  }

  function encodeBase64(bytes) {
    var chunks = [];
    for (var i = 0; i < bytes.length; i += 8192) {
      chunks.push(String.fromCharCode.apply(null, bytes.subarray(i, i + 8192)));
    }
    return btoa(chunks.join(''));
  }

  /** Adds `data` to a wire message: parsed JSON, the text, or the bytes of a base64 body. */
  function decodeMessage(message) {
    var decoded = $.extend({}, message);
    if (message.encoding === 'base64') {
      decoded.data = decodeBase64(message.body);
    } else if (jsonType.test(message.contentType || '')) {
      try {
        decoded.data = JSON.parse(message.body);
      } catch (e) {
        decoded.data = message.body;
      }
    } else {
      decoded.data = message.body;
    }
    return decoded;
  }

  /** What to send for a publish: objects as JSON by default, strings as UTF-8 text, binary as is. */
  function publishBody(data, contentType) {
    var binary = (typeof ArrayBuffer !== 'undefined' && (data instanceof ArrayBuffer || ArrayBuffer.isView(data))) ||
      (typeof Blob !== 'undefined' && data instanceof Blob);
    if (contentType != null && (typeof contentType !== 'string' || !contentType)) {
      fail('publish contentType must be a media type string such as "text/plain; charset=utf-8".');
    }
    if (data == null || data === '') {
      fail('publish needs a non-empty message: Laharsub refuses empty bodies.');
    }
    if (binary) {
      return { body: data, contentType: contentType || 'application/octet-stream' };
    }
    // A string is sent as it is, even with a JSON type (it is then taken to be JSON text already).
    if (typeof data === 'string') {
      return { body: data, contentType: contentType || 'text/plain; charset=utf-8' };
    }
    if (contentType && !jsonType.test(contentType)) {
      fail('publish got ' + (Array.isArray(data) ? 'an array' : typeof data) + ' with content type "' + contentType +
        '": pass a string or binary data for non-JSON types, or omit the type to send JSON.');
    }
    return { body: JSON.stringify(data), contentType: contentType || 'application/json' };
  }

  /**
   * A WebSocket publish frame (without its id) for what publishBody made, to `target` ({ topicId } or
   * { topics: '14,15~epoch' }) with the idempotency key if any, or null when it should go over REST: a
   * Blob cannot be read without waiting, and a large body might exceed the server's frame limit.
   */
  function publishFrame(target, body, key) {
    var frame = $.extend({ type: 'publish' }, target, { contentType: body.contentType });
    if (key != null) {
      frame.idempotencyKey = key;
    }
    var data = body.body;
    if (typeof data === 'string') {
      frame.encoding = 'text';
      frame.body = data;
    } else if (typeof ArrayBuffer !== 'undefined' && data instanceof ArrayBuffer) {
      frame.encoding = 'base64';
      frame.body = encodeBase64(new Uint8Array(data));
    } else if (typeof ArrayBuffer !== 'undefined' && ArrayBuffer.isView(data)) {
      frame.encoding = 'base64';
      frame.body = encodeBase64(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    } else {
      return null;
    }
    return frame.body.length > maxPublishFrameLength ? null : frame;
  }

  /** An Error carrying the HTTP status and the server's problem detail (RFC 9457) when there is one. */
  function LaharsubError(message, status, problem, jqXHR) {
    var error = new Error(message);
    error.name = 'LaharsubError';
    error.status = status;
    error.problem = problem || null;
    error.topicId = problem && isId(problem.topicId) ? problem.topicId : null;
    error.retryAfter = jqXHR ? parseRetryAfter(jqXHR.getResponseHeader('Retry-After'), Date.now()) : null;
    error.jqXHR = jqXHR || null;
    return error;
  }

  /** What a problem detail says: its detail (or title), then each invalid parameter's messages; null when it says nothing. */
  function describeProblem(problem) {
    if (!problem || !(problem.detail || problem.title)) {
      return null;
    }
    var reason = problem.detail || problem.title;
    if (problem.errors) {
      // Each error the detail does not already say (a validation problem's detail names the parameter and its error).
      var errors = $.map(problem.errors, function (messages, key) {
        var entry = key + ': ' + [].concat(messages).join(' ');
        return reason.indexOf(entry) < 0 ? entry : null;
      });
      if (errors.length) {
        reason += ' ' + errors.join('; ');
      }
    }
    return reason;
  }

  /** The error for a problem the server sent on a WebSocket (a refused frame): as errorFrom's, without a jqXHR. */
  function problemError(what, problem) {
    problem = problem && typeof problem === 'object' ? problem : {};
    var status = isId(problem.status) ? problem.status : 0;
    return LaharsubError(what + ' failed: ' + (describeProblem(problem) || 'status ' + status), status, problem, null);
  }

  function errorFrom(jqXHR, textStatus, what) {
    var problem = null;
    var contentType = jqXHR.getResponseHeader('Content-Type') || '';
    if (/json/i.test(contentType) && jqXHR.responseText) {
      try {
        problem = JSON.parse(jqXHR.responseText);
      } catch (e) {
        problem = null;
      }
    }
    var reason = describeProblem(problem);
    if (reason) {
      // The problem detail says it.
    } else if (jqXHR.status === 414) {
      // Kestrel refuses an over-long request line before Laharsub sees it, so there is no problem detail.
      reason = 'HTTP 414: the poll names more topics than fit in the server\'s request line. ' +
        'Split the topics over several clients, or ask the operator to raise Kestrel:Limits:MaxRequestLineSize.';
    } else if (jqXHR.status) {
      reason = 'HTTP ' + jqXHR.status + (jqXHR.statusText ? ' ' + jqXHR.statusText : '');
    } else if (textStatus === 'token') {
      reason = 'the accessToken function failed, so nothing was sent';
    } else {
      reason = textStatus === 'timeout' ? 'no answer in time' : 'the server could not be reached (' + (textStatus || 'network error') + ')';
    }
    return LaharsubError(what + ' failed: ' + reason, jqXHR.status || 0, problem, jqXHR);
  }

  // What $.ajax's failure callbacks get when no request was sent: the accessToken function failed, or
  // the request was aborted while the token was awaited.
  function unsentXhr() {
    return { status: 0, statusText: '', responseText: '', getResponseHeader: function () { return null; } };
  }

  function tokenFrom(accessToken) {
    var token = $.Deferred();
    try {
      var value = typeof accessToken === 'function' ? accessToken() : accessToken;
      if (value && typeof value.then === 'function') {
        value.then(token.resolve, token.reject);
      } else {
        token.resolve(value);
      }
    } catch (e) {
      token.reject(e);
    }
    return token.promise();
  }

  // $.ajax(settings) carrying the access token. After a 401 a token function is asked once more and
  // the request sent again (a token string would only be refused again). Callbacks get $.ajax's
  // arguments; abort() ends the request whether or not it was sent yet.
  function authorizedAjax(accessToken, settings) {
    if (accessToken == null) {
      return $.ajax(settings);
    }
    var result = $.Deferred();
    var current = null;
    var aborted = false;
    function attempt(isRefresh) {
      tokenFrom(accessToken).then(function (token) {
        if (aborted) {
          return;
        }
        var headers = $.extend({}, settings.headers);
        if (token) {
          headers.Authorization = 'Bearer ' + token;
        }
        current = $.ajax($.extend({}, settings, { headers: headers }));
        current.then(result.resolve, function (jqXHR, textStatus, errorThrown) {
          if (jqXHR.status === 401 && !isRefresh && !aborted && typeof accessToken === 'function') {
            attempt(true);
            return;
          }
          result.reject(jqXHR, textStatus, errorThrown);
        });
      }, function (reason) {
        if (!aborted) {
          result.reject(unsentXhr(), 'token', reason);
        }
      });
    }
    attempt(false);
    var promise = result.promise();
    promise.abort = function () {
      aborted = true;
      if (current) {
        current.abort();
      }
      if (result.state() === 'pending') {
        result.reject(unsentXhr(), 'abort');
      }
    };
    return promise;
  }

  function isRetryable(status) {
    return status === 0 || status === 408 || status === 429 || status >= 500;
  }

  function report(callback, context, args) {
    if (!callback) {
      return;
    }
    try {
      callback.apply(context, args);
    } catch (e) {
      // A page's callback that throws must not stop delivery to the others; surface it anyway.
      setTimeout(function () { throw e; }, 0);
    }
  }

  function Client(baseUrl, options) {
    // Several roots are instances of one service (one shared store): the client uses one at a time and
    // moves to the next when it cannot be reached. `baseUrl` is the one in use.
    this.baseUrls = normalizeBaseUrls(baseUrl);
    this._baseIndex = 0;
    this.baseUrl = this.baseUrls[0];
    this.options = validateOptions(options || {});
    // The transport of the connection in use (or of the last one): 'websocket', 'sse' or 'longpoll';
    // null until a connection has started.
    this.transport = null;
    this._subs = {};
    this._order = [];
    this._poll = null;
    // The stream being opened or open (WebSocket or EventSource), with what it carries.
    this._conn = null;
    // Which of options.transports the next connection tries: it moves on when a stream cannot be
    // opened though the server answers, and starts again when the server could not be reached.
    this._chain = 0;
    this._skipped = [];
    this._tokenRetried = false;
    this._stopStreak = 0;
    this._generation = 0;
    this._retryTimer = null;
    this._kickTimer = null;
    this._attempt = 0;
    this._earlyEmptyPolls = 0;
    // Whether the next request still asks for `latest` (until the first message or notice arrives).
    this._latestPending = this.options.latest;
    this._status = 'idle';
    this._closed = false;
  }

  Client.prototype = {
    constructor: Client,

    /**
     * Creates a topic; resolves with { topicId, epoch }, plus label when one is given:
     * createTopic({ label: 'orders-eu' }). A label (a letter, then letters, digits and - _ . : /; up to
     * 100 characters; not unique) names the topic for people and for listTopics({ label: 'orders-*' }).
     * The server checks it: a bad one rejects with status 400 and problem.errors.label.
     * createTopic({ presence: true }) creates it with presence: the answer's presenceTopicId is the
     * companion topic that carries its join and leave events (see watchPresence, getPresence).
     */
    createTopic: function (options) {
      var label = options && options.label;
      var presence = options && options.presence;
      if (presence != null && typeof presence !== 'boolean') {
        fail('presence must be true or false (got ' + String(presence) + ').');
      }
      if (label == null && !presence) {
        return this._request('POST', '/topics', 'create topic');
      }
      if (label != null && (typeof label !== 'string' || label === '')) {
        fail('label must be a non-empty string (got ' + String(label) + ').');
      }
      var description = label == null ? {} : { label: label };
      if (presence) {
        description.presence = true;
      }
      return this._request('POST', '/topics', 'create topic ' + (label == null ? '' : label), {
        data: JSON.stringify(description),
        contentType: 'application/json',
        processData: false
      });
    },

    /**
     * Lists one page of topics in id order; resolves with { topics, next } where `next` (present when
     * more may follow) is the `after` to pass for the next page. Options: after (default 0), limit (1 to
     * 1000, default 100) and label, a pattern where * stands for any run of characters ('orders-*').
     * A page filtered by label may hold fewer topics than limit, even none, and still have a next.
     */
    listTopics: function (options) {
      var settings = $.extend({ after: 0, limit: 100 }, options);
      var query = { after: settings.after === 0 ? 0 : toId(settings.after, 'after'), limit: toId(settings.limit, 'limit') };
      if (settings.label != null) {
        query.label = settings.label;
      }
      return this._request('GET', '/topics?' + $.param(query), 'list topics').then(function (page) {
        // The server's next link names where its scan stopped: hand back just that cursor.
        var after = page.next && /[?&]after=([0-9]+)/.exec(page.next);
        return after ? { topics: page.topics, next: Number(after[1]) } : { topics: page.topics };
      });
    },

    /**
     * Reads one page of a presence topic's member list, ordered by member id; resolves with
     * { topicId, occupancy, members: [{ member, data }], next } where `next` (null on the last page) is the
     * `after` to pass for the next page. Options: after (a member id), limit (1 to 1000, default 100).
     * A topic without presence rejects with status 409.
     */
    getPresence: function (topicId, options) {
      var id = toId(topicId, 'topicId');
      var settings = $.extend({ limit: 100 }, options);
      var query = { limit: toId(settings.limit, 'limit') };
      if (query.limit > 1000) {
        fail('limit is 1 to 1000 (got ' + query.limit + ').');
      }
      if (settings.after != null) {
        if (typeof settings.after !== 'string' || settings.after === '') {
          fail('after must be a member id (got ' + String(settings.after) + ').');
        }
        query.after = settings.after;
      }
      return this._request('GET', '/topics/' + id + '/presence?' + $.param(query), 'get presence of topic ' + id);
    },

    /**
     * Keeps a live member list of a topic with presence: reads the list, subscribes to its companion
     * topic, and applies joins and leaves (reading the list again after a gap or a reset). Callbacks:
     * onChange(members, event) with members an object member id -> data and event the join or leave
     * that changed it (null for a fresh list); onError(error). Returns a handle with members(),
     * occupancy(), stop() and `ready`, resolved once the first list is in.
     */
    watchPresence: function (topicId, callbacks) {
      return watchPresence(this, toId(topicId, 'topicId'), $.extend({ onChange: null, onError: null }, callbacks));
    },

    /**
     * Changes the `member` data (a plain object, or null for none) this client is present with; it is
     * sent from the next poll or connection on (a change of data alone makes no presence event).
     */
    setMember: function (member) {
      if (member != null && !$.isPlainObject(member)) {
        fail('member must be a plain object such as { name: \'Alice\' } (got ' + String(member) + ').');
      }
      this.options.member = member == null ? null : $.extend({}, member);
    },

    /** Resolves with the topic's info (epoch, lastMessageId, firstRetainedMessageId, ...). */
    getTopic: function (topicId) {
      var id = toId(topicId, 'topicId');
      return this._request('GET', '/topics/' + id, 'get topic ' + id);
    },

    /** Deletes a topic and its messages; its subscribers get onTopicDeleted. */
    deleteTopic: function (topicId) {
      var id = toId(topicId, 'topicId');
      return this._request('DELETE', '/topics/' + id, 'delete topic ' + id);
    },

    /**
     * Publishes one message; resolves with { topicId, messageId, epoch }. Objects go as JSON unless a
     * contentType says otherwise; strings as text/plain; ArrayBuffer, typed arrays and Blobs as bytes.
     * It carries an idempotency key (`options.idempotencyKey`, else a new random one while
     * idempotentPublishes is on). Sent on the WebSocket when one is open, else as a REST request; a keyed
     * publish whose outcome is unknown (no answer in time, a socket closed before answering, 502/503/504)
     * is sent again over REST with the same key, so the server stores it once.
     */
    publish: function (topicId, data, contentType, options) {
      var id = toId(topicId, 'topicId');
      var body = publishBody(data, contentType);
      var key = this._publishKey(options);
      return this._publish({ topicId: id }, '/topics/' + id, 'publish to topic ' + id, body, key, false);
    },

    /**
     * Publishes one message to several topics in one request, all or none; resolves with one
     * { topicId, messageId, epoch } per topic, in the order given. `options.epochs` maps a topic id to the
     * epoch it must have; `options.idempotencyKey` as for publish. When a topic is missing (404), another
     * incarnation (412) or forbidden (403), nothing is published and the error's problem.topics names them.
     */
    publishMany: function (topicIds, data, contentType, options) {
      if (!Array.isArray(topicIds) || topicIds.length === 0) {
        fail('publishMany needs an array of topic ids.');
      }
      var seen = {};
      var epochs = (options && options.epochs) || {};
      var list = $.map(topicIds, function (topicId) {
        var id = toId(topicId, 'topicIds');
        if (seen[id]) {
          fail('publishMany names topic ' + id + ' twice.');
        }
        seen[id] = true;
        return epochs[id] != null ? id + '~' + checkEpoch(epochs[id], 'epochs[' + id + ']') : String(id);
      });
      var body = publishBody(data, contentType);
      var key = this._publishKey(options);
      var topics = list.join(',');
      return this._publish({ topics: topics }, '/topics/publish?topics=' + topics, 'publish to topics ' + topicIds.join(','), body, key, true);
    },

    // The caller's key, else a new random one while idempotentPublishes is on, else none.
    _publishKey: function (options) {
      var key = checkIdempotencyKey(options && options.idempotencyKey);
      return key == null && this.options.idempotentPublishes ? newIdempotencyKey() : key;
    },

    // On the open WebSocket when there is one and the body fits in a frame, else over REST. `many` resolves
    // with the messages of a publish to several topics (REST answers them as { messages }).
    _publish: function (target, path, what, body, key, many) {
      var client = this;
      function overRest() {
        var request = client._publishRequest(path, what, body, key);
        return many ? request.then(function (answer) { return answer.messages; }) : request;
      }
      var conn = this._conn;
      if (conn && conn.kind === 'websocket' && conn.established && conn.socket.readyState === 1) {
        var frame = publishFrame(target, body, key);
        if (frame) {
          return this._publishOnSocket(conn, what, frame, key != null, many, overRest);
        }
      }
      return overRest();
    },

    // A REST publish, with its key, sent again with the same key while its outcome is unknown.
    _publishRequest: function (path, what, body, key) {
      var client = this;
      var result = $.Deferred();
      var attempts = key == null ? 1 : Math.max(1, this.options.publishAttempts);
      var headers = $.extend({}, this.options.ajax && this.options.ajax.headers);
      if (key != null) {
        headers['Idempotency-Key'] = '"' + key + '"';
      }
      function attempt(n) {
        client._request('POST', path, what, {
          data: body.body,
          contentType: body.contentType,
          processData: false,
          headers: headers
        }).then(result.resolve, function (error) {
          var unknown = isUnavailable(error.status) || error.status === 409;
          if (!unknown || n + 1 >= attempts || client._closed) {
            result.reject(error);
            return;
          }
          // _request moved to the next address on an unavailable one: that one is tried at once.
          var delay = error.retryAfter != null ? error.retryAfter
            : (isUnavailable(error.status) && n + 1 < client.baseUrls.length ? 0 : backoffDelay(n, client.options, Math.random()));
          setTimeout(function () { attempt(n + 1); }, delay);
        });
      }
      attempt(0);
      return result.promise();
    },

    /**
     * Subscribes to a topic from `from` (absent: the next message published), in the incarnation
     * `epoch` when given. Returns a handle with unsubscribe(), cursor(), epoch() and `ready`, a promise
     * resolved once the subscription's cursor is fixed (whatever is published afterwards is delivered).
     */
    subscribe: function (topicId, options) {
      var id = toId(topicId, 'topicId');
      var settings = validateSubscription(options);
      if (this._closed) {
        fail('this client is closed: create a new one with $.laharsub(baseUrl).');
      }
      if (this._subs[id]) {
        fail('topic ' + id + ' is already subscribed on this client: unsubscribe it first.');
      }
      var client = this;
      var ready = $.Deferred();
      var sub = {
        topicId: id,
        cursor: settings.from,
        epoch: settings.epoch,
        options: settings,
        active: true,
        joined: false
      };
      var handle = {
        topicId: id,
        ready: ready.promise(),
        /** The smallest message id still wanted: pass it as `from` to resume elsewhere. */
        cursor: function () { return sub.cursor; },
        /** The topic's epoch the cursor belongs to (null until the server has named it): keep it with the cursor. */
        epoch: function () { return sub.epoch; },
        active: function () { return sub.active; },
        unsubscribe: function () { client._drop(sub); }
      };
      sub.handle = handle;
      sub.ready = ready;
      this._subs[id] = sub;
      this._order.push(id);

      if (sub.cursor != null) {
        this._join(sub);
      } else {
        // Fix the cursor before joining: a connection opened later without `from` would start at the
        // topic's end again and lose what was published in between.
        this.getTopic(id).then(function (info) {
          if (sub.active) {
            sub.cursor = info.lastMessageId + 1;
            sub.epoch = epochOf(info);
            client._join(sub);
          }
        }, function (error) {
          if (sub.active) {
            ready.reject(error);
            client._drop(sub);
            report(settings.onError, handle, [error, handle]);
          }
        });
      }
      return handle;
    },

    /** Every active subscription's cursor, by topic id. */
    cursors: function () {
      var result = {};
      $.each(this._subs, function (id, sub) {
        result[id] = sub.cursor;
      });
      return result;
    },

    /** Every active subscription's epoch (null where not yet known), by topic id: save it with the cursors. */
    epochs: function () {
      var result = {};
      $.each(this._subs, function (id, sub) {
        result[id] = sub.epoch;
      });
      return result;
    },

    /** The ids of the active subscriptions, in subscription order. */
    topics: function () {
      return this._order.slice();
    },

    /** Ends every subscription and the connection; the client cannot be used afterwards. */
    close: function () {
      var client = this;
      if (this._closed) {
        return;
      }
      $.each(this._order.slice(), function (i, id) {
        client._subs[id].active = false;
      });
      this._subs = {};
      this._order = [];
      this._closed = true;
      this._stopPoll();
      this._endConn('the client was closed');
      this._setStatus('closed');
    },

    _request: function (method, path, what, extra) {
      var client = this;
      var result = $.Deferred();
      if (this._closed) {
        return result.reject(LaharsubError(what + ' failed: the client is closed.', 0, null, null)).promise();
      }
      var address = this._baseIndex;
      authorizedAjax(this.options.accessToken, $.extend({}, this.options.ajax, {
        url: this.baseUrls[address] + path,
        type: method,
        dataType: method === 'DELETE' ? 'text' : 'json',
        timeout: this.options.requestTimeout
      }, extra)).then(function (data) {
        result.resolve(method === 'DELETE' ? undefined : data);
      }, function (jqXHR, textStatus) {
        var error = errorFrom(jqXHR, textStatus, what);
        // Not retried here (a publish may have arrived), but the next request goes to another instance.
        if (isUnavailable(error.status)) {
          client._failOver(address);
        }
        report(client.options.onError, client, [error]);
        result.reject(error);
      });
      return result.promise();
    },

    // From here on the cursor is fixed, so whatever is published next reaches the subscriber.
    _join: function (sub) {
      sub.joined = true;
      sub.ready.resolve(sub.handle);
      this._kick();
    },

    _drop: function (sub) {
      if (!sub.active) {
        return;
      }
      sub.active = false;
      if (sub.ready.state() === 'pending') {
        sub.ready.reject(LaharsubError('subscription to topic ' + sub.topicId + ' ended before it started.', 0, null, null));
      }
      delete this._subs[sub.topicId];
      this._order = $.grep(this._order, function (id) { return id !== sub.topicId; });
      if (sub.joined) {
        this._kick();
      }
    },

    _joined: function () {
      var subs = this._subs;
      return $.grep($.map(this._order, function (id) { return subs[id]; }), function (sub) { return sub.joined; });
    },

    _setStatus: function (status, info) {
      if (status === this._status && status !== 'retrying') {
        return;
      }
      this._status = status;
      report(this.options.onStatus, this, [status, info || {}]);
    },

    // Brings the connection in line with the current set, once per burst of subscribe/unsubscribe calls
    // (they often come several in a row), so at most one connection is ever open or outstanding.
    _kick: function () {
      var client = this;
      if (this._closed) {
        return;
      }
      // From now on an answer to the poll made for the old set is not applied (jQuery runs its
      // handlers later, so one can still arrive before the timer below): applying it could move a
      // cursor past messages that the new set asks for again. The next poll fetches them instead.
      this._generation++;
      if (this._kickTimer) {
        return;
      }
      this._kickTimer = setTimeout(function () {
        client._kickTimer = null;
        if (client._retryTimer) {
          return;
        }
        client._resync();
      }, 0);
    },

    _resync: function () {
      var conn = this._conn;
      var joined = this._joined();
      if (conn && conn.kind === 'websocket') {
        if (conn.established) {
          // An open socket changes its topics with frames, and stays open without any (it carries publishes).
          this._syncSocket(conn);
          this._setStatus(joined.length ? 'connected' : 'idle');
          return;
        }
        if (joined.length) {
          // Still opening: synced once the server has said it is subscribed.
          return;
        }
      }
      if (conn && conn.kind === 'sse' && conn.established && this._sseCovers(conn, joined)) {
        return;
      }
      // A long poll is asked again, an event stream opened again, for the new set, from the cursors.
      this._stopPoll();
      this._endConn('the subscriptions changed');
      this._connect();
    },

    _stopPoll: function () {
      this._generation++;
      if (this._poll) {
        var poll = this._poll;
        this._poll = null;
        poll.abort();
      }
      if (this._retryTimer) {
        clearTimeout(this._retryTimer);
        this._retryTimer = null;
      }
      if (this._kickTimer && this._closed) {
        clearTimeout(this._kickTimer);
        this._kickTimer = null;
      }
    },

    // Starts a connection for the current set with the transport the chain has reached.
    _connect: function () {
      if (this._closed || this._poll || this._conn || this._retryTimer) {
        return;
      }
      var subs = this._joined();
      if (!subs.length) {
        this._setStatus('idle');
        return;
      }
      // This connection is for the current set: a kick still pending would only end it and start again.
      if (this._kickTimer) {
        clearTimeout(this._kickTimer);
        this._kickTimer = null;
      }
      var kind = this._nextTransport();
      if (kind == null) {
        var error = LaharsubError('subscribing failed: the server answers, but none of the transports ' + this.options.transports.join(', ') +
          ' could be opened (a proxy on the way may refuse WebSocket upgrades or buffer event streams): add \'longpoll\' to the option transports.', 0, null, null);
        this._chain = 0;
        this._skipped = [];
        report(this.options.onError, this, [error]);
        this._retryLater(backoffDelay(this._attempt++, this.options, Math.random()), error);
        return;
      }
      if (this._status !== 'connected' && this._status !== 'retrying') {
        this._setStatus('connecting');
      }
      if (kind === 'longpoll') {
        this._startPoll();
      } else {
        this._openStream(kind, subs);
      }
    },

    _nextTransport: function () {
      var list = this.options.transports;
      for (; this._chain < list.length; this._chain++) {
        if (transportSupported(list[this._chain])) {
          return list[this._chain];
        }
      }
      return null;
    },

    // A connection has started: it is the one in use, on `kind`.
    _established: function (kind) {
      var skipped = this._skipped;
      this._attempt = 0;
      this._tokenRetried = false;
      this._skipped = [];
      if (this.transport !== kind) {
        var previous = this.transport;
        this.transport = kind;
        report(this.options.onTransport, this, [kind, { previous: previous, skipped: skipped, baseUrl: this.baseUrl }]);
      }
      this._setStatus('connected');
    },

    _startPoll: function () {
      var client = this;
      var subs = this._joined();
      if (this._closed || this._poll || this._conn) {
        return;
      }
      if (!subs.length) {
        this._setStatus('idle');
        return;
      }
      // This poll is for the current set: a kick still pending would only abort it and ask again.
      if (this._kickTimer) {
        clearTimeout(this._kickTimer);
        this._kickTimer = null;
      }
      var generation = ++this._generation;
      var address = this._baseIndex;
      // Until a poll has been answered (first poll, or after a failure) ask for an answer at once, so
      // that the page learns quickly that the server is reachable instead of after a whole poll.
      var timeout = this._status === 'connected' && this.transport === 'longpoll' ? this.options.pollTimeout : 0;
      var started = Date.now();
      if (this._status !== 'connected' && this._status !== 'retrying') {
        this._setStatus('connecting');
      }
      this._poll = authorizedAjax(this.options.accessToken, $.extend({}, this.options.ajax, {
        url: this.baseUrls[address] + '/subscriptions?' + pollQuery(subs, timeout, this._extraQuery()),
        type: 'GET',
        dataType: 'json',
        timeout: (timeout + this.options.pollTimeoutMargin) * 1000
      }));
      this._poll.then(function (data, textStatus, jqXHR) {
        if (generation !== client._generation) {
          return;
        }
        client._poll = null;
        client._established('longpoll');
        if (jqXHR.status === 204 || !data) {
          client._afterEmptyPoll(Date.now() - started, timeout);
          return;
        }
        client._earlyEmptyPolls = 0;
        client._stopStreak = 0;
        client._deliver(data);
        client._startPoll();
      }, function (jqXHR, textStatus) {
        if (generation !== client._generation) {
          return;
        }
        client._poll = null;
        client._pollFailed(errorFrom(jqXHR, textStatus, 'poll'), address);
      });
    },

    // 204 is the normal end of a quiet poll; 204 long before the timeout means the server is going
    // away (shutdown answers polls at once with Connection: close). Poll again at once, but back off
    // if it keeps happening, so a draining server is not hammered.
    _afterEmptyPoll: function (elapsed, timeout) {
      var early = timeout > 0 && elapsed < timeout * 500;
      this._earlyEmptyPolls = early ? this._earlyEmptyPolls + 1 : 0;
      if (this._earlyEmptyPolls > 1) {
        this._retryLater(backoffDelay(this._earlyEmptyPolls - 2, this.options, Math.random()), null);
      } else {
        this._startPoll();
      }
    },

    // Moves on from the instance at `failed` to the next; a failure seen after the client already
    // moved (a request that was sent before) does not move it again.
    _failOver: function (failed) {
      if (this.baseUrls.length > 1 && this._baseIndex === failed) {
        this._baseIndex = (failed + 1) % this.baseUrls.length;
        this.baseUrl = this.baseUrls[this._baseIndex];
      }
    },

    // The connection failed (a poll's answer, a stream that was cut or could not be opened): retry,
    // drop a refused topic, or end every subscription, as the status says.
    _pollFailed: function (error, address) {
      var client = this;
      if (isRetryable(error.status)) {
        var failures = ++this._attempt;
        var count = this.baseUrls.length;
        var delay;
        if (isUnavailable(error.status)) {
          this._failOver(address);
          // Once the server answers again, the preferred transport is tried first again.
          this._chain = 0;
          this._skipped = [];
        }
        if (isUnavailable(error.status) && count > 1 && failures < count) {
          // Another instance is tried at once, whatever this one's Retry-After says; once every one has
          // failed in a row, the usual backoff.
          delay = 0;
        } else {
          delay = backoffDelay(failures - (isUnavailable(error.status) ? count : 1), this.options, Math.random());
          if (error.retryAfter != null) {
            delay = error.retryAfter;
          }
        }
        this._retryLater(delay, error);
        return;
      }
      // 404 (unknown topic) and 403 (the token may not subscribe to it) name the topic that made the
      // server refuse the whole poll.
      if ((error.status === 404 || error.status === 403) && error.topicId != null) {
        var sub = this._subs[error.topicId];
        if (!sub) {
          // Already unsubscribed meanwhile: the next poll no longer names it.
          this._kick();
          return;
        }
        // One unknown or forbidden topic must not end the others: drop it, tell its owner, poll for the rest.
        this._drop(sub);
        report(sub.options.onError, sub.handle, [error, sub.handle]);
        report(this.options.onError, this, [error]);
        return;
      }
      // Any other 4xx would fail the same way again: end every subscription and say why.
      var subs = this._joined();
      $.each(subs, function (i, each) {
        client._drop(each);
        report(each.options.onError, each.handle, [error, each.handle]);
      });
      report(this.options.onError, this, [error]);
      this._setStatus('idle', { error: error });
    },

    // The server said it is stopping (a WebSocket closed 1001, an event stream's `reconnect`): another
    // instance answers, or this one after its restart. Each stop in a row without a delivery in between
    // waits longer, so that a draining server that still accepts streams is not asked again and again.
    _serverStopping: function (error, address) {
      this._attempt = Math.max(this._attempt, this._stopStreak++);
      this._pollFailed(error, address);
    },

    _retryLater: function (delay, error) {
      var client = this;
      this._setStatus('retrying', { delay: delay, error: error, baseUrl: this.baseUrl });
      this._retryTimer = setTimeout(function () {
        client._retryTimer = null;
        client._connect();
      }, delay);
    },

    // Opens a WebSocket or an EventSource for `subs`, once the token (if any) is known.
    _openStream: function (kind, subs) {
      var client = this;
      var conn = {
        kind: kind,
        address: this._baseIndex,
        established: false,
        token: null,
        timer: null,
        socket: null,
        source: null,
        // sse: the subscriptions the stream was opened for, and those of them the server deleted.
        subs: {},
        deleted: {},
        // websocket: each topic the socket follows, with the frame that (re)positioned it while unanswered;
        // the subscribe/unsubscribe frames sent, in order; publishes awaiting their answer.
        topics: {},
        frames: {},
        frameCount: 0,
        publishes: {}
      };
      $.each(subs, function (i, sub) { conn.subs[sub.topicId] = sub; });
      this._conn = conn;
      var open = function (token) {
        if (client._conn !== conn) {
          return;
        }
        conn.token = token || null;
        if (kind === 'websocket') {
          client._openSocket(conn, subs);
        } else {
          client._openEventSource(conn, subs);
        }
      };
      if (this.options.accessToken == null) {
        open(null);
        return;
      }
      tokenFrom(this.options.accessToken).then(open, function () {
        if (client._conn === conn) {
          client._conn = null;
          client._pollFailed(errorFrom(unsentXhr(), 'token', 'subscription'), conn.address);
        }
      });
    },

    // Ends the stream in use (if any), failing the publishes still unanswered on it.
    _endConn: function (why) {
      var conn = this._conn;
      if (!conn) {
        return;
      }
      this._conn = null;
      clearTimeout(conn.timer);
      if (conn.socket) {
        try {
          conn.socket.close(1000);
        } catch (e) {
          // Already closing.
        }
      }
      if (conn.source) {
        conn.source.close();
      }
      this._failPublishes(conn, 'the WebSocket was closed (' + why + ') before the publish was answered: it may have been stored.');
    },

    // A stream could not be opened. The browser does not say why (a WebSocket's handshake status and an
    // EventSource's are hidden from pages), so one poll that answers at once asks the server: an error
    // there (a 404 or 403 topic, a refused token, an unreachable server) is handled as a poll's, and
    // the same transport is tried again; an answer means the server accepts these subscriptions, and
    // the stream was refused or held back on the way (a proxy): the next transport is tried.
    _streamFailedToOpen: function (conn) {
      var client = this;
      var subs = this._joined();
      if (this._closed || this._poll || this._conn) {
        return;
      }
      if (!subs.length) {
        this._setStatus('idle');
        return;
      }
      var generation = ++this._generation;
      var address = this._baseIndex;
      // The stream's own token, not a fresh one: a 401 here says that it was the token that was refused;
      // and the stream's query form, so that a query the server refuses is refused here too.
      this._poll = authorizedAjax(conn.token, $.extend({}, this.options.ajax, {
        url: this.baseUrls[address] + '/subscriptions?topics=' + compactTopics(subs) + '&timeout=0' + extraQuerySuffix(this._extraQuery()),
        type: 'GET',
        dataType: 'json',
        timeout: this.options.requestTimeout
      }));
      this._poll.then(function (data, textStatus, jqXHR) {
        if (generation !== client._generation) {
          return;
        }
        client._poll = null;
        client._skipped.push(conn.kind);
        client._chain++;
        if (jqXHR.status !== 204 && data) {
          client._deliver(data);
        }
        client._connect();
      }, function (jqXHR, textStatus) {
        if (generation !== client._generation) {
          return;
        }
        client._poll = null;
        var error = errorFrom(jqXHR, textStatus, 'poll');
        if (error.status === 401 && typeof client.options.accessToken === 'function' && !client._tokenRetried) {
          // The stream's token was refused: open it again with a fresh one (once in a row).
          client._tokenRetried = true;
          client._connect();
          return;
        }
        client._pollFailed(error, address);
      });
    },

    // An open stream ended without the server saying why (the connection was cut): resume from the cursors.
    _streamLost: function (conn, what) {
      if (!this._joined().length) {
        this._setStatus('idle');
        return;
      }
      this._pollFailed(LaharsubError(what, 0, null, null), conn.address);
    },

    _openSocket: function (conn, subs) {
      var client = this;
      var socket;
      $.each(subs, function (i, sub) { conn.topics[sub.topicId] = { sub: sub, pending: 0 }; });
      try {
        socket = new WebSocket(socketUrl(streamUrl(this.baseUrls[conn.address], subs, conn.token, this._extraQuery())), subprotocol);
      } catch (e) {
        this._conn = null;
        this._streamFailedToOpen(conn);
        return;
      }
      conn.socket = socket;
      // A proxy may also hold the upgrade without answering.
      conn.timer = setTimeout(function () {
        if (client._conn === conn && !conn.established) {
          client._endConn('it did not open in time');
          client._streamFailedToOpen(conn);
        }
      }, this.options.requestTimeout);
      socket.onmessage = function (event) {
        if (client._conn === conn) {
          client._onSocketFrame(conn, event.data);
        }
      };
      socket.onclose = function (event) {
        if (client._conn === conn) {
          client._onSocketClose(conn, event.code, event.reason);
        }
      };
    },

    _onSocketFrame: function (conn, data) {
      var frame;
      try {
        frame = JSON.parse(data);
      } catch (e) {
        return;
      }
      if (!frame || typeof frame !== 'object') {
        return;
      }
      var sub;
      if (frame.type === 'message' && frame.message) {
        sub = this._socketSub(conn, frame.message.topicId);
        if (sub) {
          this._stopStreak = 0;
          this._applyMessage(sub, frame.message);
        }
      } else if (frame.type === 'notice' && frame.notice) {
        sub = this._socketSub(conn, frame.notice.topicId);
        if (sub) {
          this._stopStreak = 0;
          if (frame.notice.type === 'topicDeleted') {
            // The server has left it out already: no unsubscribe frame.
            delete conn.topics[frame.notice.topicId];
          }
          this._applyNotice(sub, frame.notice);
        }
      } else if (frame.type === 'subscribed') {
        this._onSubscribed(conn, frame);
      } else if (frame.type === 'published') {
        var pending = conn.publishes[frame.id];
        if (pending) {
          delete conn.publishes[frame.id];
          clearTimeout(pending.timer);
          pending.deferred.resolve(pending.many ? frame.messages : { topicId: frame.topicId, messageId: frame.messageId, epoch: frame.epoch });
        }
      } else if (frame.type === 'problem') {
        this._onSocketProblem(conn, frame);
      }
    },

    // The subscription a socket's delivery for `topicId` belongs to, or null: not followed any more, or
    // re-positioned by a frame the server has not answered yet (what still arrives is from before).
    _socketSub: function (conn, topicId) {
      var entry = conn.topics[topicId];
      var sub = this._subs[topicId];
      return entry && !entry.pending && sub && entry.sub === sub && sub.joined ? sub : null;
    },

    _onSubscribed: function (conn, frame) {
      var client = this;
      var sent = frame.id != null ? conn.frames[frame.id] : null;
      if (sent) {
        this._settleFrames(conn, sent.n);
      }
      $.each(frame.topics || [], function (i, position) {
        var sub = position && client._socketSub(conn, position.topicId);
        // A cursor given without its epoch belongs to the incarnation the server positioned it in.
        if (sub && sub.epoch == null) {
          sub.epoch = epochOf(position);
        }
      });
      if (!conn.established) {
        conn.established = true;
        clearTimeout(conn.timer);
        this._established('websocket');
        // Subscriptions changed while the socket opened.
        this._syncSocket(conn);
        if (!this._joined().length) {
          this._setStatus('idle');
        }
      }
    },

    // The server applies a socket's frames in order and answers `subscribed` with the last one's id:
    // the frames up to it are applied, and what arrives from now on follows the new positions.
    _settleFrames: function (conn, n) {
      $.each(conn.topics, function (topicId, entry) {
        if (entry.pending && entry.pending <= n) {
          entry.pending = 0;
        }
      });
      $.each(conn.frames, function (id, sent) {
        if (sent.n <= n) {
          delete conn.frames[id];
        }
      });
    },

    _onSocketProblem: function (conn, frame) {
      var problem = frame.problem && typeof frame.problem === 'object' ? frame.problem : {};
      var pending = frame.id != null ? conn.publishes[frame.id] : null;
      if (pending) {
        delete conn.publishes[frame.id];
        this._publishFailed(pending, problemError(pending.what, problem));
        return;
      }
      var sent = frame.id != null ? conn.frames[frame.id] : null;
      var topicId = isId(problem.topicId) ? problem.topicId : null;
      if (problem.status === 404 && topicId != null) {
        // A topic that does not exist, found when the server started the socket or applied the frames
        // up to this one: those frames are applied without it.
        if (sent) {
          this._settleFrames(conn, sent.n);
        }
        this._socketRefused(conn, topicId, null, problem);
        return;
      }
      if (sent && sent.kind === 'subscribe') {
        // This frame alone was refused (403: the token may not subscribe; 400): nothing changed.
        delete conn.frames[frame.id];
        this._socketRefused(conn, sent.topicId, sent.n, problem);
        return;
      }
      report(this.options.onError, this, [problemError('changing the subscriptions', problem)]);
    },

    // Ends the subscription the server refused on the socket, and tells its owner.
    _socketRefused: function (conn, topicId, frameNumber, problem) {
      var entry = conn.topics[topicId];
      if (entry && (frameNumber == null || entry.pending === frameNumber)) {
        delete conn.topics[topicId];
      }
      var sub = this._subs[topicId];
      if (!sub || !entry || entry.sub !== sub) {
        return;
      }
      var error = problemError('subscribe to topic ' + topicId, problem);
      this._drop(sub);
      report(sub.options.onError, sub.handle, [error, sub.handle]);
      report(this.options.onError, this, [error]);
    },

    _onSocketClose: function (conn, code, reason) {
      this._conn = null;
      clearTimeout(conn.timer);
      var said = ' (WebSocket close code ' + code + (reason ? ': ' + reason : '') + ')';
      this._failPublishes(conn, 'the WebSocket closed' + said + ' before the publish was answered: it may have been stored.');
      if (code === 4001) {
        // The token expired: a fresh one, then the socket again (a second refusal in a row ends the
        // subscriptions, as a poll's second 401 does).
        if (typeof this.options.accessToken === 'function' && !this._tokenRetried) {
          this._tokenRetried = true;
          this._connect();
        } else {
          this._pollFailed(LaharsubError('subscription failed: the access token expired' + said + '.', 401, null, null), conn.address);
        }
        return;
      }
      if (code === 4000) {
        // The server could not read a frame of this client's: say so, and carry on on a new socket.
        var refused = LaharsubError('the server closed the WebSocket, refusing a frame of this client' + said + '.', 0, null, null);
        report(this.options.onError, this, [refused]);
        this._retryLater(backoffDelay(this._attempt++, this.options, Math.random()), refused);
        return;
      }
      if (code === 1001) {
        this._serverStopping(LaharsubError('the server is stopping' + said + '.', 0, null, null), conn.address);
        return;
      }
      if (code === 4008 || code === 4002) {
        // This page read too slowly, or its access is to be decided again: the same server, a new socket, from the cursors.
        this._retryLater(0, LaharsubError('the server closed the WebSocket for reading too slowly' + said + '.', 0, null, null));
        return;
      }
      if (conn.established) {
        this._streamLost(conn, 'the WebSocket was cut' + said + '.');
      } else {
        this._streamFailedToOpen(conn);
      }
    },

    // Brings an open socket's topics in line with the subscriptions: a subscribe frame for each new (or
    // re-subscribed) topic, one unsubscribe frame for those that left.
    _syncSocket: function (conn) {
      var client = this;
      var wanted = {};
      var gone = [];
      if (conn.socket.readyState !== 1) {
        return;
      }
      $.each(this._joined(), function (i, sub) {
        wanted[sub.topicId] = true;
        var entry = conn.topics[sub.topicId];
        if (!entry || entry.sub !== sub) {
          var id = client._sendFrame(conn, { type: 'subscribe', topics: compactTopics([sub]) }, sub.topicId);
          conn.topics[sub.topicId] = { sub: sub, pending: conn.frames[id].n };
        }
      });
      $.each(conn.topics, function (topicId) {
        if (!wanted[topicId]) {
          gone.push(Number(topicId));
        }
      });
      if (gone.length) {
        $.each(gone, function (i, topicId) { delete conn.topics[topicId]; });
        this._sendFrame(conn, { type: 'unsubscribe', topics: gone.join(',') }, null);
      }
    },

    // Sends a subscribe or unsubscribe frame with the next id; returns the id.
    _sendFrame: function (conn, frame, topicId) {
      var n = ++conn.frameCount;
      frame.id = 'c' + n;
      conn.frames[frame.id] = { n: n, kind: frame.type, topicId: topicId };
      conn.socket.send(JSON.stringify(frame));
      return frame.id;
    },

    // A publish frame, answered `published` or `problem`. When the server did not store it (the frame could not
    // be sent, or a 503 of a stopping instance), and when its outcome is unknown and it has a key, `overRest`
    // publishes it over REST instead: with the same key the server stores it once.
    _publishOnSocket: function (conn, what, frame, keyed, many, overRest) {
      var client = this;
      var result = $.Deferred();
      var n = ++conn.frameCount;
      var pending = { deferred: result, what: what, timer: null, many: many, keyed: keyed, overRest: overRest };
      frame.id = 'c' + n;
      conn.publishes[frame.id] = pending;
      pending.timer = setTimeout(function () {
        if (conn.publishes[frame.id] === pending) {
          delete conn.publishes[frame.id];
          client._publishFailed(pending, LaharsubError(pending.what + ' failed: no answer in time on the WebSocket (it may have been stored).', 0, null, null), true);
        }
      }, this.options.requestTimeout);
      try {
        conn.socket.send(JSON.stringify(frame));
      } catch (e) {
        delete conn.publishes[frame.id];
        clearTimeout(pending.timer);
        // Not sent, so not stored: REST publishes it.
        overRest().then(result.resolve, result.reject);
      }
      return result.promise();
    },

    // `unknown`: the publish may or may not have been stored; a keyed one is then sent again over REST.
    _publishFailed: function (pending, error, unknown) {
      clearTimeout(pending.timer);
      if ((unknown && pending.keyed) || error.status === 503) {
        pending.overRest().then(pending.deferred.resolve, pending.deferred.reject);
        return;
      }
      report(this.options.onError, this, [error]);
      pending.deferred.reject(error);
    },

    _failPublishes: function (conn, why) {
      var client = this;
      var pending = conn.publishes;
      conn.publishes = {};
      $.each(pending, function (id, each) {
        client._publishFailed(each, LaharsubError(each.what + ' failed: ' + why, 0, null, null), true);
      });
    },

    _openEventSource: function (conn, subs) {
      var client = this;
      var source;
      try {
        source = new EventSource(streamUrl(this.baseUrls[conn.address], subs, conn.token, this._extraQuery()));
      } catch (e) {
        this._conn = null;
        this._streamFailedToOpen(conn);
        return;
      }
      conn.source = source;
      // The server writes `subscribed` at once; a stream that says nothing for this long is held back by a
      // buffering proxy, which would deliver nothing until the stream ends.
      conn.timer = setTimeout(function () {
        if (client._conn === conn && !conn.established) {
          client._endConn('it did not open in time');
          client._streamFailedToOpen(conn);
        }
      }, this.options.sseOpenTimeout);
      var on = function (type, handler) {
        source.addEventListener(type, function (event) {
          // Events of an older stream of this client, or without data, say nothing.
          if (client._conn !== conn || typeof event.data !== 'string') {
            return;
          }
          var data;
          try {
            data = JSON.parse(event.data);
          } catch (e) {
            return;
          }
          if (data && typeof data === 'object') {
            handler(data);
          }
        });
      };
      on('subscribed', function (data) {
        $.each(data.topics || [], function (i, position) {
          var sub = position && client._sseSub(conn, position.topicId);
          if (sub && sub.epoch == null) {
            sub.epoch = epochOf(position);
          }
        });
        conn.established = true;
        clearTimeout(conn.timer);
        client._established('sse');
      });
      on('message', function (message) {
        var sub = client._sseSub(conn, message.topicId);
        if (sub) {
          client._stopStreak = 0;
          client._applyMessage(sub, message);
        }
      });
      on('notice', function (notice) {
        var sub = client._sseSub(conn, notice.topicId);
        if (sub) {
          client._stopStreak = 0;
          if (notice.type === 'topicDeleted') {
            // The stream goes on without it: no need to open it again for that.
            conn.deleted[notice.topicId] = true;
          }
          client._applyNotice(sub, notice);
        }
      });
      on('reconnect', function (data) {
        client._endConn('the server ended the stream');
        var why = 'the server ended the event stream (' + String(data.reason) + (data.detail ? ': ' + data.detail : '') + ')';
        if (data.reason === 'tokenExpired' || data.reason === 'redecide') {
          // A stream is opened again, with a fresh token (the accessToken function is asked for one), or to be
          // decided again (Host and Backend modes).
          client._connect();
        } else {
          client._serverStopping(LaharsubError(why, 0, null, null), conn.address);
        }
      });
      source.onerror = function () {
        if (client._conn !== conn) {
          return;
        }
        // Not left to the EventSource's own reconnection: the client resumes from its cursors, at
        // another instance when the one in use is gone, with its backoff and a fresh token.
        client._endConn('the stream failed');
        if (conn.established) {
          client._streamLost(conn, 'the event stream was cut.');
        } else {
          client._streamFailedToOpen(conn);
        }
      };
    },

    _sseSub: function (conn, topicId) {
      var sub = this._subs[topicId];
      return sub && conn.subs[topicId] === sub && sub.joined ? sub : null;
    },

    // Whether the open event stream carries exactly the subscriptions `joined` (topics it had that the
    // server deleted aside).
    _sseCovers: function (conn, joined) {
      var covers = true;
      var count = 0;
      $.each(joined, function (i, sub) {
        if (conn.subs[sub.topicId] !== sub) {
          covers = false;
        }
      });
      $.each(conn.subs, function (topicId, sub) {
        if (sub.active) {
          count++;
        } else if (!conn.deleted[topicId]) {
          covers = false;
        }
      });
      return covers && count === joined.length;
    },

    // Applies one poll answer: notices first, then messages, following the protocol's cursor rule.
    _deliver: function (data) {
      var client = this;
      // A callback that subscribes or unsubscribes changes the set: the rest of this answer is then
      // left for the next poll, which asks with the cursors as they stand.
      var generation = client._generation;
      $.each(data.notices || [], function (i, notice) {
        if (client._generation !== generation) {
          return false;
        }
        var sub = client._subs[notice.topicId];
        if (sub && sub.joined) {
          client._applyNotice(sub, notice);
        }
      });
      $.each(data.messages || [], function (i, message) {
        if (client._generation !== generation) {
          return false;
        }
        var sub = client._subs[message.topicId];
        if (sub && sub.joined) {
          client._applyMessage(sub, message);
        }
      });
    },

    /** The conflation and presence identity the client asks for, as query parameters (none when off). */
    _extraQuery: function () {
      var query = {};
      if (this.options.clientId != null) {
        query.client = this.options.clientId;
      }
      if (this.options.member != null) {
        query.member = JSON.stringify(this.options.member);
      }
      if (this.options.conflate > 0) {
        query.conflate = this.options.conflate;
      }
      if (this._latestPending) {
        query.latest = true;
      }
      return query;
    },

    _applyNotice: function (sub, notice) {
      this._latestPending = false;
      // Every notice names the topic's incarnation: a subscription without an epoch learns it here.
      var epoch = epochOf(notice);
      if (notice.type === 'gap') {
        sub.cursor = Math.max(sub.cursor || 0, notice.toMessageId + 1);
        sub.epoch = epoch || sub.epoch;
        report(sub.options.onGap, sub.handle, [notice, sub.handle]);
      } else if (notice.type === 'conflated') {
        // Skipped by the client's choice (conflate, latest), unlike a gap: a separate callback.
        sub.cursor = Math.max(sub.cursor || 0, notice.toMessageId + 1);
        sub.epoch = epoch || sub.epoch;
        report(sub.options.onConflated, sub.handle, [notice, sub.handle]);
      } else if (notice.type === 'reset') {
        sub.cursor = notice.firstMessageId;
        sub.epoch = epoch || sub.epoch;
        var reset = $.extend({}, notice, { epochChanged: notice.reason === 'epochChanged' });
        report(sub.options.onReset || sub.options.onGap, sub.handle, [reset, sub.handle]);
      } else if (notice.type === 'topicDeleted') {
        this._drop(sub);
        report(sub.options.onTopicDeleted, sub.handle, [notice, sub.handle]);
      }
    },

    _applyMessage: function (sub, message) {
      this._latestPending = false;
      // A message below the cursor was delivered before: by an answer that raced an abort, or again
      // by a stream resumed after a reconnect. Each (topic, message id) reaches the page once.
      if (sub.cursor != null && message.messageId < sub.cursor) {
        return;
      }
      sub.cursor = message.messageId + 1;
      sub.epoch = epochOf(message) || sub.epoch;
      report(sub.options.onMessage, sub.handle, [decodeMessage(message), sub.handle]);
    }
  };

  /**
   * The presence event a message of a companion topic carries, { type: 'join' | 'leave', member, data,
   * occupancy }, or null when the message is not one.
   */
  function presenceEvent(message) {
    var event = message && message.data;
    if (!$.isPlainObject(event) || (event.type !== 'join' && event.type !== 'leave')
      || typeof event.member !== 'string' || typeof event.occupancy !== 'number') {
      return null;
    }
    return { type: event.type, member: event.member, data: $.isPlainObject(event.data) ? event.data : null, occupancy: event.occupancy };
  }

  /** Every page of a topic's member list, as an object member id -> data. */
  function readAllPresence(client, topicId) {
    var members = {};
    function page(after) {
      return client.getPresence(topicId, after == null ? { limit: 1000 } : { after: after, limit: 1000 }).then(function (answer) {
        $.each(answer.members || [], function (i, entry) {
          members[entry.member] = entry.data;
        });
        return answer.next != null && answer.next !== after ? page(answer.next) : members;
      });
    }
    return page(null);
  }

  function watchPresence(client, topicId, callbacks) {
    checkCallback(callbacks, 'onChange');
    checkCallback(callbacks, 'onError');
    var ready = $.Deferred();
    var members = {};
    var stopped = false;
    var subscription = null;
    // Events that come while the list is read are applied after it: one already in the list changes nothing.
    var pending = null;
    function apply(event) {
      if (event.type === 'join') {
        members[event.member] = event.data;
      } else {
        delete members[event.member];
      }
      report(callbacks.onChange, handle, [members, event]);
    }
    function failed(error) {
      ready.reject(error);
      report(callbacks.onError, handle, [error]);
    }
    function reload() {
      pending = [];
      readAllPresence(client, topicId).then(function (list) {
        if (stopped) {
          return;
        }
        members = list;
        var events = pending;
        pending = null;
        report(callbacks.onChange, handle, [members, null]);
        $.each(events, function (i, event) { apply(event); });
        ready.resolve(handle);
      }, failed);
    }
    var handle = {
      topicId: topicId,
      ready: ready.promise(),
      members: function () { return members; },
      occupancy: function () { return Object.keys(members).length; },
      stop: function () {
        stopped = true;
        if (subscription) {
          subscription.unsubscribe();
        }
      }
    };
    client.getTopic(topicId).then(function (info) {
      if (stopped) {
        return;
      }
      if (!info.presenceTopicId) {
        failed(new Error('$.laharsub: topic ' + topicId + ' has no presence: create it with createTopic({ presence: true }).'));
        return;
      }
      // Subscribed first and read second, so that no change falls between the list and the events.
      subscription = client.subscribe(info.presenceTopicId, {
        onMessage: function (message) {
          var event = presenceEvent(message);
          if (event && !stopped) {
            if (pending) {
              pending.push(event);
            } else {
              apply(event);
            }
          }
        },
        onGap: function () { reload(); },
        onReset: function () { reload(); },
        onTopicDeleted: function () {
          members = {};
          report(callbacks.onChange, handle, [members, null]);
        },
        onError: function (error) { report(callbacks.onError, handle, [error]); }
      });
      subscription.ready.then(reload, failed);
    }, failed);
    return handle;
  }

  /** Creates a client for the Laharsub API at `baseUrl` (e.g. "/ps"), or at several instances' roots (an array). */
  $.laharsub = function (baseUrl, options) {
    return new Client(baseUrl, options);
  };
  $.laharsub.defaults = defaults;
  $.laharsub.Client = Client;
  $.laharsub.presenceEvent = presenceEvent;
  // Pure helpers, exposed for the client's unit tests; not a stable API.
  $.laharsub._internal = {
    backoffDelay: backoffDelay,
    parseRetryAfter: parseRetryAfter,
    pollQuery: pollQuery,
    compactTopics: compactTopics,
    streamUrl: streamUrl,
    socketUrl: socketUrl,
    publishFrame: publishFrame,
    normalizeBaseUrls: normalizeBaseUrls,
    decodeMessage: decodeMessage,
    publishBody: publishBody,
    validateOptions: validateOptions
  };
  return $.laharsub;
}));
