// The jQuery plugin's source: $.laharsub over the laharsub module (src/Clients/JavaScript), which holds
// the whole protocol. This file only turns the module's promises into jQuery Deferreds, its items into
// the plugin's callbacks, and the plugin's options into the module's. build.mjs bundles both into
// ../jquery.laharsub.js, the one script a page loads after jQuery.
import { LaharsubClient, presenceEvent, validateOptions, watchPresence } from '../../JavaScript/laharsub.js';

// The module's defaults for the options the plugin has always had, and `ajax`, whose `headers` is all that
// is taken (the module sends its requests with fetch, not $.ajax).
const moduleDefaults = validateOptions();
const defaults = {};
for (const name of ['pollTimeout', 'pollTimeoutMargin', 'requestTimeout', 'retryDelay', 'maxRetryDelay', 'retryJitter',
  'idempotentPublishes', 'publishAttempts', 'ajax', 'accessToken', 'transports', 'sseOpenTimeout', 'conflate', 'latest',
  'clientId', 'member', 'onError', 'onStatus', 'onTransport']) {
  defaults[name] = name === 'ajax' ? null : moduleDefaults[name];
}

const subscriptionDefaults = {
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

function fail(message) {
  throw new Error('$.laharsub: ' + message);
}

// The module's argument errors, said as the plugin's (the same message under the plugin's name).
function guard(call) {
  try {
    return call();
  } catch (error) {
    if (error instanceof TypeError && /^laharsub: /.test(error.message)) {
      fail(error.message.slice('laharsub: '.length));
    }
    throw error;
  }
}

function checkKnown(options, known, what) {
  for (const name of Object.keys(options)) {
    if (!Object.prototype.hasOwnProperty.call(known, name)) {
      fail(`unknown ${what} option "${name}" (known: ${Object.keys(known).join(', ')}).`);
    }
  }
}

function checkCallbacks(settings, names) {
  for (const name of names) {
    if (settings[name] != null && typeof settings[name] !== 'function') {
      fail(`option ${name} must be a function.`);
    }
  }
}

export function install($) {
  if (!$ || typeof $.Deferred !== 'function' || typeof $.extend !== 'function') {
    throw new Error('jquery.laharsub.js needs jQuery (3.7 or 4): load jquery.js before it.');
  }

  // A jQuery promise of a native one, so that pages keep .done/.fail/.always.
  function deferred(promise) {
    const result = $.Deferred();
    promise.then(result.resolve, result.reject);
    return result.promise();
  }

  // The module's options for the plugin's (checked by the module, which says what is wrong).
  function coreOptions(settings, client) {
    const ajax = settings.ajax;
    if (ajax != null && (!$.isPlainObject(ajax) || Object.keys(ajax).some((name) => name !== 'headers'))) {
      fail('option ajax takes { headers } only: the client sends its requests with fetch (the laharsub module), not $.ajax.');
    }
    const options = {};
    for (const name of Object.keys(defaults)) {
      if (!/^(ajax|on[A-Z]\w*)$/.test(name)) {
        options[name] = settings[name];
      }
    }
    options.headers = ajax && ajax.headers ? $.extend({}, ajax.headers) : null;
    // The plugin's callbacks are called with the client as `this`, as they always were.
    for (const name of ['onError', 'onStatus', 'onTransport']) {
      const callback = settings[name];
      options[name] = callback ? (...args) => callback.apply(client, args) : null;
    }
    return options;
  }

  function Client(baseUrl, options) {
    checkKnown(options || {}, defaults, 'client');
    const settings = $.extend({}, defaults, options);
    checkCallbacks(settings, ['onError', 'onStatus', 'onTransport']);
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
      if (typeof settings.limit === 'number' && settings.limit > 1000) {
        fail(`limit is 1 to 1000 (got ${settings.limit}).`);
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
      const settings = $.extend({}, options, { contentType: contentType == null ? undefined : contentType });
      return deferred(guard(() => this._core.publish(topicId, data, settings)));
    },

    /** Options: idempotencyKey, epochs (topic id -> the epoch it must have). */
    publishMany(topicIds, data, contentType, options) {
      const settings = $.extend({}, options, { contentType: contentType == null ? undefined : contentType });
      return deferred(guard(() => this._core.publishMany(topicIds, data, settings)));
    },

    /**
     * Subscribes to a topic from `from` (absent: the next message published), in the incarnation `epoch`
     * when given. Returns a handle with unsubscribe(), cursor(), epoch(), active() and `ready`.
     */
    subscribe(topicId, options) {
      if (options != null && !$.isPlainObject(options)) {
        fail('subscribe options must be an object like { from: 1, onMessage: function (message) {} }.');
      }
      checkKnown(options || {}, subscriptionDefaults, 'subscribe');
      const settings = $.extend({}, subscriptionDefaults, options);
      checkCallbacks(settings, ['onMessage', 'onGap', 'onConflated', 'onReset', 'onTopicDeleted', 'onError']);
      return this._follow(topicId, settings, (item, handle) => {
        const callback = {
          message: settings.onMessage,
          gap: settings.onGap,
          conflated: settings.onConflated,
          reset: settings.onReset || settings.onGap,
          topicDeleted: settings.onTopicDeleted
        }[item.type];
        if (item.type === 'error') {
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
      checkKnown(settings, { onState: null, onError: null }, 'subscribeState');
      checkCallbacks(settings, ['onState', 'onError']);
      const handle = {};
      const state = guard(() => this._core.subscribeState(topicId, {
        onState: (document, info) => settings.onState?.call(handle, document, info, handle),
        onItem: (item) => {
          if (item.type === 'error') {
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
      checkCallbacks(settings, ['onChange', 'onError']);
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

  $.laharsub = function (baseUrl, options) {
    return new Client(baseUrl, options);
  };
  $.laharsub.defaults = defaults;
  $.laharsub.Client = Client;
  $.laharsub.presenceEvent = presenceEvent;
  return $.laharsub;
}
