// The parameters: reading and checking the form, the filter's size from
// n and p (or m and k as given), and how the page shows that arithmetic.
import { BloomFilter, BlockedBloomFilter, optimal, optimalBlocks, estimateFPR, estimateBlockedFPR } from '/js/index.js';
import { ADD_BUDGET, measureRate, plan } from './measure.js';
import { rateInterval, theta } from './theory.js';
import { $, BLOCK, state } from './state.js';
import {
  ceilArg,
  el,
  fmtBytes,
  fmtInt,
  fmtRate,
  fmtSI,
  memoryNote,
  minus,
  payloadBytes,
  setError,
  withSup,
} from './format.js';

function parseCount(text) {
  const t = text.trim().replace(/[\s,_]/g, '');
  if (t === '') return NaN;
  return Number(t);
}

function parseRate(text) {
  let t = text.trim().replace(/\s/g, '');
  if (t === '') return NaN;
  let scale = 1;
  if (t.endsWith('%')) {
    t = t.slice(0, -1);
    scale = 0.01;
  }
  if (!/^[0-9.eE+-]+$/.test(t)) return NaN;
  return Number(t) * scale;
}

export function sizing() {
  return document.querySelector('input[name="sizing"]:checked').value;
}

export function chosenKind() {
  return document.querySelector('input[name="kind"]:checked').value;
}

/** readForm returns the form's choices and fields as typed: { kind, sizing, n, p, m, k }. */
export function readForm() {
  return { kind: chosenKind(), sizing: sizing(), n: $('n').value, p: $('p').value, m: $('m').value, k: $('k').value };
}

/**
 * writeForm puts choices and fields back on the form (those form gives),
 * shows the fields of its sizing, and the size they derive: Undo puts back
 * the form of the filter it brings back, a link the form it names.
 */
export function writeForm(form) {
  for (const name of ['kind', 'sizing']) {
    const radio = form[name] && document.querySelector(`input[name="${name}"][value="${form[name]}"]`);
    if (radio) radio.checked = true;
  }
  for (const id of ['n', 'p', 'm', 'k']) if (form[id] !== undefined) $(id).value = String(form[id]);
  updateFields();
  showDerived();
}

// updateFields shows the fields of the chosen sizing and kind: a split-block
// filter always has 8 hashes, so it takes no k.
export function updateFields() {
  const kind = chosenKind();
  for (const f of document.querySelectorAll('[data-sizing]')) {
    f.hidden = f.dataset.sizing !== sizing() || f.dataset.notKind === kind;
  }
  for (const e of document.querySelectorAll('.blocked-only')) e.hidden = kind !== 'blocked';
}

// theoryFPR is the expected false-positive rate after n keys of a filter of
// the given kind: Go's, through the module, for split-block filters (keys
// crowd some blocks more than others), whose count is a whole number.
export function theoryFPR(kind, m, k, n) {
  return kind === 'blocked' ? estimateBlockedFPR(m / BLOCK, Math.round(n)) : estimateFPR(m, k, n);
}

// readParams validates the form and returns { n, m, k, p } or null, with
// messages next to the fields that are wrong.
export function readParams() {
  const mode = sizing();
  let ok = true;
  const n = parseCount($('n').value);
  if (!Number.isFinite(n) || !Number.isInteger(n) || n < 1 || n > Number.MAX_SAFE_INTEGER) {
    setError(
      'n',
      n === 0
        ? 'n must be at least 1: a filter for no keys has nothing to do.'
        : 'Enter a whole number of keys, at least 1.',
    );
    ok = false;
  } else setError('n');
  let m;
  let k;
  let p;
  const blocked = chosenKind() === 'blocked';
  if (mode === 'np') {
    p = parseRate($('p').value);
    if (!(p > 0 && p < 1)) {
      setError(
        'p',
        Number.isNaN(p)
          ? 'Enter a rate such as 0.01 or 1%.'
          : 'p must be more than 0 and less than 1: a filter that is never wrong needs infinitely many bits, and p = 1 is no filter at all.',
      );
      ok = false;
    } else setError('p');
    setError('m');
    setError('k');
    if (!ok) return null;
    ({ bits: m, hashes: k } = optimal(n, p));
    if (blocked) {
      // Go sizes split-block filters (the module's optimalBlocks).
      try {
        [m, k] = [BLOCK * optimalBlocks(n, p), 8];
      } catch (err) {
        setError('n', err.message);
        return null;
      }
    }
  } else if (blocked) {
    setError('p');
    setError('k');
    m = parseCount($('m').value);
    k = 8;
    if (!Number.isInteger(m) || m < BLOCK || m % BLOCK !== 0 || m > Number.MAX_SAFE_INTEGER) {
      setError(
        'm',
        'A split-block filter is made of 256-bit blocks: enter a multiple of 256, such as 256, 1024 or 2048.',
      );
      return null;
    }
    setError('m');
  } else {
    setError('p');
    m = parseCount($('m').value);
    k = parseCount($('k').value);
    if (!Number.isInteger(m) || m < 1 || m > Number.MAX_SAFE_INTEGER) {
      setError('m', 'Enter a whole number of bits, at least 1.');
      ok = false;
    } else setError('m');
    if (!Number.isInteger(k) || k < 1 || k > 64) {
      setError('k', 'k must be a whole number from 1 to 64.');
      ok = false;
    } else setError('k');
    if (!ok) return null;
  }
  return { n, m, k, p };
}

export function showDerived() {
  const dl = $('derived');
  dl.replaceChildren();
  $('sizemath').replaceChildren();
  if (!state.ready && chosenKind() === 'blocked') {
    // Go sizes split-block filters; the page asks it once the engine is loaded.
    dl.append(el('dt', { text: 'Derived' }), el('dd', { text: 'once the filter engine has loaded' }));
    return null;
  }
  const params = readParams();
  if (!params) {
    dl.append(el('dt', { text: 'Derived' }), el('dd', { text: 'fix the fields above' }));
    return null;
  }
  const { n, m, k } = params;
  const kind = chosenKind();
  const unit = kind === 'counting' ? 'counters' : 'bits';
  const saved = payloadBytes(kind, m) + 72;
  const rows = [
    [kind === 'counting' ? 'Counters m' : 'Bits m', m >= 1e4 ? `${fmtInt(m)} (${fmtSI(m, unit)})` : fmtInt(m)],
    ['In memory', memoryNote(kind, m)],
    ['Saved size', `${fmtBytes(saved)}: those, a 64-byte header and an 8-byte checksum`],
    ...(kind === 'blocked' ? [['Blocks', `${fmtInt(m / BLOCK)} of 256 bits (32 bytes)`]] : []),
    ['Hashes k', kind === 'blocked' ? "8, one bit in each 32-bit word of the key's block" : fmtInt(k)],
    [kind === 'counting' ? 'Counters per key' : 'Bits per key', (m / n).toFixed(2)],
    [`False-positive rate after ${fmtInt(n)} keys`, `${fmtRate(theoryFPR(kind, m, k, n))} (theory)`],
  ];
  for (const [t, d] of rows) dl.append(el('dt', { text: t }), el('dd', { text: d, 'data-name': t }));
  const measured = el('dd', { 'data-name': 'Measured', text: 'measuring…' });
  dl.append(el('dt', { text: 'Measured' }), measured);
  scheduleMeasure(measured, kind, m, k, n);
  showSizeMath(kind, sizing(), params);
  return params;
}

// scheduleMeasure measures the rate after n keys at m and k, the way
// theory states it, on filters built from fresh keys, once the fields rest
// for 300 ms.
let measureTimer = 0;
function scheduleMeasure(dd, kind, m, k, n) {
  clearTimeout(measureTimer);
  if (n > ADD_BUDGET || m > 2 ** 24) {
    dd.textContent = `not here: the page measures up to ${fmtInt(ADD_BUDGET)} keys and ${fmtSI(2 ** 24, 'bits')} (section 3 measures at this m)`;
    return;
  }
  if (!state.ready) {
    dd.textContent = 'once the filter engine has loaded';
    return;
  }
  measureTimer = setTimeout(() => {
    if (!dd.isConnected) return;
    const make =
      kind === 'blocked'
        ? () => new BlockedBloomFilter({ blocks: m / BLOCK })
        : () => new BloomFilter({ bits: m, hashes: k });
    const r = measureRate(make, { n, ...plan(m, kind === 'blocked' ? 8 : k, n) });
    const rate = r.hits / r.probes;
    let verdict = '';
    if (kind !== 'blocked') {
      const [lo, hi] = rateInterval(theta(m, k, n), { m, k, n, probes: r.probes, filters: r.filters });
      verdict =
        rate >= lo && rate <= hi
          ? ', within the 99 % range of theory'
          : `, outside the 99 % range of theory (${fmtRate(lo)} to ${fmtRate(hi)}): see section 5`;
    }
    dd.textContent = `${fmtRate(rate)} (${fmtInt(r.hits)} of ${fmtInt(r.probes)} fresh keys, against ${fmtInt(r.filters)} ${r.filters === 1 ? 'filter' : 'filters'} of ${fmtInt(n)} fresh keys)${verdict}`;
  }, 300);
}

// ---------- the arithmetic of the size ----------

// num writes a real number with four significant digits, as the steps of
// the arithmetic show it.
function num(x) {
  if (Number.isInteger(x)) return minus(fmtInt(x));
  const a = Math.abs(x);
  if (a !== 0 && (a < 1e-3 || a >= 1e7)) {
    const [mant, exp] = x.toExponential(3).split('e');
    return `${minus(mant)} × 10^(${minus(Number(exp))})`;
  }
  return minus(Number(x.toPrecision(4)));
}

// eq is one line of arithmetic: a name, then "= step" for each step; the
// last step is the result, marked with data-result="name" for whoever
// reads the page (and its tests).
function eq(name, steps, result) {
  const p = el('p', { class: 'eq' }, el('var', { text: name }));
  for (const s of steps) p.append(' = ', ...withSup(s));
  p.append(' = ', el('b', { text: result.text, 'data-result': name }));
  if (result.unit) p.append(` ${result.unit}`);
  return p;
}

// showSizeMath shows how n and p give m and k (or, for an m and k given, the
// rate they reach), with the numbers on the form.
function showSizeMath(kind, mode, { n, m, k, p }) {
  const box = $('sizemath');
  const unit = kind === 'counting' ? 'counters' : 'bits';
  const parts = [];
  if (kind === 'blocked') {
    const b = m / BLOCK;
    const lambda = n / b;
    parts.push(
      el('p', {
        text: 'A split-block filter always sets k = 8 bits, one in each 32-bit word of one 256-bit block. Keys crowd some blocks more than others: a block holds j keys with the Poisson probability of mean λ = n / b, so its rate is a sum over j:',
      }),
      el('p', { class: 'eq formula', text: 'rate = Σⱼ Poisson(j; λ) · (1 − (31/32)ʲ)⁸' }),
    );
    if (mode === 'np') {
      parts.push(
        el(
          'p',
          {},
          ...withSup(
            `Go's OptimalBlocks picks the smallest number of blocks b whose rate after n = ${fmtInt(n)} keys is at most 0.9 · p = ${num(0.9 * p)} (the margin absorbs a real filter's scatter):`,
          ),
        ),
      );
    }
    parts.push(
      eq('b', [], { text: fmtInt(b), unit: b === 1 ? 'block' : 'blocks' }),
      eq('m', [`256 × ${fmtInt(b)}`], { text: fmtInt(m), unit: 'bits' }),
      eq('λ', [`n / b = ${fmtInt(n)} / ${fmtInt(b)}`], { text: num(lambda), unit: 'keys a block on average' }),
      eq('rate', [], { text: fmtRate(theoryFPR('blocked', m, 8, n)) }),
      eq('k', [], { text: '8' }),
    );
  } else {
    const ln2 = Math.LN2;
    if (mode === 'np') {
      const raw = (-n * Math.log(p)) / (ln2 * ln2);
      const kr = (m / n) * ln2;
      parts.push(
        el('p', {
          text: `For n keys at error rate p, the fewest ${unit} are m = −n ln p / (ln 2)², rounded up; with m fixed, the rate is lowest for k = (m / n) ln 2 hashes, rounded:`,
        }),
        eq(
          'm',
          [
            `⌈−n · ln p / (ln 2)²⌉`,
            `⌈−${fmtInt(n)} × ln ${num(p)} / ${num(ln2 * ln2)}⌉`,
            `⌈−${fmtInt(n)} × (${num(Math.log(p))}) / ${num(ln2 * ln2)}⌉`,
            `⌈${ceilArg(raw)}⌉`,
          ],
          { text: fmtInt(m), unit },
        ),
        eq('k', ['round((m / n) · ln 2)', `round(${fmtInt(m)} / ${fmtInt(n)} × ${num(ln2)})`, `round(${num(kr)})`], {
          text: fmtInt(k),
          unit: k === 1 ? 'hash' : 'hashes',
        }),
      );
    } else {
      const best = Math.max(1, Math.round((m / n) * ln2));
      parts.push(
        el('p', {
          text: `You chose m and k. For n = ${fmtInt(n)} keys the best k for this m would be round((m / n) · ln 2) = round(${fmtInt(m)} / ${fmtInt(n)} × ${num(ln2)}) = ${fmtInt(best)}.`,
        }),
        eq('m', [], { text: fmtInt(m), unit }),
        eq('k', [], { text: fmtInt(k), unit: k === 1 ? 'hash' : 'hashes' }),
      );
    }
    const e = Math.exp((-k * n) / m);
    parts.push(
      el(
        'p',
        {},
        ...withSup(
          `After n keys, a ${kind === 'counting' ? 'counter' : 'bit'} is still 0 with probability e^(−k·n/m), and a key never added finds all k of its positions set with probability:`,
        ),
      ),
      eq(
        'rate',
        [
          '(1 − e^(−k·n/m))^k',
          `(1 − e^(−${fmtInt(k)} × ${fmtInt(n)} / ${fmtInt(m)}))^${fmtInt(k)}`,
          `(1 − ${num(e)})^${fmtInt(k)}`,
        ],
        { text: fmtRate(theoryFPR(kind, m, k, n)) },
      ),
    );
  }
  box.replaceChildren(...parts);
}
