/* Laharsub FX board: each currency pair is a state topic labelled fx-<PAIR> whose document holds six fields.
   The page finds the topics by label, follows every document with subscribeState (the snapshot, then the
   merge patches of the fields that changed, all on one connection), and flashes each cell that changes. */
import { createClient } from './laharsub.js';

const params = new URLSearchParams(window.location.search);
const api = params.get('api') || new URL('../ps', window.location.href).href;
const fields = ['bid', 'ask', 'high', 'low', 'change', 'updated'];
const $ = window.jQuery;
const showStatus = (status) => $('#status').attr('data-status', status)
  .text({ connected: 'Live', retrying: 'Reconnecting…', idle: 'Ready', connecting: 'Connecting…' }[status] || status);
const client = createClient(api, { accessToken: params.get('token'), onStatus: showStatus, onTransport: (transport) => $('#transport').text(transport) });
$('#api').text(api);

/** Every topic labelled fx-*, pages followed to the end. */
async function boardTopics() {
  const topics = [];
  for (let after = 0; ;) {
    const page = await client.listTopics({ label: 'fx-*', after, limit: 1000 });
    topics.push(...page.topics.filter((t) => t.state));
    if (page.next == null) {
      return topics.sort((a, b) => a.label.localeCompare(b.label));
    }
    after = page.next;
  }
}

function show($cell, field, value, previous) {
  const text = typeof value !== 'number' ? (field === 'updated' && value ? new Date(value).toLocaleTimeString() : String(value ?? ''))
    : field === 'change' ? (value > 0 ? '+' : '') + value.toFixed(3) : value.toFixed(value >= 20 ? 3 : 5);
  $cell.text(text).attr('data-value', value == null ? '' : JSON.stringify(value));
  if (field === 'change') {
    $cell.toggleClass('up', value > 0).toggleClass('down', value < 0);
  }
  if (previous !== undefined && field !== 'updated') {
    // Removed, laid out again, and added back: the animation starts over at every change.
    const direction = typeof value === 'number' && typeof previous === 'number' && value < previous ? 'flash-down' : 'flash-up';
    $cell.removeClass('flash-up flash-down');
    void $cell[0].offsetWidth;
    $cell.addClass(direction).attr('data-flashes', Number($cell.attr('data-flashes') || 0) + 1);
  }
}

const topics = await boardTopics();
$('#count').text(topics.length);
$('#empty').prop('hidden', topics.length > 0);
showStatus(client.status);
for (const topic of topics) {
  const $row = $('<tr>').attr('data-pair', topic.label.slice(3)).attr('data-topic', topic.topicId)
    .append($('<td class="pair">').text(topic.label.slice(3)));
  const cells = Object.fromEntries(fields.map((field) => [field, $('<td>').attr('data-field', field).appendTo($row)]));
  $row.appendTo('#board tbody');
  let shown = null;
  client.subscribeState(topic.topicId, {
    onState: (document, info) => {
      $row.attr('data-version', info.version);
      for (const field of fields) {
        if (!shown || document[field] !== shown[field]) {
          show(cells[field], field, document[field], shown ? shown[field] : undefined);
        }
      }
      shown = document;
    }
  });
}
