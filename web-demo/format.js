// Numbers and words as the page writes them, elements, and the messages
// shown next to fields.
import { $, MAX_BITS } from './state.js';

const intFmt = new Intl.NumberFormat('en-US');
export const fmtInt = (x) => intFmt.format(x);

export function fmtSI(x, unit) {
  if (x >= 1e9) return `${(x / 1e9).toFixed(2)} G ${unit}`;
  if (x >= 1e6) return `${(x / 1e6).toFixed(2)} M ${unit}`;
  if (x >= 1e4) return `${(x / 1e3).toFixed(1)} k ${unit}`;
  return `${fmtInt(x)} ${unit}`;
}

export function fmtBytes(b) {
  if (b >= 2 ** 30) return `${(b / 2 ** 30).toFixed(3)} GiB`;
  if (b >= 2 ** 20) return `${(b / 2 ** 20).toFixed(3)} MiB`;
  if (b >= 2 ** 10) return `${(b / 2 ** 10).toFixed(2)} KiB`;
  return `${fmtInt(Math.ceil(b))} bytes`;
}

// fmtRate writes a rate (a false-positive rate, a share of bits) in one
// format everywhere on the page: a percentage with three significant
// digits, 5.00 % as 0.00168 %; below a millionth of a percent, the same
// digits times a power of ten, never in JavaScript's 1.68e-7.
const SUPERSCRIPT = { '-': '⁻', 0: '⁰', 1: '¹', 2: '²', 3: '³', 4: '⁴', 5: '⁵', 6: '⁶', 7: '⁷', 8: '⁸', 9: '⁹' };
export function fmtRate(x) {
  if (x === 0) return '0 %';
  const pct = x * 100;
  if (pct >= 1e-6) return `${pct.toPrecision(3)} %`;
  // The mantissa rounded to three digits can reach 10 (9.996 × 10⁻⁸ is
  // 1.00 × 10⁻⁷): then the power goes up by one.
  let e = Math.floor(Math.log10(pct));
  let mant = Number((pct / 10 ** e).toPrecision(3));
  if (mant >= 10) {
    e += 1;
    mant /= 10;
  }
  return `${mant.toFixed(2)} × ${powerOfTen(e)} %`;
}

/** powerOfTen writes 10^e with a superscript exponent and a true minus: 10⁻⁸. */
export function powerOfTen(e) {
  return `10${String(e).replace(/./g, (c) => SUPERSCRIPT[c])}`;
}

/** minus writes a number's minus sign as the minus "−" (U+2212), not the hyphen "-". */
export const minus = (text) => String(text).replace(/^-/, '−');

// fmtPercentTick writes a chart's tick at 10^e (e ≤ 0) as a percentage:
// 100 %, 10 %, 1 %, 0.1 %, 0.01 %, 0.001 %, 10⁻⁴ %.
// Below 0.001 % a tick is a power of ten (10⁻⁶ %), which stays short
// enough for the axis instead of 0.000001 %.
export function fmtPercentTick(e) {
  if (e + 2 < -3) return `${powerOfTen(e + 2)} %`;
  return `${(10 ** (e + 2)).toFixed(Math.max(0, -(e + 2)))} %`;
}

/** fmtTick writes a tick at a rate that is 1, 2 or 5 times a power of ten as a percentage: 20 %, 0.05 %, 5 × 10⁻⁶ %. */
export function fmtTick(v) {
  const e = Math.floor(Math.log10(v) + 1e-9);
  const f = Math.round(v / 10 ** e);
  if (f === 1) return fmtPercentTick(e);
  if (e + 2 < -3) return `${f} × ${powerOfTen(e + 2)} %`;
  return `${(f * 10 ** (e + 2)).toFixed(Math.max(0, -(e + 2)))} %`;
}

// payloadBytes returns the bytes that m bits (or 4-bit counters) of a
// filter of kind take, in memory and in the saved form: whole 64-bit
// words, or whole 32-byte blocks for a split-block filter (docs/format.md).
export function payloadBytes(kind, m) {
  if (kind === 'counting') return 8 * Math.ceil(m / 16);
  if (kind === 'blocked') return m / 8;
  return 8 * Math.ceil(m / 64);
}

// memoryNote says what m bits (or counters) of kind take, and why.
export function memoryNote(kind, m) {
  const bytes = fmtBytes(payloadBytes(kind, m));
  if (kind === 'counting') return `${bytes}: ${fmtInt(m)} counters of 4 bits, in whole 64-bit words`;
  if (kind === 'blocked') return `${bytes}: 32 bytes a block`;
  return `${bytes}: ${fmtInt(m)} bits, in whole 64-bit words`;
}

// sizeNote says how long the filter of stats s is saved (toBytes, the
// download), and what the bytes beyond its bits are.
export function sizeNote(s) {
  const saved = fmtBytes(s.byteLength);
  if (s.kind === 'classic' || s.kind === 'counting' || s.kind === 'blocked') {
    const unit = s.kind === 'counting' ? 'counters' : 'bits';
    const words = s.kind === 'blocked' ? 'whole 32-byte blocks' : 'whole 64-bit words';
    return `${saved}: ${fmtBytes(payloadBytes(s.kind, s.bits))} of ${unit} (m = ${fmtInt(s.bits)}, in ${words}), a 64-byte header and an 8-byte checksum`;
  }
  return `${saved}: the bits, and a 64-byte header and an 8-byte checksum for the filter and for each of its parts`;
}

/**
 * ceilArg writes x, about to be rounded up, with as many decimals as show
 * that it is not whole (2 to 6, cut, not rounded): ⌈9585.06⌉ = 9,586, never
 * ⌈9585⌉ = 9,586.
 */
export function ceilArg(x) {
  if (Number.isInteger(x)) return fmtInt(x);
  const whole = Math.floor(x);
  let d = 2;
  while (d < 6 && Math.floor((x - whole) * 10 ** d) === 0) d++;
  const frac = String(Math.floor((x - whole) * 10 ** d)).padStart(d, '0');
  return `${fmtInt(whole)}.${frac}`;
}

export function list(items) {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

export function el(tag, props = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else if (k.startsWith('data-')) e.setAttribute(k, v);
    else e[k] = v;
  }
  for (const c of children) e.append(c);
  return e;
}

export function keyName(key) {
  return el('q', { class: 'kname', text: key });
}

// The kind as the page names it.
export function kindName(kind) {
  return kind === 'blocked' ? 'split-block' : kind;
}

// ---------- errors next to fields ----------

export function setError(field, message) {
  const input = $(field);
  $(`${field}-err`).textContent = message ?? '';
  if (message) input.setAttribute('aria-invalid', 'true');
  else input.removeAttribute('aria-invalid');
}

export const FILE_ERRORS = {
  ERR_NOT_FILTER: 'This file is not an edgebloom filter: it does not start with the "EBLM" signature.',
  ERR_TRUNCATED: 'This file is cut short: it is smaller than the filter it describes.',
  ERR_CHECKSUM: 'This file is damaged: its checksum does not match its contents.',
  ERR_CORRUPT: 'This file is damaged: its header does not make sense.',
  ERR_VERSION: 'This filter was written by a newer version of the format than this page reads.',
  ERR_KIND: 'This file holds a kind of filter this page does not know.',
  ERR_TOO_LARGE: `This filter is larger than the page opens (${fmtSI(MAX_BITS, 'bits')}).`,
  ERR_UNSUPPORTED: 'This file uses a hash scheme this page does not know.',
};

// ---------- formulas ----------

/**
 * The pieces of a formula written with ^ as the page shows it, with
 * superscripts: "e^(−kn/m)" is [["e", false], ["−kn/m", true]], "x^k" is
 * [["x", false], ["k", true]]. An exponent is a parenthesized group (its
 * parentheses dropped) or a run of letters, digits and *.
 */
export function supParts(text) {
  const out = [];
  let plain = '';
  for (let i = 0; i < text.length; i++) {
    if (text[i] !== '^') {
      plain += text[i];
      continue;
    }
    let sup;
    if (text[i + 1] === '(') {
      let depth = 0;
      let j = i + 1;
      for (; j < text.length; j++) {
        if (text[j] === '(') depth++;
        else if (text[j] === ')' && --depth === 0) break;
      }
      sup = text.slice(i + 2, j);
      i = j;
    } else {
      let j = i + 1;
      while (j < text.length && /[\p{L}\p{N}*]/u.test(text[j])) j++;
      sup = text.slice(i + 1, j);
      i = j - 1;
    }
    if (plain) out.push([plain, false]);
    out.push([sup, true]);
    plain = '';
  }
  if (plain) out.push([plain, false]);
  return out;
}

/** The nodes of a formula written with ^: text, and <sup> for each exponent. */
export function withSup(text) {
  return supParts(text).map(([t, sup]) => (sup ? el('sup', { text: t }) : t));
}
