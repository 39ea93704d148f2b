// The rate of the filter on show, three ways: the estimate from its bits
// ((set / m)^k), its exact rate (the share of the m² start pairs whose
// positions are all set, for a small classic or counting filter), and the
// rate measured on fresh keys, with how many were tried; and, when the
// measurement leaves the estimate's 99 % range, why.
import { $, bitWord, state } from './state.js';
import { el, fmtInt, fmtRate } from './format.js';
import { PAIR_LIMIT, exactRate, patternKey, rateInterval } from './theory.js';
import { countHits, probesFor } from './measure.js';
import { valueAt } from './grid.js';

let timer = 0;

/** scheduleNow measures the filter on show once the page is idle for 200 ms (a burst of adds measures once). */
export function scheduleNow() {
  clearTimeout(timer);
  const box = $('now-rate');
  box.dataset.state = 'measuring';
  timer = setTimeout(measureNow, 200);
}

/** The patterns (patternKey) of the keys added on this page, each with its key: at most 5,000 keys. */
export function addedPatterns() {
  const out = new Map();
  const f = state.filter;
  for (const key of [...state.keyCounts.keys()].slice(0, 5000)) out.set(patternKey(f.positions(key)), key);
  return out;
}

/** exactNow returns exactRate for the filter on show, or null for a kind or size it does not cover. */
export function exactNow(patterns = new Map()) {
  const { kind, m, k, filter } = state;
  if (!(kind === 'classic' || kind === 'counting') || m > PAIR_LIMIT) return null;
  const bytes = filter.toBytes();
  const set = new Uint8Array(m);
  for (let i = 0; i < m; i++) set[i] = valueAt(bytes, kind, i) ? 1 : 0;
  return exactRate((i) => set[i] === 1, m, k, new Set(patterns.keys()));
}

function measureNow() {
  const f = state.filter;
  const box = $('now-rate');
  if (!f) return;
  const s = f.stats();
  if (s.setBits === 0) {
    box.replaceChildren(
      el('p', { text: 'Measured now: nothing to measure; an empty filter answers "certainly not" to every key.' }),
    );
    box.dataset.state = 'measured';
    return;
  }
  const est = s.estimatedErrorRate;
  const probes = probesFor(est);
  const hits = countHits(f, probes);
  const rate = hits / probes;
  const parts = [];
  const tried = `${fmtInt(hits)} of ${fmtInt(probes)} fresh keys answered "probably"`;
  parts.push(
    el('p', {
      'data-measured': String(rate),
      text:
        hits === 0
          ? `Measured now: 0 % (${tried}), so the rate is below ${fmtRate(4.61 / probes)} with 99 % confidence.`
          : `Measured now: ${fmtRate(rate)} (${tried}).`,
    }),
  );
  const drawable = s.kind === 'classic' || s.kind === 'counting';
  const exact = drawable ? exactNow(state.added ? addedPatterns() : new Map()) : null;
  if (exact) {
    const pairs = state.m * state.m;
    parts.push(
      el('p', {
        text: `Exactly: ${fmtRate(exact.rate)}, the share of the m² = ${fmtInt(pairs)} start pairs (x, y) whose ${state.k} positions are all set${exact.repeats ? `; ${fmtRate(exact.repeats)} of it is the added keys' own patterns` : ''}.`,
      }),
    );
  }
  if (s.kind !== 'scalable' && s.kind !== 'sharded' && state.added > 0) {
    const [lo, hi] = rateInterval(est, { probes });
    const within = rate >= lo && rate <= hi;
    const verdict = `The estimate from the ${bitWord()}s set, ${fmtRate(est)}, ${within ? 'agrees with' : 'does not agree with'} the measurement within noise (its 99 % range for ${fmtInt(probes)} keys: ${fmtRate(lo)} to ${fmtRate(hi)}).`;
    parts.push(
      el('p', { class: within ? '' : 'why-differ', text: within ? verdict : `${verdict} ${whyNow(est, exact)}` }),
    );
  }
  box.replaceChildren(...parts);
  box.dataset.state = 'measured';
}

// whyNow says why the filter on show answers "probably" more (or less) often
// than its bits set predict.
function whyNow(est, exact) {
  if (exact && exact.repeats > 0.5 * Math.abs(exact.rate - est)) {
    return `Why: a small filter repeats whole patterns. A fresh key lands on exactly the positions of an added key ${fmtRate(exact.repeats)} of the time, whatever else is set; the estimate counts only ${bitWord()}s set (section 5).`;
  }
  if (exact && Math.abs(exact.rate - est) > 0.2 * est) {
    return `Why: with m = ${fmtInt(state.m)}, the ${state.k} positions of a key are not ${state.k} independent draws (they come from one start pair, and may repeat), so this filter's exact rate, ${fmtRate(exact.rate)}, is not the estimate.`;
  }
  if (state.fromFile)
    return 'Why: the keys of a filter opened from a file are not known here; the estimate assumes keys spread at random.';
  return 'Why: chance; one measurement in 100 falls outside its 99 % range.';
}
