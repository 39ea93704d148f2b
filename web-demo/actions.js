// What the buttons do: make or open a filter, add, test and remove keys,
// find a false positive, fill the filter with URLs, download it.
import { BloomFilter, CountingBloomFilter, BlockedBloomFilter, fromBytes } from '/js/index.js';
import { $, BLOCK, MAX_BITS, PROBES, bitWord, isDrawable, state } from './state.js';
import { FILE_ERRORS, el, fmtBytes, fmtInt, fmtRate, fmtSI, keyName, list, setError } from './format.js';
import { chosenKind, showDerived, sizing } from './params.js';
import { buildGrid, highlight, valuesAt } from './grid.js';
import { refresh } from './charts.js';
import { showHashMath } from './hashmath.js';
import { syncTradeoff } from './tradeoff.js';
import { coveringKey } from './theory.js';
import { popUndo, pushUndo, restoreRecord, undoSteps } from './history.js';

// ---------- making and replacing the filter ----------

// forgetKeys empties what the page knows of the keys added (which set each
// bit, what was typed, the log): a new filter, or one reset, starts bare.
function forgetKeys() {
  state.keyCounts = new Map();
  state.typedKeys = [];
  state.bulkKeys = 0;
  state.forced = 0;
  state.bitKeys = new Map();
  state.highlight = new Map();
  state.history = [];
}

export function useFilter(filter, fromFile = '', plannedN = 0) {
  state.filter?.free();
  state.filter = filter;
  const s = filter.stats();
  state.kind = s.kind;
  state.m = s.bits;
  state.k = s.hashes;
  state.fromFile = fromFile;
  state.added = s.count;
  forgetKeys();
  buildGrid();
  refresh();
  $('verdict').replaceChildren();
  $('explain').replaceChildren();
  showHashMath(null);
  $('bulk-status').textContent = '';
  $('findfp').disabled = !isDrawable(s.kind);
  syncTradeoff(plannedN || s.capacity);
}

export function createFilter() {
  const params = showDerived();
  if (!params) return false;
  const { m, k, n, p } = params;
  if (m > MAX_BITS) {
    const msg = `That needs ${fmtSI(m, 'bits')}; this page makes filters up to ${fmtSI(MAX_BITS, 'bits')}.`;
    setError(sizing() === 'np' ? 'n' : 'm', `${msg} ${sizing() === 'np' ? 'Lower n or raise p.' : 'Lower m.'}`);
    return false;
  }
  const kind = chosenKind();
  const Class = { counting: CountingBloomFilter, blocked: BlockedBloomFilter }[kind] ?? BloomFilter;
  let opts = sizing() === 'np' ? { capacity: n, errorRate: p } : { bits: m, hashes: k };
  if (kind === 'blocked' && sizing() === 'mk') opts = { blocks: m / BLOCK };
  pushUndo();
  useFilter(new Class(opts), '', n);
  return true;
}

// ---------- reset and undo ----------

/** resetFilter empties the filter on show, keeping its size (undoable). */
export function resetFilter() {
  pushUndo();
  state.filter.clear();
  state.fromFile = '';
  state.added = 0;
  forgetKeys();
  refresh();
  say(
    el('p', {
      class: 'verdict-head',
      text: 'Reset: the filter is empty again, with the same size. Undo brings the keys back.',
    }),
  );
  $('explain').replaceChildren();
  showHashMath(null);
}

/** undo puts back the filter and the page's record of its keys as they were before the last change. */
export function undo() {
  const s = popUndo();
  if (!s) return;
  const filter = fromBytes(s.bytes, { maxBits: MAX_BITS });
  useFilter(filter, s.fromFile, filter.capacity || s.added);
  restoreRecord(s);
  refresh({ recordPoint: false });
  say(
    el('p', {
      class: 'verdict-head',
      text: `Undone: the filter is as it was before the last change${undoSteps() ? ` (${undoSteps()} more ${undoSteps() === 1 ? 'step' : 'steps'} to undo)` : ''}.`,
    }),
  );
}

// ---------- keys ----------

export function readKey() {
  const key = $('key').value;
  if (key === '') {
    setError('key', 'Type a key first, for example a word or a URL.');
    $('key').focus();
    return null;
  }
  setError('key');
  return key;
}

function remember(key, positions) {
  state.keyCounts.set(key, (state.keyCounts.get(key) ?? 0) + 1);
  for (const p of new Set(positions)) {
    let keys = state.bitKeys.get(p);
    if (!keys) state.bitKeys.set(p, (keys = []));
    keys.push(key);
  }
}

function forget(key, positions) {
  const c = state.keyCounts.get(key) ?? 0;
  if (c <= 1) state.keyCounts.delete(key);
  else state.keyCounts.set(key, c - 1);
  for (const p of new Set(positions)) {
    const keys = state.bitKeys.get(p);
    const i = keys ? keys.lastIndexOf(key) : -1;
    if (i >= 0) keys.splice(i, 1);
  }
  if (!state.keyCounts.has(key)) {
    const i = state.typedKeys.lastIndexOf(key);
    if (i >= 0) state.typedKeys.splice(i, 1);
  }
}

function say(...parts) {
  const v = $('verdict');
  v.replaceChildren(...parts);
}

// blockSentence says where a split-block key's bits are; '' for other kinds.
function blockSentence(positions) {
  if (state.kind !== 'blocked') return '';
  const b = Math.floor(positions[0] / BLOCK);
  return ` All 8 lie in block ${fmtInt(b)} (bits ${fmtInt(BLOCK * b)}–${fmtInt(BLOCK * b + BLOCK - 1)}), one in each of its 32-bit words: one cache line to read.`;
}

export function addKey(key) {
  pushUndo();
  const f = state.filter;
  const positions = f.positions(key);
  const before = valuesAt(f, state.kind, positions);
  const isNew = f.add(key);
  state.added++;
  remember(key, positions);
  state.typedKeys.push(key);
  const seen = new Set();
  const marks = positions.map((p, j) => {
    const cls = before[j] === 0 && !seen.has(p) ? 'new' : 'old';
    seen.add(p);
    return [p, cls];
  });
  const fresh = marks.filter(([, c]) => c === 'new').length;
  refresh();
  highlight(marks);
  $('explain').replaceChildren();
  const w = bitWord();
  const where = `Its ${w}s: ${positions.join(', ')}.`;
  const counting = state.kind === 'counting';
  // A key added before on this page is a duplicate; one that was not but
  // finds all its bits set is a false positive. Either way add() answered
  // false, and a classic or split-block filter did not change.
  const again = (state.keyCounts.get(key) ?? 0) > 1;
  let head;
  let what;
  if (isNew) {
    head = `Added "${key}".`;
    what = counting
      ? `Each of its ${positions.length} counters went up by one: ${fresh} of them had been 0 (green), ${positions.length - fresh} were already above 0 (amber).`
      : `${fresh} of its ${positions.length} ${w}s were 0 and are now 1 (green); ${positions.length - fresh} were already 1 (amber).`;
  } else if (again) {
    head = `Duplicate: "${key}" was already added.`;
    what = counting
      ? `All of its counters were already above 0, so add() answered "already there"; each went up by one more (amber), so that removing "${key}" once still leaves it in.`
      : `All of its ${w}s were already 1 (amber), so add() answered "already there" and the filter did not change.`;
  } else if (state.fromFile) {
    head = `Already there: all of "${key}"'s ${w}s were set.`;
    what = `add() answered "already there"${counting ? ', and its counters went up by one (amber)' : ', and the filter did not change'}. This filter was opened from a file, so the page cannot tell whether "${key}" was in it or this is a false positive.`;
  } else {
    head = `Already there: "${key}" was never added, yet all its ${w}s were set.`;
    what = counting
      ? `add() answered "already there": a false positive, set by other keys. Its counters went up by one anyway (amber).`
      : `add() answered "already there": a false positive. Other keys had set every one of them (amber), so the filter did not change.`;
  }
  say(
    el('p', { class: `verdict-head${isNew ? '' : ' maybe'}`, text: head }),
    el('p', { text: `${where} ${what}${blockSentence(positions)}` }),
  );
  showHashMath(key, positions);
}

// explain lists, for each probed bit, the keys added on this page that set it.
function explain(key, positions) {
  const box = $('explain');
  const ul = el('ul', { id: 'fplist' });
  for (const p of new Set(positions)) {
    const keys = [...new Set(state.bitKeys.get(p) ?? [])];
    const li = el('li', { 'data-bit': String(p) }, `${bitWord()} ${p}: set by `);
    keys.slice(0, 6).forEach((k, i) => {
      if (i) li.append(', ');
      li.append(keyName(k));
    });
    if (keys.length > 6) li.append(` and ${fmtInt(keys.length - 6)} more`);
    if (!keys.length) li.append('a key not added on this page');
    ul.append(li);
  }
  const cover = coveringKey(
    positions,
    [...state.keyCounts.keys()].map((k) => [k, state.filter.positions(k)]),
  );
  const parts = [
    el('p', { text: `Why the filter says yes to "${key}": every ${bitWord()} it looks at was set by other keys.` }),
    ul,
  ];
  if (cover) {
    parts.push(
      el(
        'p',
        { class: 'fp', 'data-cover': cover.key },
        cover.same ? 'Its pattern is the same as ' : 'One key set every one of them: ',
        keyName(cover.key),
        cover.same
          ? `'s: one added key set every ${bitWord()} it looks at. A small filter repeats whole patterns (section 5).`
          : '.',
      ),
    );
  }
  box.replaceChildren(...parts);
}

export function testKey(key, prefix = '') {
  const f = state.filter;
  $('explain').replaceChildren();
  if (!isDrawable(state.kind)) {
    const has = f.has(key);
    say(
      el('p', {
        class: `verdict-head ${has ? 'yes' : 'no'}`,
        text: `${prefix}"${key}": ${has ? 'probably in the set' : 'certainly not in the set'}.`,
      }),
    );
    showHashMath(null);
    return has;
  }
  const positions = f.positions(key);
  showHashMath(key, positions);
  const values = valuesAt(f, state.kind, positions);
  const has = f.has(key);
  const zeros = [...new Set(positions.filter((p, j) => values[j] === 0))];
  highlight(positions.map((p, j) => [p, values[j] ? 'probe' : 'zero']));
  const w = bitWord();
  if (!has) {
    const named = zeros.length === 1 ? `${w} ${zeros[0]} is 0` : `${w}s ${list(zeros.map(String))} are 0`;
    say(
      el('p', { class: 'verdict-head no', text: `${prefix}"${key}": certainly not in the set.` }),
      el('p', {
        text: `It looks at ${w}s ${positions.join(', ')}, and ${named} (red). Adding "${key}" would have set ${zeros.length === 1 ? 'it' : 'them'}, so it was never added.${blockSentence(positions)}`,
      }),
    );
    return false;
  }
  const fp = !state.keyCounts.has(key) && !state.fromFile;
  const head = el('p', {
    class: `verdict-head ${fp ? 'maybe' : 'yes'}`,
    text: `${prefix}"${key}": probably in the set.`,
  });
  const repeats = new Set(positions).size < positions.length ? ' (a position can come up twice)' : '';
  const body = `All of its ${w}s (${positions.join(', ')})${repeats} are set.${blockSentence(positions)}`;
  if (state.keyCounts.has(key)) {
    say(head, el('p', { text: `${body} And it really is: it was added on this page.` }));
  } else if (state.fromFile) {
    say(
      head,
      el('p', {
        text: `${body} This filter was opened from a file, so the page cannot tell whether "${key}" was added or is a false positive.`,
      }),
    );
  } else {
    say(head, el('p', { class: 'fp', text: `${body} But "${key}" was never added: this is a false positive.` }));
    explain(key, positions);
  }
  return true;
}

export function removeKey(key) {
  const f = state.filter;
  $('explain').replaceChildren();
  const positions = f.positions(key);
  if (!f.has(key)) {
    testKey(key);
    $('verdict').append(el('p', { text: 'Nothing to remove.' }));
    return;
  }
  if (!state.keyCounts.has(key) && !state.fromFile) {
    testKey(key);
    const anyway = el('button', { type: 'button', id: 'remove-anyway', text: 'Remove anyway…' });
    anyway.addEventListener('click', () => confirmRemove(key));
    $('verdict').append(
      el('p', {
        text: `The page will not remove "${key}": it was never added, and taking one off counters that other keys raised could make those keys look absent (a false negative).`,
      }),
      el('div', { class: 'buttons' }, anyway),
    );
    return;
  }
  pushUndo();
  f.remove(key);
  state.added--;
  forget(key, positions);
  refresh();
  highlight(positions.map((p) => [p, 'dec']));
  showHashMath(key, positions);
  say(
    el('p', { class: 'verdict-head', text: `Removed "${key}".` }),
    el('p', {
      text: `Counters ${positions.join(', ')} each went down by one. A classic filter cannot do this: clearing a bit could erase other keys that share it.`,
    }),
  );
}

// confirmRemove asks before removing a key that was never added.
function confirmRemove(key) {
  const yes = el('button', { type: 'button', id: 'confirm-remove', text: `Yes, remove "${key}"` });
  const no = el('button', { type: 'button', id: 'cancel-remove', text: 'Cancel' });
  const box = el(
    'div',
    { class: 'confirm', role: 'group' },
    el('p', {
      text: `Remove "${key}" though it was never added? Each of its counters goes down by one; a counter at 1 that an added key raised goes to 0, and that key will answer "certainly not".`,
    }),
    el('div', { class: 'buttons' }, yes, no),
  );
  box.setAttribute('aria-label', 'Confirm the removal');
  $('remove-anyway').closest('.buttons').replaceWith(box);
  yes.addEventListener('click', () => forceRemove(key));
  no.addEventListener('click', () => {
    box.replaceWith(el('p', { text: `"${key}" was not removed.` }));
    $('key').focus();
  });
  yes.focus();
}

// forceRemove removes a key that was never added, and names the added
// keys that now answer "certainly not", with the counters that fell.
export function forceRemove(key) {
  const f = state.filter;
  const positions = [...new Set(f.positions(key))];
  const before = valuesAt(f, 'counting', positions);
  pushUndo();
  f.remove(key);
  state.forced++;
  const after = valuesAt(f, 'counting', positions);
  const zeroed = new Set(positions.filter((p, j) => before[j] > 0 && after[j] === 0));
  const lost = [...state.keyCounts.keys()].filter((k) => !f.has(k));
  refresh();
  // Purple: went down by one; outlined in red: went to 0 under an added key.
  const cost = new Set(lost.flatMap((k) => f.positions(k)).filter((p) => zeroed.has(p)));
  highlight(positions.map((p) => [p, cost.has(p) ? 'dec lost' : 'dec']));
  $('explain').replaceChildren();
  showHashMath(key, f.positions(key));
  const fell = positions.map((p, j) => `${p} (${before[j]} → ${after[j]})`).join(', ');
  const parts = [
    el('p', {
      class: `verdict-head${lost.length ? ' no' : ''}`,
      text: lost.length
        ? `Removed "${key}" anyway: ${lost.length === 1 ? 'an added key is' : `${lost.length} added keys are`} now a false negative.`
        : `Removed "${key}" anyway.`,
    }),
    el('p', { text: `Counters ${fell} each went down by one (purple).` }),
  ];
  if (lost.length) {
    const ul = el('ul', { id: 'lostlist' });
    for (const k of lost) {
      const at = f.positions(k).filter((p) => zeroed.has(p));
      ul.append(
        el(
          'li',
          { 'data-lost': k },
          keyName(k),
          ` was added, and now answers "certainly not in the set": ${at.length === 1 ? `counter ${at[0]}` : `counters ${list(at.map(String))}`}, which it had raised, fell to 0 (outlined in red).`,
        ),
      );
    }
    parts.push(
      ul,
      el('p', {
        text: 'That is why a counting filter removes only keys that were added: the counters it lowers are then its own.',
      }),
    );
  } else {
    parts.push(
      el('p', {
        text: 'No added key lost its answer this time: every counter it took one from was above 1. Another removal may not be so lucky.',
      }),
    );
  }
  say(...parts);
}

// ---------- false positives and bulk ----------

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

export function setBusy(busy) {
  state.busy = busy;
  for (const id of [
    'create',
    'bulk',
    'bulksize',
    'findfp',
    'add',
    'test',
    'remove',
    'file',
    'download',
    'small-setup',
    'patterns-run',
  ])
    $(id).disabled = busy;
  if (busy) document.body.setAttribute('aria-busy', 'true');
  else document.body.removeAttribute('aria-busy');
  if (!busy) $('findfp').disabled = !isDrawable(state.kind);
  $('undo').disabled = busy || undoSteps() === 0;
}

export async function findFalsePositive() {
  setError('key');
  if (state.filter.count === 0) {
    $('explain').replaceChildren();
    say(
      el('p', {
        class: 'verdict-head',
        text: 'Add a few keys first: an empty filter says "no" to everything, and it is always right.',
      }),
    );
    return;
  }
  setBusy(true);
  try {
    // Enough for the page's default filter with three keys, whose rate is
    // about 1 in 130,000 (mostly a whole pattern of one key repeated).
    const limit = 2_000_000;
    for (let tries = 0; tries < limit;) {
      const batch = [];
      for (let i = 0; i < 20_000; i++) {
        const key = `${WORDS[Math.floor(Math.random() * WORDS.length)]}-${Math.floor(Math.random() * 1e6)}`;
        if (!state.keyCounts.has(key)) batch.push(key);
      }
      const hits = state.filter.hasMany(batch);
      const i = hits.indexOf(true);
      if (i >= 0) {
        tries += i + 1;
        $('key').value = batch[i];
        testKey(batch[i], `Found after ${fmtInt(tries)} ${tries === 1 ? 'try' : 'tries'}: `);
        return;
      }
      tries += batch.length;
      await tick();
    }
    $('explain').replaceChildren();
    say(
      el('p', {
        class: 'verdict-head',
        text: `No false positive in ${fmtInt(limit)} fresh keys: at this fill level the filter is rarely wrong. Add more keys and try again.`,
      }),
    );
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

// ---------- files ----------

export function download() {
  const s = state.filter.stats();
  const blob = new Blob([state.filter.toBytes()], { type: 'application/octet-stream' });
  const a = el('a', {
    href: URL.createObjectURL(blob),
    download: `edgebloom-${s.kind}-m${s.bits}-k${s.hashes}-n${s.count}.bloom`,
  });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
}

// startsLikeFilter tells whether bytes start as a filter ("EBLM") or a
// sharded snapshot ("EBSC") does, or are too short to tell: an empty file,
// or one that starts otherwise, is no filter, however long.
export function startsLikeFilter(bytes) {
  const head = String.fromCharCode(...bytes.subarray(0, 4));
  return bytes.length > 0 && ['EBLM', 'EBSC'].some((magic) => magic.startsWith(head));
}

export async function openFile(file) {
  setError('file');
  const info = $('fileinfo');
  info.replaceChildren();
  let filter;
  try {
    const bytes = new Uint8Array(await file.arrayBuffer());
    if (!startsLikeFilter(bytes)) throw Object.assign(new Error('not a filter'), { code: 'ERR_NOT_FILTER' });
    filter = fromBytes(bytes, { maxBits: MAX_BITS });
  } catch (err) {
    setError('file', FILE_ERRORS[err.code] ?? `This file cannot be opened: ${err.message}`);
    info.replaceChildren();
    return;
  }
  pushUndo();
  useFilter(filter, file.name);
  const s = filter.stats();
  info.replaceChildren();
  const rows = [
    ['File', `${file.name} (${fmtBytes(file.size)})`],
    ['Kind', s.kind],
    ['Bits m', fmtInt(s.bits)],
    ['Hashes k', s.kind === 'scalable' ? `per layer (${s.layers} layers)` : fmtInt(s.hashes)],
    ['Keys added', fmtInt(s.count)],
    ['Capacity', s.capacity ? fmtInt(s.capacity) : 'not recorded'],
    ['Target rate', s.errorRate ? fmtRate(s.errorRate) : 'not recorded'],
  ];
  for (const [t, d] of rows) info.append(el('dt', { text: t }), el('dd', { text: d }));
}
