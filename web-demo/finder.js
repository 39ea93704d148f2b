// Keys the page makes up: fresh words until the filter is wrong about one
// (a false positive, the ordinary kind first), and 1,000 URLs at once, the
// way a crawler adds them.
import { $, PROBES, bitWord, isDrawable, state } from './state.js';
import { el, fmtInt, fmtRate, setError } from './format.js';
import { refresh } from './charts.js';
import { pushUndo } from './history.js';
import { setBusy } from './actions.js';
import { remember, say, testKey } from './keys.js';
import { falsePositiveKinds, keysForOrdinary } from './theory.js';

const WORDS = [
  'apple',
  'river',
  'cloud',
  'tiger',
  'lemon',
  'piano',
  'rocket',
  'maple',
  'coral',
  'ember',
  'falcon',
  'garden',
  'harbor',
  'island',
  'jungle',
  'kettle',
  'lantern',
  'meadow',
  'nectar',
  'orbit',
];

const tick = () => new Promise((r) => setTimeout(r, 0));

// coveredByOne tells whether one added key set every one of positions: a
// false positive that repeats a whole pattern (section 5), not the
// ordinary kind, whose bits different keys set.
function coveredByOne(positions) {
  let common = null;
  for (const p of new Set(positions)) {
    const keys = new Set(state.bitKeys.get(p) ?? []);
    common = common ? new Set([...common].filter((k) => keys.has(k))) : keys;
    if (!common.size) return false;
  }
  return true;
}

// kindsNow gives falsePositiveKinds for the classic filter on show (whose
// bits are the keys added on this page), null for other kinds and sizes.
function kindsNow() {
  if (state.kind !== 'classic' || state.fromFile) return null;
  return falsePositiveKinds((i) => state.bitKeys.get(i), state.m, state.k);
}

/** Ordinary false positives at least this many times the repeats: 19 in 20 are ordinary. */
export const ORDINARY_SHARE = 19;

/** madeUpKeys gives made-up keys not on the page: the words, then "word-2", "word-3"… */
export function* madeUpKeys() {
  for (let i = 0; ; i++) {
    const word = WORDS[i % WORDS.length];
    const key = i < WORDS.length ? word : `${word}-${Math.floor(i / WORDS.length) + 1}`;
    if (!state.keyCounts.has(key) && !state.removedKeys.has(key) && !state.forcedKeys.has(key)) yield key;
  }
}

const oneIn = (share) => `about one in ${fmtInt(Math.round(1 / share))}`;

// offerKeys says why the first false positive here would be a repeat of
// one key's pattern, not the ordinary kind, and offers to add made-up keys
// until the ordinary kind is 19 in 20 of them, then find one.
function offerKeys(kinds) {
  const n = state.keyCounts.size;
  const set = state.bitKeys.size;
  const w = bitWord();
  const more = keysForOrdinary(state.bitKeys, (key) => state.filter.positions(key), madeUpKeys(), {
    m: state.m,
    k: state.k,
    times: ORDINARY_SHARE,
  });
  $('explain').replaceChildren();
  const parts = [
    el('p', {
      class: 'verdict-head',
      'data-offer': more ? String(more.keys.length) : '0',
      text: `With ${fmtInt(n)} ${n === 1 ? 'key' : 'keys'}, ${fmtInt(set)} of the ${fmtInt(state.m)} ${w}s are set: the first false positive would most likely be the rarer kind.`,
    }),
    el('p', {
      text:
        `An ordinary false positive needs its ${state.k} ${w}s set by different keys: ${kinds.ordinary > 0 ? `so few are set that ${oneIn(kinds.ordinary)} fresh words is one` : 'here no fresh word can be one'}. ` +
        `A word whose ${w}s one added key set every one of (a whole pattern repeated, section 5) is ${oneIn(kinds.single)}. Both counted exactly over every start pair (x, y) of this filter.`,
    }),
  ];
  if (more) {
    const k = more.keys.length;
    const button = el('button', {
      type: 'button',
      id: 'findfp-more',
      text: `Add ${fmtInt(k)} made-up ${k === 1 ? 'key' : 'keys'} and find one`,
    });
    button.addEventListener('click', () =>
      addMadeUp(more.keys)
        .then(() => findFalsePositive())
        .catch((err) => setError('key', err.message)),
    );
    parts.push(
      el('p', {
        text: `With ${fmtInt(k)} more ${k === 1 ? 'key' : 'keys'} (${fmtInt(more.set)} ${w}s set), ordinary false positives are ${oneIn(more.kinds.ordinary)} and at least ${ORDINARY_SHARE} in 20 of all false positives.`,
      }),
      el('p', {}, button),
    );
  } else {
    parts.push(el('p', { text: 'Add more keys, or make a smaller filter, for an ordinary one.' }));
  }
  say(...parts);
}

// addMadeUp adds keys (one Undo step), as typed keys, so the address keeps them.
async function addMadeUp(keys) {
  pushUndo();
  const f = state.filter;
  for (const key of keys) {
    const positions = f.positions(key);
    f.add(key);
    state.added++;
    remember(key, positions);
    state.typedKeys.push(key);
  }
  refresh();
  await tick();
}

/**
 * findFalsePositive tries fresh words until the filter says "probably" to
 * one never added, and shows it. It prefers an ordinary false positive,
 * whose bits different keys set: a whole-pattern repeat of one key, which a
 * small filter with few keys meets more often, is shown only when no
 * ordinary one came up in `limit` tries, and said to be the rarer kind.
 */
export async function findFalsePositive(limit = 2_000_000) {
  setError('key');
  if (state.filter.count === 0) {
    $('explain').replaceChildren();
    say(
      el('p', {
        class: 'verdict-head',
        text: 'Add a few keys first: an empty filter says "no" to everything, and it is always right.',
      }),
    );
    return null;
  }
  const kinds = kindsNow();
  if (kinds && kinds.ordinary < kinds.single) {
    offerKeys(kinds);
    return null;
  }
  setBusy(true);
  let repeat = null;
  let repeats = 0;
  const show = (key, tries, note) => {
    $('key').value = key;
    testKey(key, `Found after ${fmtInt(tries)} ${tries === 1 ? 'try' : 'tries'}: `);
    if (note) $('verdict').append(el('p', { class: 'help', text: note }));
    return key;
  };
  try {
    for (let tries = 0; tries < limit;) {
      const batch = [];
      for (let i = 0; i < 20_000; i++) {
        const key = `${WORDS[Math.floor(Math.random() * WORDS.length)]}-${Math.floor(Math.random() * 1e6)}`;
        if (!state.keyCounts.has(key) && !state.removedKeys.has(key)) batch.push(key);
      }
      const hits = state.filter.hasMany(batch);
      for (let i = hits.indexOf(true); i >= 0; i = hits.indexOf(true, i + 1)) {
        const key = batch[i];
        if (!coveredByOne(state.filter.positions(key))) {
          const skipped = repeats
            ? `On the way, ${fmtInt(repeats)} ${repeats === 1 ? 'word' : 'words'} repeated the whole pattern of one added key: the rarer kind, section 5.`
            : '';
          return show(key, tries + i + 1, skipped);
        }
        repeats++;
        repeat ??= { key, tries: tries + i + 1 };
      }
      tries += batch.length;
      await tick();
    }
    if (repeat) {
      return show(
        repeat.key,
        repeat.tries,
        `In ${fmtInt(limit)} tries every false positive (${fmtInt(repeats)}) repeated the whole pattern of one added key: with so few keys, so few bits are set that an ordinary one, its bits set by different keys, is rarer still. Add more keys, or make a smaller filter, for an ordinary one.`,
      );
    }
    $('explain').replaceChildren();
    say(
      el('p', {
        class: 'verdict-head',
        text: `No false positive in ${fmtInt(limit)} fresh keys: at this fill level the filter is rarely wrong. Add more keys and try again.`,
      }),
    );
    return null;
  } finally {
    setBusy(false);
  }
}

const HOSTS = [
  'news.example.com',
  'shop.example.org',
  'blog.example.net',
  'docs.example.io',
  'forum.example.com',
  'wiki.example.org',
];
const SECTIONS = ['article', 'product', 'post', 'page', 'thread', 'item', 'tag', 'category'];

function crawlerURL() {
  const host = HOSTS[Math.floor(Math.random() * HOSTS.length)];
  const section = SECTIONS[Math.floor(Math.random() * SECTIONS.length)];
  const slug = `${WORDS[Math.floor(Math.random() * WORDS.length)]}-${WORDS[Math.floor(Math.random() * WORDS.length)]}`;
  const id = Math.floor(Math.random() * 1e7);
  const query = Math.random() < 0.3 ? `?page=${1 + Math.floor(Math.random() * 9)}` : '';
  return `https://${host}/${section}/${slug}-${id}${query}`;
}

export async function bulkInsert(total = 1000, steps = 20) {
  pushUndo();
  setBusy(true);
  state.bulkRepeats = 0;
  try {
    const f = state.filter;
    const per = Math.ceil(total / steps);
    for (let done = 0; done < total; done += per) {
      const batch = [];
      while (batch.length < Math.min(per, total - done)) {
        const u = crawlerURL();
        if (!state.keyCounts.has(u)) batch.push(u);
      }
      const fresh = f.addMany(batch);
      state.added += batch.length;
      state.bulkRepeats += fresh.filter((x) => !x).length;
      if (isDrawable(state.kind)) for (const u of batch) remember(u, f.positions(u));
      else for (const u of batch) state.keyCounts.set(u, 1);
      state.bulkKeys += batch.length;
      refresh();
      $('bulk-status').textContent = `Added ${fmtInt(done + batch.length)} of ${fmtInt(total)} URLs…`;
      await new Promise((r) => requestAnimationFrame(() => r()));
    }
    const s = f.stats();
    const last = state.history[state.history.length - 1];
    const r = state.bulkRepeats;
    const repeats = r
      ? ` ${fmtInt(r)} of them found all their ${bitWord()}s already set (false positives), so the filter counts ${fmtInt(total - r)} as new.`
      : '';
    // Past its capacity a filter is not broken, only wrong more often than
    // it was sized for: say how far past, beside the rate it was sized for.
    const over =
      s.capacity && s.count > s.capacity
        ? ` It holds ${fmtInt(s.count)} keys, ${fmtRate(s.count / s.capacity)} of the ${fmtInt(s.capacity)} it was sized for, so it is wrong far more often than its target of ${fmtRate(s.errorRate)}: make a larger filter for more keys.`
        : s.errorRate
          ? ` Its target was ${fmtRate(s.errorRate)} at ${fmtInt(s.capacity)} keys.`
          : '';
    $('bulk-status').textContent =
      `Done: added ${fmtInt(total)} URLs.${repeats} Now ${fmtRate(s.fillRatio)} of ${bitWord()}s are set; false-positive rate ${fmtRate(s.estimatedErrorRate)} estimated, ${fmtRate(last.measured)} measured on ${fmtInt(PROBES)} fresh keys.${over}`;
  } finally {
    setBusy(false);
  }
}
