/*!
 * jquery.laharsub.js — jQuery client for Laharsub, HTTP pub/sub with one multiplexed long poll.
 * Works with jQuery 3.7 and jQuery 4; no other dependency. Wire protocol: docs/protocol.md.
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
    // Extra $.ajax settings for every request (e.g. headers); never used for url, type, data or callbacks.
    ajax: null,
    // Bearer token for a server in Jwt mode: a string, or a function returning a string or a promise of
    // one. A function is called before every request, and once more after a 401 (an expired token).
    accessToken: null,
    // Client-wide callbacks: onError(error) for failures no subscription owns; onStatus(status, info)
    // with status 'connecting' | 'connected' | 'retrying' | 'idle' | 'closed'.
    onError: null,
    onStatus: null
  };

  var subscriptionDefaults = {
    from: null,
    // The topic's epoch that `from` belongs to (from getTopic, createTopic, or handle.epoch() saved
    // with the cursor), so that a topic re-created meanwhile is reported instead of read as the old one.
    epoch: null,
    onMessage: null,
    onGap: null,
    // Resets go to onReset when it is given, otherwise to onGap as before (notice.type === 'reset').
    onReset: null,
    onTopicDeleted: null,
    onError: null
  };

  var jsonType = /^application\/(?:[\w.+-]*\+)?json\b/i;
  // The protocol's epochs: opaque tokens of 1 to 32 characters from [0-9A-Za-z_-].
  var epochPattern = /^[0-9A-Za-z_-]{1,32}$/;

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
    if (settings.ajax != null && !$.isPlainObject(settings.ajax)) {
      fail('option ajax must be a plain object of $.ajax settings.');
    }
    checkCallback(settings, 'onError');
    checkCallback(settings, 'onStatus');
    if (settings.accessToken != null && typeof settings.accessToken !== 'string' && typeof settings.accessToken !== 'function') {
      fail('option accessToken must be a token string or a function returning one (or a promise of one).');
    }
    return settings;
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
  function pollQuery(subscriptions, timeout) {
    return $.param({
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
    });
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
    var reason;
    if (problem && (problem.detail || problem.title)) {
      reason = problem.detail || problem.title;
      if (problem.errors) {
        reason += ' ' + $.map(problem.errors, function (messages, key) {
          return key + ': ' + [].concat(messages).join(' ');
        }).join('; ');
      }
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
    this._subs = {};
    this._order = [];
    this._poll = null;
    this._generation = 0;
    this._retryTimer = null;
    this._kickTimer = null;
    this._attempt = 0;
    this._earlyEmptyPolls = 0;
    this._status = 'idle';
    this._closed = false;
  }

  Client.prototype = {
    constructor: Client,

    /** Creates a topic; resolves with { topicId, epoch }. */
    createTopic: function () {
      return this._request('POST', '/topics', 'create topic');
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
     * Not retried automatically: a retried publish whose first try did arrive would be stored twice.
     */
    publish: function (topicId, data, contentType) {
      var id = toId(topicId, 'topicId');
      var body = publishBody(data, contentType);
      return this._request('POST', '/topics/' + id, 'publish to topic ' + id, {
        data: body.body,
        contentType: body.contentType,
        processData: false
      });
    },

    /**
     * Subscribes to a topic from `from` (absent: the next message published), in the incarnation
     * `epoch` when given. Returns a handle with unsubscribe(), cursor(), epoch() and `ready`, a promise
     * resolved once the subscription is in the poll.
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
        // Fix the cursor before joining: re-issuing the poll later without `from` would restart at
        // the topic's end again and lose what was published in between.
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

    /** Ends every subscription and the poll; the client cannot be used afterwards. */
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

    // Replaces the waiting poll with one for the current set, once per burst of subscribe/unsubscribe
    // calls (they often come several in a row), so at most one poll is ever outstanding.
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
        client._stopPoll();
        client._startPoll();
      }, 0);
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

    _startPoll: function () {
      var client = this;
      var subs = this._joined();
      if (this._closed || this._poll) {
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
      var timeout = this._status === 'connected' ? this.options.pollTimeout : 0;
      var started = Date.now();
      if (this._status !== 'connected' && this._status !== 'retrying') {
        this._setStatus('connecting');
      }
      this._poll = authorizedAjax(this.options.accessToken, $.extend({}, this.options.ajax, {
        url: this.baseUrls[address] + '/subscriptions?' + pollQuery(subs, timeout),
        type: 'GET',
        dataType: 'json',
        timeout: (timeout + this.options.pollTimeoutMargin) * 1000
      }));
      this._poll.then(function (data, textStatus, jqXHR) {
        if (generation !== client._generation) {
          return;
        }
        client._poll = null;
        client._attempt = 0;
        client._setStatus('connected');
        if (jqXHR.status === 204 || !data) {
          client._afterEmptyPoll(Date.now() - started, timeout);
          return;
        }
        client._earlyEmptyPolls = 0;
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

    _pollFailed: function (error, address) {
      var client = this;
      if (isRetryable(error.status)) {
        var failures = ++this._attempt;
        var count = this.baseUrls.length;
        var delay;
        if (isUnavailable(error.status)) {
          this._failOver(address);
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

    _retryLater: function (delay, error) {
      var client = this;
      this._setStatus('retrying', { delay: delay, error: error, baseUrl: this.baseUrl });
      this._retryTimer = setTimeout(function () {
        client._retryTimer = null;
        client._startPoll();
      }, delay);
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
        if (!sub || !sub.joined) {
          return;
        }
        // Every notice names the topic's incarnation: a subscription without an epoch learns it here.
        var epoch = epochOf(notice);
        if (notice.type === 'gap') {
          sub.cursor = Math.max(sub.cursor || 0, notice.toMessageId + 1);
          sub.epoch = epoch || sub.epoch;
          report(sub.options.onGap, sub.handle, [notice, sub.handle]);
        } else if (notice.type === 'reset') {
          sub.cursor = notice.firstMessageId;
          sub.epoch = epoch || sub.epoch;
          var reset = $.extend({}, notice, { epochChanged: notice.reason === 'epochChanged' });
          report(sub.options.onReset || sub.options.onGap, sub.handle, [reset, sub.handle]);
        } else if (notice.type === 'topicDeleted') {
          client._drop(sub);
          report(sub.options.onTopicDeleted, sub.handle, [notice, sub.handle]);
        }
      });
      $.each(data.messages || [], function (i, message) {
        if (client._generation !== generation) {
          return false;
        }
        var sub = client._subs[message.topicId];
        // A message below the cursor was delivered by an earlier answer (e.g. one that raced an abort).
        if (!sub || !sub.joined || (sub.cursor != null && message.messageId < sub.cursor)) {
          return;
        }
        sub.cursor = message.messageId + 1;
        sub.epoch = epochOf(message) || sub.epoch;
        report(sub.options.onMessage, sub.handle, [decodeMessage(message), sub.handle]);
      });
    }
  };

  /** Creates a client for the Laharsub API at `baseUrl` (e.g. "/ps"), or at several instances' roots (an array). */
  $.laharsub = function (baseUrl, options) {
    return new Client(baseUrl, options);
  };
  $.laharsub.defaults = defaults;
  $.laharsub.Client = Client;
  // Pure helpers, exposed for the client's unit tests; not a stable API.
  $.laharsub._internal = {
    backoffDelay: backoffDelay,
    parseRetryAfter: parseRetryAfter,
    pollQuery: pollQuery,
    normalizeBaseUrls: normalizeBaseUrls,
    decodeMessage: decodeMessage,
    publishBody: publishBody,
    validateOptions: validateOptions
  };
  return $.laharsub;
}));
