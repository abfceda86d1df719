/* Laharsub Chat: rooms are topics, messages are JSON { nick, text, sender } published to them. It runs on
   the laharsub module (served next to it as laharsub.js); jQuery only draws the page. */
import { createClient, watchPresence } from './laharsub.js';

jQuery(function ($) {
  'use strict';

  var params = new URLSearchParams(window.location.search);
  // The API next to this page (../ps), or another server's with ?api=http://host:port/ps.
  var apiBase = params.get('api') || new URL('../ps', window.location.href).href;
  var sender = Math.random().toString(36).slice(2, 10); // tells this tab's messages from others with the same nick
  var rooms = {};
  var order = [];
  var current = null;
  // A server in Jwt mode needs a token: open the page with ?token=... (e.g. from the token command).
  // ?transports=sse,longpoll chooses the transports to try (default: websocket, sse, longpoll).
  var transportNames = { websocket: 'WebSocket', sse: 'Server-Sent Events', longpoll: 'long poll' };
  // Presence: this tab is a member of the rooms it is in (clientId; in Jwt mode the token names it
  // instead), shown to the others with the nickname typed in the sidebar.
  var options = { onStatus: showStatus, onTransport: showTransport, accessToken: params.get('token') };
  if (!options.accessToken) {
    options.clientId = 'tab-' + sender;
  }
  options.member = { name: storedNick() };
  var chosen = $.grep(String(params.get('transports') || '').split(','), function (name) { return transportNames.hasOwnProperty(name); });
  if (chosen.length) {
    options.transports = chosen;
  }
  var client = createClient(apiBase, options);

  var $messages = $('#messages');
  var $nickname = $('#nickname');

  $('#jquery-version').text($.fn.jquery);
  $nickname.val(options.member.name).on('change blur', function () {
    var nick = String($nickname.val()).trim();
    $nickname.val(nick || storedNick());
    safeStore('laharsub.nick', $nickname.val());
    // Others see the new name from this tab's next connection and their next look at the member list.
    client.setMember({ name: $nickname.val() });
    paintAvatar($('#my-avatar'), $nickname.val());
  });
  paintAvatar($('#my-avatar'), $nickname.val());

  $('#create-room, #welcome-create').on('click', createRoom);
  $('#join-form').on('submit', function (event) {
    event.preventDefault();
    var id = String($('#join-id').val()).replace(/^#/, '').trim();
    if (!/^[1-9][0-9]*$/.test(id)) {
      showJoinError('A room number is a positive whole number, like 3.');
      return;
    }
    $('#join-id').val('');
    joinRoom(Number(id));
  });
  $('#room-list').on('click', '[data-room]', function () {
    selectRoom(Number($(this).attr('data-room')));
  });
  $('#leave-room').on('click', function () {
    if (current != null) {
      leaveRoom(current);
    }
  });
  $('#copy-link').on('click', function () {
    var link = inviteLink(current);
    var $button = $(this);
    var done = function () { flash($button, 'Link copied'); };
    if (navigator.clipboard) {
      navigator.clipboard.writeText(link).then(done, function () { window.prompt('Invite link', link); });
    } else {
      window.prompt('Invite link', link);
    }
  });
  $('#composer').on('submit', function (event) {
    event.preventDefault();
    var $input = $('#message-input');
    var text = String($input.val()).trim();
    if (!text || current == null) {
      return;
    }
    var room = current;
    $input.val('');
    client.publish(room, { nick: $nickname.val(), text: text, sender: sender }).catch(function (error) {
      addNotice(room, 'error', 'Your message was not sent: ' + error.message);
      $input.val(text);
    });
  });

  // Rooms named in the address (#room=3 or #rooms=3,4) are joined on arrival: that is the invite link.
  var fromHash = (/rooms?=([0-9,]+)/.exec(window.location.hash) || [])[1];
  if (fromHash) {
    $.each(fromHash.split(','), function (i, id) {
      if (id) {
        joinRoom(Number(id));
      }
    });
  } else {
    showStatus('idle');
  }

  function createRoom() {
    client.createTopic({ presence: true }).then(function (created) {
      joinRoom(created.topicId, true);
    }, function (error) {
      showJoinError('Could not create a room: ' + error.message);
    });
  }

  function joinRoom(id, isNew) {
    if (rooms[id]) {
      selectRoom(id);
      return;
    }
    $('#join-error').prop('hidden', true);
    // Ask first so that an unknown number is a friendly message, and so the history can be told
    // apart from what arrives live.
    client.getTopic(id).then(function (info) {
      if (rooms[id]) {
        selectRoom(id);
        return;
      }
      var room = { id: id, unread: 0, historyUntil: info.lastMessageId, seenLive: false, $items: $() };
      rooms[id] = room;
      order.push(id);
      room.subscription = client.subscribe({ topicId: id, from: 1 }, {
        onItem: function (item) {
          if (item.type === 'message') {
            addMessage(room, item);
          } else if (item.type === 'reset') {
            room.historyUntil = 0;
            addNotice(id, 'reset', 'The server started this room over (it was probably restarted): earlier messages are gone.');
          } else if (item.type === 'gap') {
            var count = item.toMessageId - item.fromMessageId + 1;
            addNotice(id, 'gap', count === 1 ? 'One message expired before you could read it.' :
              count + ' messages expired before you could read them.');
          } else if (item.type === 'topicDeleted') {
            addNotice(id, 'deleted', 'This room was deleted. You can still read what was said.');
            room.closed = true;
            renderRooms();
          } else if (item.type === 'error') {
            addNotice(id, 'error', item.error.status === 404 ?
              'This room no longer exists on the server (it may have been restarted). Create a new one to keep talking.' :
              'This room stopped updating: ' + item.error.message);
            room.closed = true;
            renderRooms();
          }
        }
      });
      if (info.presenceTopicId) {
        room.presence = watchPresence(client, id, {
          onChange: function (members) {
            room.members = Object.fromEntries(members);
            if (current === id) {
              renderMembers(room);
            }
          }
        });
      }
      if (info.retainedMessages === 0) {
        addNotice(id, 'info', isNew ? 'Room #' + id + ' is ready. Share its invite link and say hello.' :
          'No recent messages here. New ones appear as they are sent.');
      } else if (info.firstRetainedMessageId > 1) {
        addNotice(id, 'info', 'Older messages have expired; showing the ' + info.retainedMessages + ' most recent.');
      }
      selectRoom(id);
      updateHash();
    }, function (error) {
      showJoinError(error.status === 404 ? 'There is no room #' + id + '. Check the number, or create a new room.' :
        'Could not join room #' + id + ': ' + error.message);
    });
  }

  function leaveRoom(id) {
    var room = rooms[id];
    room.subscription.unsubscribe();
    if (room.presence) {
      room.presence.stop();
    }
    delete rooms[id];
    order = $.grep(order, function (each) { return each !== id; });
    $messages.children('[data-room="' + id + '"]').remove();
    selectRoom(order.length ? order[order.length - 1] : null);
    updateHash();
  }

  function selectRoom(id) {
    current = id;
    var room = id == null ? null : rooms[id];
    $('#welcome').prop('hidden', !!room);
    $messages.prop('hidden', !room);
    $('#composer').prop('hidden', !room);
    $('#room-actions').prop('hidden', !room);
    renderMembers(room);
    if (!room) {
      $('#room-title').text('Welcome');
      $('#room-subtitle').text('Create a room or join one by its number.');
    } else {
      room.unread = 0;
      $('#room-title').text('Room #' + id);
      $('#room-subtitle').text('Messages are kept for a few minutes, so people who join late still see them.');
      $messages.children().each(function () {
        $(this).prop('hidden', Number($(this).attr('data-room')) !== id);
      });
      $('#message-input').attr('placeholder', 'Message room #' + id + '…').trigger('focus');
      scrollToEnd();
    }
    renderRooms();
  }

  function addMessage(room, message) {
    var payload = message.data;
    var chat = payload && typeof payload === 'object' && typeof payload.text === 'string';
    var nick = chat && payload.nick ? String(payload.nick) : 'anonymous';
    var text = chat ? payload.text : typeof payload === 'string' ? payload : '[' + message.contentType + ' message]';
    var mine = chat && payload.sender === sender;
    if (!room.seenLive && message.messageId > room.historyUntil && room.historyUntil > 0) {
      room.seenLive = true;
      append(room.id, $('<li class="divider">').attr('data-room', room.id).append($('<span>').text('New messages')));
    }
    room.seenLive = room.seenLive || message.messageId > room.historyUntil;
    var time = new Date(message.publishedAt);
    var $item = $('<li class="message">')
      .toggleClass('mine', mine)
      .attr({ 'data-room': room.id, 'data-message-id': message.messageId })
      .append(paintAvatar($('<span class="avatar">'), nick))
      .append($('<div class="bubble">')
        .append($('<div class="byline">')
          .append($('<span class="nick">').text(mine ? nick + ' (you)' : nick))
          .append($('<time>').attr('datetime', message.publishedAt).attr('title', time.toLocaleString())
            .text(time.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }))))
        .append($('<p class="text">').text(text)));
    append(room.id, $item);
    if (room.id !== current) {
      room.unread++;
      renderRooms();
    }
  }

  function addNotice(id, type, text) {
    append(id, $('<li class="notice">').attr({ 'data-room': id, 'data-type': type }).append($('<span>').text(text)));
  }

  function append(id, $item) {
    var atEnd = $messages[0].scrollHeight - $messages.scrollTop() - $messages.innerHeight() < 40;
    $item.prop('hidden', id !== current).appendTo($messages);
    if (id === current && atEnd) {
      scrollToEnd();
    }
  }

  /** Who is in the room, live: rooms created before presence existed (or without it) show nobody. */
  function renderMembers(room) {
    var $members = $('#room-members');
    if (!room || !room.members) {
      $members.prop('hidden', true).empty();
      return;
    }
    var ids = Object.keys(room.members).sort(function (a, b) {
      return memberName(room.members, a).localeCompare(memberName(room.members, b));
    });
    $members.prop('hidden', false).empty().append($('<span class="members-title">').text('In the room (' + ids.length + '):'));
    $.each(ids, function (i, member) {
      var name = memberName(room.members, member);
      $('<span class="member">').attr('data-member', member)
        .append(paintAvatar($('<span class="avatar small">'), name))
        .append($('<span class="member-name">').text(member === options.clientId ? name + ' (you)' : name))
        .appendTo($members);
    });
  }

  function memberName(members, member) {
    var data = members[member];
    return data && typeof data.name === 'string' && data.name ? data.name : member;
  }

  function renderRooms() {
    var $list = $('#room-list').empty();
    $.each(order, function (i, id) {
      var room = rooms[id];
      $('<li>').append($('<button type="button" class="room">')
        .attr('data-room', id)
        .toggleClass('active', id === current)
        .toggleClass('closed', !!room.closed)
        .append($('<span class="hash">').text('#'))
        .append($('<span class="name">').text('Room ' + id))
        .append(room.unread ? $('<span class="badge">').text(room.unread > 99 ? '99+' : room.unread) : null))
        .appendTo($list);
    });
    if (!order.length) {
      $('<li class="empty">').text('You have not joined any room yet.').appendTo($list);
    }
    // Counted by room: a room with presence also subscribes to its companion topic on the same connection.
    var live = $.grep(order, function (id) { return rooms[id].subscription.active; }).length;
    $('#connection-meta').text(live ? live + (live === 1 ? ' room' : ' rooms') + ' live over 1 connection' : 'No rooms yet');
  }

  // The transport the client uses, and which it passed over (a proxy that refused the WebSocket, say).
  function showTransport(transport, info) {
    var skipped = $.map(info.skipped || [], function (name) { return transportNames[name]; });
    $('#transport').attr('data-transport', transport).text(transportNames[transport])
      .attr('title', skipped.length ? transportNames[transport] + ': ' + skipped.join(' and ') + ' could not be opened on the way to the server.' :
        'The connection all rooms share.');
  }

  function showStatus(status, info) {
    var labels = {
      connecting: 'Connecting…',
      connected: 'Live',
      idle: 'Ready',
      closed: 'Disconnected'
    };
    var label = labels[status] || status;
    if (status === 'retrying') {
      label = 'Reconnecting' + (info && info.delay >= 1500 ? ' in ' + Math.round(info.delay / 1000) + ' s' : '') + '…';
    }
    $('#status').attr('data-status', status).find('.label').text(label);
  }

  function showJoinError(text) {
    $('#join-error').text(text).prop('hidden', false);
  }

  function updateHash() {
    var hash = order.length ? '#rooms=' + order.join(',') : ' ';
    window.history.replaceState(null, '', window.location.pathname + window.location.search + hash);
  }

  function inviteLink(id) {
    return window.location.href.split('#')[0] + '#room=' + id;
  }

  function scrollToEnd() {
    $messages.scrollTop($messages[0].scrollHeight);
  }

  function flash($button, text) {
    var original = $button.text();
    $button.text(text);
    setTimeout(function () { $button.text(original); }, 1500);
  }

  function paintAvatar($element, nick) {
    var hue = 0;
    for (var i = 0; i < nick.length; i++) {
      hue = (hue * 31 + nick.charCodeAt(i)) % 360;
    }
    var initials = nick.split(/\s+/).filter(Boolean).slice(0, 2).map(function (w) { return Array.from(w)[0]; }).join('').toUpperCase();
    return $element.text(initials || '?').css('background-color', 'hsl(' + hue + ' 55% 45%)');
  }

  function storedNick() {
    try {
      var nick = window.localStorage.getItem('laharsub.nick');
      if (nick) {
        return nick;
      }
    } catch (e) {
      // Storage can be off (private windows); a fresh name then is fine.
    }
    var animals = ['Otter', 'Heron', 'Lynx', 'Marten', 'Ibex', 'Puffin', 'Gecko', 'Bison'];
    return animals[Math.floor(Math.random() * animals.length)] + ' ' + (100 + Math.floor(Math.random() * 900));
  }

  function safeStore(key, value) {
    try {
      window.localStorage.setItem(key, value);
    } catch (e) {
      // Not remembered across visits then; nothing else depends on it.
    }
  }
});
