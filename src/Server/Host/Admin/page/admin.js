// The Laharsub admin page: reads /admin/stats every few seconds and the topic list from the API.
// Plain browser JavaScript, no build step and nothing loaded from elsewhere. In Jwt mode it sends a
// token (opened with ?token=..., or pasted into the form it shows when the server asks for one).
(function () {
  'use strict';

  var api = '../ps';
  var refreshMs = 2000;
  var pageSize = 50;
  var afterStack = [0];
  var nextAfter = null;
  var labelFilter = null;
  var refusals = {};
  var tokenKey = 'laharsub-admin-token';
  var token = takeToken();
  var $ = function (id) { return document.getElementById(id); };

  /** The token from ?token= (kept for this tab, and taken out of the address bar and history) or from earlier in this tab. */
  function takeToken() {
    var params = new URLSearchParams(location.search);
    var given = params.get('token');
    if (given) {
      sessionStorage.setItem(tokenKey, given);
      params.delete('token');
      var query = params.toString();
      history.replaceState(null, '', location.pathname + (query ? '?' + query : '') + location.hash);
      return given;
    }
    return sessionStorage.getItem(tokenKey) || '';
  }

  function number(value) { return value === null || value === undefined ? '–' : Number(value).toLocaleString('en-US'); }
  function rate(value) { return value >= 100 ? Math.round(value).toLocaleString('en-US') : value.toFixed(value >= 10 ? 1 : 2); }
  function bytes(value) {
    if (value === null || value === undefined) { return '–'; }
    var units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    var i = 0;
    while (value >= 1024 && i < units.length - 1) { value /= 1024; i++; }
    return (i === 0 ? value : value.toFixed(1)) + ' ' + units[i];
  }
  function getJson(url) {
    var source = url === 'stats' ? 'stats' : 'topics';
    var headers = { Accept: 'application/json' };
    if (token) { headers.Authorization = 'Bearer ' + token; }
    return fetch(url, { headers: headers, cache: 'no-store' }).then(function (response) {
      if (response.status === 401 || response.status === 403) {
        return response.json().catch(function () { return {}; }).then(function (problem) {
          showRefusal(source, problem.detail || problem.title || 'This server needs a token.');
          throw new Error(url + ' answered ' + response.status);
        });
      }
      showRefusal(source, null);
      if (response.status === 404) { return null; }
      if (!response.ok) {
        return response.text().then(function (text) { throw new Error(url + ' answered ' + response.status + ' ' + text); });
      }
      return response.json();
    });
  }

  /**
   * Shows the token form while the stats or the topic list is refused (Jwt mode: no token, or one without
   * the admin or the list permission), with the server's reasons; hides it once neither is.
   */
  function showRefusal(source, reason) {
    if (reason) { refusals[source] = reason; } else { delete refusals[source]; }
    var reasons = Object.keys(refusals).map(function (key) { return refusals[key]; });
    $('login').hidden = reasons.length === 0;
    $('login-note').textContent = reasons.join(' ');
  }

  function showStats(stats) {
    $('topics').textContent = number(stats.topics);
    $('topics-limit').textContent = 'of ' + number(stats.maxTopics) + ' (Laharsub:MaxTopics)';
    $('waiting-polls').textContent = number(stats.waitingPolls);
    $('publish-rate').textContent = rate(stats.publishesPerSecond);
    $('delivery-rate').textContent = rate(stats.deliveriesPerSecond);
    $('published-total').textContent = number(stats.messagesPublished) + ' published';
    $('delivered-total').textContent = number(stats.messagesDelivered) + ' delivered';
    $('retained').textContent = bytes(stats.retainedBytes);
    var share = stats.retainedBytes === null ? 0 : Math.min(100, 100 * stats.retainedBytes / stats.maxRetainedBytes);
    $('retained-bar').style.width = share + '%';
    $('retained-meter').setAttribute('aria-valuenow', share.toFixed(1));
    $('retained-meter').className = 'meter' + (share >= 90 ? ' bad' : share >= 70 ? ' warn' : '');
    $('retained-limit').textContent = share.toFixed(share < 1 ? 2 : 0) + ' % of ' + bytes(stats.maxRetainedBytes) + ' (Laharsub:MaxRetainedBytes)';
    $('started').textContent = 'Store: ' + stats.store + '; instance up since ' + new Date(stats.startedAt).toLocaleString() + '.';
    var status = $('status');
    status.textContent = stats.storeReachable ? 'live' : 'store unreachable';
    status.className = 'status ' + (stats.storeReachable ? 'ok' : 'bad');
    drawChart(stats.history, stats.sampleIntervalSeconds);
  }

  function drawChart(history, intervalSeconds) {
    var canvas = $('chart');
    var ratio = window.devicePixelRatio || 1;
    var width = canvas.clientWidth;
    var height = canvas.clientHeight;
    canvas.width = width * ratio;
    canvas.height = height * ratio;
    var g = canvas.getContext('2d');
    g.scale(ratio, ratio);
    g.clearRect(0, 0, width, height);
    var left = 44;
    var bottom = height - 20;
    var slots = 60;
    var max = 1;
    history.forEach(function (s) { max = Math.max(max, s.publishesPerSecond, s.deliveriesPerSecond); });
    max = niceCeiling(max);
    g.font = '11px system-ui, sans-serif';
    g.fillStyle = '#6b7385';
    g.strokeStyle = '#e6e8ee';
    for (var i = 0; i <= 4; i++) {
      var y = 8 + (bottom - 8) * i / 4;
      g.beginPath(); g.moveTo(left, y); g.lineTo(width, y); g.stroke();
      g.fillText(rate(max * (4 - i) / 4), 4, y + 4);
    }
    var minutes = Math.round(slots * intervalSeconds / 60);
    g.fillText(minutes + ' min ago', left, height - 4);
    g.fillText('now', width - 24, height - 4);
    function line(key, color) {
      g.strokeStyle = color;
      g.lineWidth = 2;
      g.beginPath();
      history.forEach(function (s, index) {
        var x = left + (width - left) * (slots - history.length + index) / (slots - 1);
        var y = bottom - (bottom - 8) * s[key] / max;
        if (index === 0) { g.moveTo(x, y); } else { g.lineTo(x, y); }
      });
      g.stroke();
    }
    line('publishesPerSecond', '#ff6a2b');
    line('deliveriesPerSecond', '#2f6fde');
  }

  function niceCeiling(value) {
    var power = Math.pow(10, Math.floor(Math.log10(value)));
    var steps = [1, 2, 5, 10];
    for (var i = 0; i < steps.length; i++) {
      if (value <= steps[i] * power) { return steps[i] * power; }
    }
    return 10 * power;
  }

  function showTopics(topics, note) {
    var rows = $('topic-rows');
    rows.textContent = '';
    topics.forEach(function (t) {
      var row = document.createElement('tr');
      row.setAttribute('data-topic', t.topicId);
      [t.topicId, t.label || '', t.epoch, new Date(t.createdAt).toLocaleString(), t.lastMessageId, number(t.retainedMessages), bytes(t.retainedBytes), number(t.waitingPolls || 0)]
        .forEach(function (value, index) {
          var cell = document.createElement('td');
          cell.className = ['id', 'topic-label', 'epoch', 'created', 'last', 'messages', 'body-bytes', 'polls'][index];
          cell.textContent = value;
          row.appendChild(cell);
        });
      rows.appendChild(row);
    });
    $('topic-note').textContent = note;
  }

  function loadPage(after) {
    var query = '?after=' + after + '&limit=' + pageSize + (labelFilter ? '&label=' + encodeURIComponent(labelFilter) : '');
    return getJson(api + '/topics' + query).then(function (page) {
      nextAfter = page.next ? page.topics[page.topics.length - 1].topicId : null;
      $('next-page').disabled = nextAfter === null;
      var none = labelFilter ? 'No topic has a label matching ' + labelFilter + '.' : 'No topics yet.';
      var shown = (labelFilter ? 'Labels matching ' + labelFilter + ': topics ' : 'Topics ') + (page.topics.length ? page.topics[0].topicId + ' to ' + page.topics[page.topics.length - 1].topicId : '');
      showTopics(page.topics, page.topics.length === 0 ? none : shown);
    });
  }

  /** Digits find one topic by id; anything else filters by label, * standing for any run of characters (orders-*), a bare word matching anywhere in the label. */
  function search(text) {
    text = text.trim();
    var byLabel = text !== '' && !/^[0-9]+$/.test(text);
    labelFilter = byLabel ? (text.indexOf('*') < 0 ? '*' + text + '*' : text) : null;
    if (text === '' || byLabel) {
      if (byLabel && !/^[A-Za-z0-9_.:/*-]{1,100}$/.test(labelFilter)) {
        $('next-page').disabled = true;
        showTopics([], 'A label filter uses letters, digits and - _ . : / with * for any run of them (orders-*).');
        return Promise.resolve();
      }
      afterStack = [0];
      return loadPage(0);
    }
    if (Number(text) < 1) {
      showTopics([], 'Search by topic id: a positive whole number.');
      return Promise.resolve();
    }
    return getJson(api + '/topics/' + text).then(function (topic) {
      $('next-page').disabled = true;
      showTopics(topic ? [topic] : [], topic ? 'Topic ' + text : 'No topic ' + text + '.');
    });
  }

  function refresh() {
    return getJson('stats').then(showStats).catch(function (error) {
      $('status').textContent = 'cannot reach the server';
      $('status').className = 'status bad';
      console.warn(error);
    });
  }

  function showError(error) { console.warn(error); }

  $('search-form').addEventListener('submit', function (event) { event.preventDefault(); search($('search').value).catch(showError); });
  $('search').addEventListener('input', function () { search($('search').value).catch(showError); });
  $('next-page').addEventListener('click', function () { afterStack.push(nextAfter); loadPage(nextAfter).catch(showError); });
  $('first-page').addEventListener('click', function () { afterStack = [0]; labelFilter = null; $('search').value = ''; loadPage(0).catch(showError); });
  $('login-form').addEventListener('submit', function (event) {
    event.preventDefault();
    token = $('token').value.trim();
    sessionStorage.setItem(tokenKey, token);
    refusals = {};
    $('token').value = '';
    refresh();
    loadPage(afterStack[afterStack.length - 1]).catch(showError);
  });

  refresh();
  loadPage(0).catch(showError);
  setInterval(refresh, refreshMs);
  setInterval(function () { if (!/^[0-9]+$/.test($('search').value.trim())) { loadPage(afterStack[afterStack.length - 1]).catch(showError); } }, 10000);
}());
