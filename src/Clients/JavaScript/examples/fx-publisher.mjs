#!/usr/bin/env node
// The price feed of the demo's FX board (/demo/fx.html): 50 currency pairs, each a state topic labelled
// fx-<PAIR> holding six fields, updated with merge patches of the fields that moved (in the style of
// Caplin Liberator's FX example). Node 22+, on the laharsub module:
//   node src/Clients/JavaScript/examples/fx-publisher.mjs --api http://localhost:5000/ps [--interval 200] [--ticks N]
// It finds the board's topics by label or creates them, writes every pair's document once, prints
// `ready <pairs>` and then, every `interval` ms, moves a few pairs; after `ticks` ticks it stops (default: never).
// It ends once its last patches are answered, after --ticks or on SIGINT or SIGTERM.
import { parseArgs } from 'node:util';
import { createClient } from '../laharsub.js';

const { values } = parseArgs({
  options: {
    api: { type: 'string', default: 'http://localhost:5000/ps' },
    interval: { type: 'string', default: '200' },
    ticks: { type: 'string', default: '0' },
    token: { type: 'string' }
  }
});
const interval = Number(values.interval);
const ticks = Number(values.ticks);
if (!(interval >= 10) || !(ticks >= 0)) {
  console.error('--interval is at least 10 (ms) and --ticks a whole number (0: run until stopped).');
  process.exit(2);
}

const currencies = ['EUR', 'USD', 'GBP', 'JPY', 'CHF', 'AUD', 'CAD', 'NZD', 'SEK', 'NOK'];
/** The 50 pairs: the first currencies against the later ones (45 pairs), and five more crosses. */
const pairs = [];
for (let i = 0; i < currencies.length; i++) {
  for (let j = i + 1; j < currencies.length; j++) {
    pairs.push(currencies[i] + currencies[j]);
  }
}
pairs.push('USDMXN', 'USDZAR', 'USDSGD', 'USDHKD', 'USDTRY');

const client = createClient(values.api, { accessToken: values.token ?? null });
// A deterministic walk (a seeded generator), so that two runs move the same way.
let seed = 20261206;
const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const round = (value, digits) => Number(value.toFixed(digits));

/** The board's topics by pair: found by their label (fx-<PAIR>), created with state where missing. */
async function topicsByPair() {
  const found = new Map();
  for (let after = 0; ;) {
    const page = await client.listTopics({ label: 'fx-*', after, limit: 1000 });
    for (const topic of page.topics) {
      if (topic.state) {
        found.set(topic.label.slice(3), topic.topicId);
      }
    }
    if (page.next == null) {
      break;
    }
    after = page.next;
  }
  for (const pair of pairs) {
    if (!found.has(pair)) {
      found.set(pair, (await client.createTopic({ label: 'fx-' + pair, state: true })).topicId);
    }
  }
  return found;
}

const topics = await topicsByPair();
const quotes = new Map(pairs.map((pair, i) => {
  const mid = pair.endsWith('JPY') || pair.endsWith('HKD') ? 80 + i * 3 : 0.5 + i * 0.07;
  const digits = mid > 20 ? 3 : 5;
  const spread = mid * 0.0002;
  return [pair, { digits, quote: { bid: round(mid - spread / 2, digits), ask: round(mid + spread / 2, digits), high: round(mid, digits), low: round(mid, digits), change: 0, open: mid } }];
}));
for (const [pair, { quote }] of quotes) {
  const { open, ...fields } = quote;
  await client.replaceState(topics.get(pair), { pair, ...fields, updated: new Date().toISOString() });
}
console.log('ready ' + JSON.stringify(Object.fromEntries(topics)));

/** One pair moves: the patch holds only the fields that changed. */
function move(pair) {
  const { digits, quote } = quotes.get(pair);
  const mid = (quote.bid + quote.ask) / 2 * (1 + (random() - 0.5) * 0.002);
  const spread = (quote.ask - quote.bid) * (0.9 + random() * 0.2);
  const next = { bid: round(mid - spread / 2, digits), ask: round(mid + spread / 2, digits) };
  next.high = Math.max(quote.high, next.bid);
  next.low = Math.min(quote.low, next.bid);
  next.change = round((next.bid - quote.open) / quote.open * 100, 3);
  const patch = {};
  for (const [field, value] of Object.entries(next)) {
    if (value !== quote[field]) {
      patch[field] = value;
      quote[field] = value;
    }
  }
  patch.updated = new Date().toISOString();
  return client.publishPatch(topics.get(pair), patch);
}

// Stopping (after --ticks, or on SIGINT/SIGTERM) waits for the patches on their way: once the process has
// exited, the server holds the feed's last word.
const pending = new Set();
let count = 0;
const timer = setInterval(() => {
  // About one pair in ten moves every tick, as a market does, unevenly.
  for (const pair of pairs.filter(() => random() < 0.1)) {
    const patch = move(pair).catch((error) => console.error(`a patch of ${pair} failed: ${error.message}`)).finally(() => pending.delete(patch));
    pending.add(patch);
  }
  if (ticks && ++count >= ticks) {
    stop();
  }
}, interval);
async function stop() {
  clearInterval(timer);
  await Promise.all(pending);
  client.close();
}
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
