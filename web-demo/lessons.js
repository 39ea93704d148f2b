// The lesson's steps set up (the tour's buttons, and a link to ?step=N),
// and the page's state kept in its address: every change to the filter or
// its keys rewrites the address (a new filter or a tour step is a new entry
// of the history, so Back returns to the one before), and an address read
// back, on load or on Back and Forward, rebuilds the page it names.
import { fromBytes } from '/js/index.js';
import { $, MAX_BITS, state } from './state.js';
import { el } from './format.js';
import { writeForm } from './params.js';
import { createFilter, setBusy } from './actions.js';
import { addKey, forceRemove, removeKey, testKey } from './keys.js';
import { findFalsePositive } from './finder.js';
import { runPatterns, SMALL_KEYS } from './patterns.js';
import { addressOf, parseAddress } from './address.js';
import { STEPS, endTour, showStep, tourStep } from './tour.js';

/** The form as the page opens: a classic filter for 100 keys at 5 %. */
export const DEFAULT_FORM = { kind: 'classic', sizing: 'np', n: '100', p: '0.05', m: '128', k: '4' };
const FRUITS = ['apple', 'banana', 'cherry', 'grape', 'lemon', 'mango'];

/** makeFilter makes a new filter from form (over the defaults) and adds keys; false when the form is wrong. */
export function makeFilter(form, keys = []) {
  writeForm({ ...DEFAULT_FORM, ...form });
  if (!createFilter()) return false;
  for (const key of keys) addKey(key);
  return true;
}

// costlyFalsePositive finds a word never added that the counting filter
// on show says "probably" to, and whose removal would take an added key's
// counter to 0, trying it on a copy; null when none in `limit` tries.
function costlyFalsePositive(limit = 200_000) {
  const added = [...state.keyCounts.keys()];
  for (let i = 0; i < limit; i++) {
    const key = `${FRUITS[i % FRUITS.length]}-${i}`;
    if (state.keyCounts.has(key) || !state.filter.has(key)) continue;
    const copy = fromBytes(state.filter.toBytes(), { maxBits: MAX_BITS });
    try {
      copy.remove(key);
      if (added.some((k) => !copy.has(k))) return key;
    } finally {
      copy.free();
    }
  }
  return null;
}

const show = (id) => $(id).scrollIntoView({ block: 'start' });

/** What each step of the tour sets up (by its number, from 1). */
export const SETUPS = {
  1: () => {
    makeFilter({ n: '100', p: '1%' });
    $('sizemath-box').open = true;
  },
  2: () => {
    makeFilter({}, ['apple']);
    $('key').value = 'apple';
  },
  3: () => {
    makeFilter({}, ['apple', 'banana', 'cherry']);
    $('key').value = 'grape';
    testKey('grape');
  },
  4: async () => {
    makeFilter({ sizing: 'mk', n: '6', m: '64', k: '3' }, FRUITS);
    await findFalsePositive();
  },
  5: () => {
    makeFilter({});
    show('tradeoff');
    $('measure-all').click();
  },
  6: async () => {
    makeFilter({ sizing: 'mk', n: '3', m: '125', k: '4' }, SMALL_KEYS);
    show('patterns');
    await runPatterns(setBusy);
  },
  7: () => {
    makeFilter({ kind: 'counting', sizing: 'mk', n: '6', m: '40', k: '3' }, FRUITS);
    const fp = costlyFalsePositive();
    if (!fp) return;
    $('key').value = fp;
    removeKey(fp);
    $('verdict').prepend(
      el('p', {
        class: 'help',
        text: `"${fp}" was never added, yet the filter says "probably": a false positive, typed and Remove pressed. Press "Remove anyway…" to see what its removal costs.`,
      }),
    );
  },
};

/** setUpStep runs the set-up of step (from 1), with the page's buttons held while it runs. */
export async function setUpStep(step) {
  await SETUPS[step]?.();
}

// ---------- the address ----------

let applying = false;
let pending = 0;
let push = false;

/** addressNow writes the page as it is now: the form that made the filter, its keys, the tour's step. */
export function addressNow() {
  const form = state.form ?? DEFAULT_FORM;
  return addressOf({
    kind: form.kind,
    sizing: form.sizing,
    n: form.n,
    p: form.p,
    m: form.m,
    k: form.k,
    keys: state.typedKeys,
    anyway: state.kind === 'counting' ? [...state.forcedKeys] : [],
    step: tourStep(),
  });
}

/**
 * keepAddress rewrites the address once the change under way is done: a
 * new entry of the history when asNew (a new filter, a step of the tour),
 * else the entry on show. A filter opened from a file cannot be written
 * in an address: then the address is left as it was.
 */
export function keepAddress(asNew = false) {
  if (applying) return;
  push ||= asNew;
  clearTimeout(pending);
  pending = setTimeout(() => {
    const asEntry = push;
    push = false;
    if (state.fromFile || !state.filter) return;
    const url = `${location.pathname}${addressNow()}${location.hash}`;
    if (url === `${location.pathname}${location.search}${location.hash}`) return;
    if (asEntry) history.pushState(null, '', url);
    else history.replaceState(null, '', url);
  }, 0);
}

/**
 * applyAddress rebuilds the page from the address: its form and keys, the
 * keys removed anyway, and the tour's step, set up as the step's button
 * does when the address names no filter of its own. Wrong parameters are
 * named above the page; the rest is used.
 */
export function applyAddress(search = location.search) {
  const { state: a, errors } = parseAddress(search);
  $('link-err').textContent = errors.length ? `${errors.join(' ')} The page uses its own value for each.` : '';
  applying = true;
  let setUp = false;
  try {
    const form = {};
    for (const name of ['kind', 'sizing', 'n', 'p', 'm', 'k']) if (a[name] !== undefined) form[name] = String(a[name]);
    const own = Object.keys(form).length > 0 || a.keys || a.anyway;
    if (!makeFilter(form, a.keys ?? [])) {
      $('link-err').textContent += ' The link names a filter this page cannot make: the page shows its default one.';
      makeFilter({});
    }
    for (const key of a.anyway ?? []) forceRemove(key);
    if (!a.step) {
      if (tourStep()) endTour();
      return Promise.resolve();
    }
    // The step's set-up (some take seconds) goes on while the page answers;
    // the address then takes in what it made, in the same entry.
    setUp = !own;
    return showStep(a.step - 1, { setUp }).finally(() => {
      applying = false;
      keepAddress(false);
    });
  } finally {
    if (!setUp) applying = false;
  }
}

/** The lesson's links, one a step, each to ?step=N. */
export function listLessons() {
  $('lessons').replaceChildren(
    ...STEPS.map((s, i) => el('li', {}, el('a', { href: `?step=${i + 1}`, text: s.title }))),
  );
}
