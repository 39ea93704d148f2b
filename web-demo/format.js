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

export function fmtRate(x) {
  if (x === 0) return '0';
  if (x >= 0.001) return `${(x * 100).toPrecision(3)} %`;
  return x.toPrecision(3);
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
