// The demo page. Everything a filter does here is done by the npm module,
// loaded through its browser entry (/js/index.js, served by serve.js); the
// page only reads the filter's bytes to draw its bits and counters.
import { init, BloomFilter, CountingBloomFilter, BlockedBloomFilter, fromBytes, optimal, estimateFPR } from '/js/index.js';

const $ = (id) => document.getElementById(id);

// Up to CELL_LIMIT bits the grid draws one cell per bit; above it, each of
// DENSITY_CELLS cells stands for a run of bits, shaded by how many are set.
const CELL_LIMIT = 2048;
const DENSITY_CELLS = 1024;
// The largest filter the page makes or opens: 2^26 bits is 8 MiB as bits
// and 32 MiB as counters, which a phone still handles.
const MAX_BITS = 2 ** 26;
const HEADER = 64;
const PROBES = 1000;
// A split-block filter's block: 8 words of 32 bits.
const BLOCK = 256;
const WORD = 32;

const state = {
  filter: null,
  kind: 'classic',
  m: 0,
  k: 0,
  fromFile: '', // the file name when the filter was opened from a file
  added: 0, // keys added (from a file: its count, then the page's adds and removals)
  keyCounts: new Map(), // key → times added on this page
  typedKeys: [], // keys typed into the page, in order, for the list
  bulkKeys: 0,
  bulkRepeats: 0,
  bitKeys: new Map(), // position → keys added on this page whose positions include it
  history: [], // chart points: { n, fill, est, measured }
  cells: [],
  density: false,
  block: -1, // split-block filters above CELL_LIMIT bits: the one block the grid shows
  highlight: new Map(), // cell index → class
  busy: false,
  ready: false, // the engine is loaded
};

// ---------- formatting ----------

const intFmt = new Intl.NumberFormat('en-US');
const fmtInt = (x) => intFmt.format(x);

function fmtSI(x, unit) {
  if (x >= 1e9) return `${(x / 1e9).toFixed(2)} G ${unit}`;
  if (x >= 1e6) return `${(x / 1e6).toFixed(2)} M ${unit}`;
  if (x >= 1e4) return `${(x / 1e3).toFixed(1)} k ${unit}`;
  return `${fmtInt(x)} ${unit}`;
}

function fmtBytes(b) {
  if (b >= 2 ** 30) return `${(b / 2 ** 30).toFixed(3)} GiB`;
  if (b >= 2 ** 20) return `${(b / 2 ** 20).toFixed(3)} MiB`;
  if (b >= 2 ** 10) return `${(b / 2 ** 10).toFixed(2)} KiB`;
  return `${fmtInt(Math.ceil(b))} bytes`;
}

function fmtRate(x) {
  if (x === 0) return '0';
  if (x >= 0.001) return `${(x * 100).toPrecision(3)} %`;
  return x.toPrecision(3);
}

function list(items) {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

function el(tag, props = {}, ...children) {
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

function keyName(key) {
  return el('q', { class: 'kname', text: key });
}

// ---------- errors next to fields ----------

function setError(field, message) {
  const input = $(field);
  $(`${field}-err`).textContent = message ?? '';
  if (message) input.setAttribute('aria-invalid', 'true');
  else input.removeAttribute('aria-invalid');
}

const FILE_ERRORS = {
  ERR_NOT_FILTER: 'This file is not an edgebloom filter: it does not start with the "EBLM" signature.',
  ERR_TRUNCATED: 'This file is cut short: it is smaller than the filter it describes.',
  ERR_CHECKSUM: 'This file is damaged: its checksum does not match its contents.',
  ERR_CORRUPT: 'This file is damaged: its header does not make sense.',
  ERR_VERSION: 'This filter was written by a newer version of the format than this page reads.',
  ERR_KIND: 'This file holds a kind of filter this page does not know.',
  ERR_TOO_LARGE: `This filter is larger than the page opens (${fmtSI(MAX_BITS, 'bits')}).`,
  ERR_UNSUPPORTED: 'This file uses a hash scheme this page does not know.',
};

// ---------- parameters ----------

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

function sizing() {
  return document.querySelector('input[name="sizing"]:checked').value;
}

function chosenKind() {
  return document.querySelector('input[name="kind"]:checked').value;
}

// updateFields shows the fields of the chosen sizing and kind: a split-block
// filter always has 8 hashes, so it takes no k.
function updateFields() {
  const kind = chosenKind();
  for (const f of document.querySelectorAll('[data-sizing]')) {
    f.hidden = f.dataset.sizing !== sizing() || f.dataset.notKind === kind;
  }
  for (const e of document.querySelectorAll('.blocked-only')) e.hidden = kind !== 'blocked';
}

// blockedBits returns m of the split-block filter Go sizes for n keys at
// rate p, by making one: the page does not repeat Go's sizing rule. Above
// what the page makes it returns the classic m, which is smaller, so the
// caller refuses it all the same.
function blockedBits(n, p) {
  const classic = optimal(n, p).bits;
  if (classic > MAX_BITS) return classic;
  const probe = new BlockedBloomFilter({ capacity: n, errorRate: p });
  const m = probe.bits;
  probe.free();
  return m;
}

// blockedFPR is the expected false-positive rate of a split-block filter of
// `blocks` blocks after n keys (docs/format.md): a block holds a Poisson
// number j of keys, and a key never added finds its bit set in all 8 words
// of its block with probability (1 - (31/32)^j)^8. Crowded blocks answer
// wrongly more often than empty ones save, which is why this is above the
// classic (1 - e^(-kn/m))^k for the same m.
function blockedFPR(blocks, n) {
  const lambda = n / blocks;
  if (!(lambda > 0)) return 0;
  let sum = 0;
  let logFact = 0;
  for (let j = 0; j <= lambda + 12 * Math.sqrt(lambda) + 40; j++) {
    if (j > 1) logFact += Math.log(j);
    const pmf = Math.exp(j * Math.log(lambda) - lambda - logFact);
    sum += pmf * (1 - (31 / 32) ** j) ** 8;
  }
  return Math.min(sum, 1);
}

// theoryFPR is the expected false-positive rate after n keys of a filter of
// the current kind.
function theoryFPR(kind, m, k, n) {
  return kind === 'blocked' ? blockedFPR(m / BLOCK, n) : estimateFPR(m, k, n);
}

// readParams validates the form and returns { n, m, k } or null, with
// messages next to the fields that are wrong.
function readParams() {
  const mode = sizing();
  let ok = true;
  const n = parseCount($('n').value);
  if (!Number.isFinite(n) || !Number.isInteger(n) || n < 1 || n > Number.MAX_SAFE_INTEGER) {
    setError('n', n === 0 ? 'n must be at least 1: a filter for no keys has nothing to do.' : 'Enter a whole number of keys, at least 1.');
    ok = false;
  } else setError('n');
  let m;
  let k;
  let p;
  const blocked = chosenKind() === 'blocked';
  if (mode === 'np') {
    p = parseRate($('p').value);
    if (!(p > 0 && p < 1)) {
      setError('p', Number.isNaN(p) ? 'Enter a rate such as 0.01 or 1%.' : 'p must be more than 0 and less than 1: a filter that is never wrong needs infinitely many bits, and p = 1 is no filter at all.');
      ok = false;
    } else setError('p');
    setError('m');
    setError('k');
    if (!ok) return null;
    ({ bits: m, hashes: k } = optimal(n, p));
    if (blocked) [m, k] = [blockedBits(n, p), 8];
  } else if (blocked) {
    setError('p');
    setError('k');
    m = parseCount($('m').value);
    k = 8;
    if (!Number.isInteger(m) || m < BLOCK || m % BLOCK !== 0 || m > Number.MAX_SAFE_INTEGER) {
      setError('m', 'A split-block filter is made of 256-bit blocks: enter a multiple of 256, such as 256, 1024 or 2048.');
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

function showDerived() {
  const dl = $('derived');
  dl.replaceChildren();
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
  // A counter takes 4 bits.
  const bytes = (m / 8) * (kind === 'counting' ? 4 : 1);
  const rows = [
    ['Bits m', m >= 1e4 ? `${fmtInt(m)} (${fmtSI(m, 'bits')}, ${fmtBytes(bytes)})` : `${fmtInt(m)} (${fmtBytes(bytes)})`],
    ...(kind === 'blocked' ? [['Blocks', `${fmtInt(m / BLOCK)} of 256 bits (32 bytes)`]] : []),
    ['Hashes k', kind === 'blocked' ? '8, one bit in each 32-bit word of the key\'s block' : fmtInt(k)],
    ['Bits per key', (m / n).toFixed(2)],
    [`False-positive rate after ${fmtInt(n)} keys`, `${fmtRate(theoryFPR(kind, m, k, n))} (theory)`],
  ];
  for (const [t, d] of rows) dl.append(el('dt', { text: t }), el('dd', { text: d, 'data-name': t }));
  return params;
}

// ---------- reading bits and counters from the filter's bytes ----------

// valueAt reads bit or counter i from bytes in the documented format.
function valueAt(bytes, kind, i) {
  if (kind === 'counting') {
    const b = bytes[HEADER + Math.floor(i / 2)];
    return i % 2 === 0 ? b & 15 : b >> 4;
  }
  return (bytes[HEADER + Math.floor(i / 8)] >> i % 8) & 1;
}

// cellValues returns, for each cell of the grid, the bit or counter (one
// cell per bit) or the share of nonzero bits in its run (density view).
function cellValues() {
  const f = state.filter;
  const bytes = f.toBytes();
  const { m, kind } = state;
  if (state.block >= 0) {
    const first = BLOCK * state.block;
    return Uint8Array.from({ length: BLOCK }, (_, i) => valueAt(bytes, kind, first + i));
  }
  if (!state.density) {
    const out = new Uint8Array(m);
    for (let i = 0; i < m; i++) out[i] = valueAt(bytes, kind, i);
    return out;
  }
  const out = new Float32Array(DENSITY_CELLS);
  const counts = new Uint32Array(DENSITY_CELLS);
  const per = m / DENSITY_CELLS;
  const payload = bytes.subarray(HEADER);
  if (kind === 'counting') {
    for (let j = 0; j < payload.length; j++) {
      const b = payload[j];
      if (b === 0) continue;
      if (b & 15) counts[Math.floor((2 * j) / per)]++;
      if (b >> 4) counts[Math.floor((2 * j + 1) / per)]++;
    }
  } else {
    for (let j = 0; j < payload.length; j++) {
      let b = payload[j];
      if (b === 0) continue;
      for (let bit = 0; b; bit++, b >>= 1) if (b & 1) counts[Math.floor((8 * j + bit) / per)]++;
    }
  }
  for (let c = 0; c < DENSITY_CELLS; c++) {
    const lo = Math.ceil(c * per);
    const hi = Math.ceil((c + 1) * per);
    out[c] = hi > lo ? counts[c] / (hi - lo) : 0;
  }
  return out;
}

function cellOf(pos) {
  if (state.block >= 0) return pos - BLOCK * state.block;
  return state.density ? Math.floor((pos * DENSITY_CELLS) / state.m) : pos;
}

// ---------- the grid ----------

function buildGrid() {
  const grid = $('grid');
  grid.replaceChildren();
  state.cells = [];
  const { m, kind } = state;
  const drawable = isDrawable(kind);
  grid.hidden = !drawable;
  document.querySelector('.legend').hidden = !drawable;
  for (const e of document.querySelectorAll('.for-blocked')) e.hidden = kind !== 'blocked';
  state.block = -1;
  if (kind === 'blocked') {
    buildBlocks(m <= CELL_LIMIT ? 0 : -1);
    return;
  }
  if (!drawable) {
    $('gridcaption').textContent = `A ${kind} filter keeps several ${{ scalable: 'layers', window: 'generations' }[kind] ?? 'shards'} of bits; the page does not draw them, but it answers queries.`;
    return;
  }
  state.density = m > CELL_LIMIT;
  grid.className = `grid ${state.density ? 'dense' : m > 512 ? 'small' : ''} ${kind}`;
  const n = state.density ? DENSITY_CELLS : m;
  const per = m / DENSITY_CELLS;
  const frag = document.createDocumentFragment();
  for (let i = 0; i < n; i++) {
    const c = el('span', { class: 'c', 'data-i': String(i) });
    c.title = state.density
      ? `bits ${fmtInt(Math.ceil(i * per))}–${fmtInt(Math.ceil((i + 1) * per) - 1)}`
      : `${kind === 'counting' ? 'counter' : 'bit'} ${i}`;
    state.cells.push(c);
    frag.append(c);
  }
  grid.append(frag);
  const unit = kind === 'counting' ? 'counter' : 'bit';
  $('gridcaption').textContent = state.density
    ? `${fmtInt(m)} ${unit}s are too many to draw one by one: each square stands for about ${fmtInt(Math.round(per))} ${unit}s, darker when more of them are set.`
    : `${fmtInt(m)} ${unit}s, numbered from 0 at the top left${kind === 'counting' ? '; the digit is the counter' : ''}.`;
}

// buildBlocks draws a split-block filter: every block when it has at most
// CELL_LIMIT bits, else only block `shown` (none yet when it is -1), each as
// 8 rows, one a 32-bit word, of 32 bits.
function buildBlocks(shown) {
  const grid = $('grid');
  const { m } = state;
  const blocks = m / BLOCK;
  const all = m <= CELL_LIMIT;
  state.density = false;
  state.block = all ? -1 : shown;
  grid.className = 'grid blocked';
  const frag = document.createDocumentFragment();
  state.cells = [];
  const drawn = all ? [...Array(blocks).keys()] : shown >= 0 ? [shown] : [];
  for (const b of drawn) {
    const block = el('div', { class: 'block' });
    for (let i = 0; i < BLOCK; i++) {
      const pos = BLOCK * b + i;
      const c = el('span', { class: 'c', 'data-i': String(pos) });
      c.title = `bit ${pos}: block ${b}, word ${Math.floor(i / WORD)}, bit ${i % WORD}`;
      state.cells.push(c);
      block.append(c);
    }
    frag.append(el('div', { class: 'blockwrap', 'data-block': String(b) }, el('p', { class: 'blabel', text: `block ${fmtInt(b)}` }), block));
  }
  grid.replaceChildren(frag);
  $('gridcaption').textContent = all
    ? `${fmtInt(m)} bits in ${fmtInt(blocks)} ${blocks === 1 ? 'block' : 'blocks'} of 256; each row of a block is one 32-bit word. A key lights one block, one bit in each row.`
    : `${fmtInt(m)} bits in ${fmtInt(blocks)} blocks of 256, too many to draw. ` +
      (shown >= 0
        ? `This is block ${fmtInt(shown)}, where the last key landed; each row is one 32-bit word. A key lights one bit in each row.`
        : 'Add or test a key to see the one block it lands in.');
}

// showBlockOf makes the grid show the block of a key's positions, and
// outlines it.
function showBlockOf(positions) {
  const b = Math.floor(positions[0] / BLOCK);
  if (state.m > CELL_LIMIT && b !== state.block) buildBlocks(b);
  for (const w of document.querySelectorAll('#grid .blockwrap')) w.classList.toggle('hit', w.dataset.block === String(b));
}

function paintGrid() {
  if (!state.cells.length) return;
  const values = cellValues();
  const counting = state.kind === 'counting';
  for (let i = 0; i < state.cells.length; i++) {
    const c = state.cells[i];
    const v = values[i];
    let cls = 'c';
    if (state.density) {
      c.style.setProperty('--fill', String(v));
      if (v > 0) cls += ' set';
    } else {
      if (v) cls += ' set';
      if (counting) c.textContent = v ? String(v) : '';
    }
    const h = state.highlight.get(i);
    if (h) cls += ` ${h}`;
    if (c.className !== cls) c.className = cls;
  }
}

// highlight marks cells, animating them one after another.
function highlight(marks) {
  if (state.kind === 'blocked' && marks.length) showBlockOf(marks.map(([pos]) => pos));
  state.highlight = new Map();
  for (const c of state.cells) c.style.removeProperty('animation-delay');
  marks.forEach(([pos, cls], j) => {
    const i = cellOf(pos);
    if (!state.highlight.has(i) || cls === 'zero') state.highlight.set(i, `${cls} pulse`);
    state.cells[i]?.style.setProperty('animation-delay', `${j * 120}ms`);
  });
  // Restart the animation on cells that were already pulsing.
  for (const i of state.highlight.keys()) if (state.cells[i]) state.cells[i].className = 'c';
  void $('grid').offsetWidth;
  paintGrid();
}

// ---------- stats, key list, charts ----------

function showStats() {
  const f = state.filter;
  const s = f.stats();
  const dl = $('stats');
  dl.replaceChildren();
  const unit = s.kind === 'counting' ? 'counters' : 'bits';
  const rows = [
    ['Kind', s.kind + (state.fromFile ? ` (opened from ${state.fromFile})` : '')],
    [`Size m`, `${fmtInt(s.bits)} ${unit}`],
    ['Hashes k', s.kind === 'scalable' ? 'per layer' : fmtInt(s.hashes)],
    ['Keys added', fmtInt(state.added) + (s.count !== state.added ? ` (the filter counts ${fmtInt(s.count)}: an add whose ${bitWord()}s were all set already does not count)` : '')],
    [`${unit[0].toUpperCase()}${unit.slice(1)} set`, `${fmtInt(s.setBits)} (${fmtRate(s.fillRatio)})`],
    ['Keys estimated from the bits', s.estimatedCount.toFixed(1)],
    ['False-positive rate now', fmtRate(s.estimatedErrorRate)],
  ];
  if (s.errorRate) rows.push(['Target rate', fmtRate(s.errorRate)]);
  if (s.capacity) rows.push(['Capacity', fmtInt(s.capacity) + (s.overCapacity ? ' — over capacity: false positives are now more likely than planned' : '')]);
  if (s.kind === 'scalable') rows.push(['Layers', fmtInt(s.layers)]);
  if (s.kind === 'blocked') rows.push(['Blocks', `${fmtInt(s.bits / BLOCK)} of 256 bits`]);
  if (s.kind === 'sharded') rows.push(['Shards', fmtInt(s.layers)]);
  rows.push(['Bytes', fmtBytes(s.byteLength)]);
  for (const [t, d] of rows) dl.append(el('dt', { text: t }), el('dd', { text: d }));
  return s;
}

function showKeys() {
  const ul = $('keylist');
  ul.replaceChildren();
  let total = 0;
  for (const c of state.keyCounts.values()) total += c;
  $('keycount').textContent = fmtInt(total);
  const shown = state.typedKeys.slice(-40);
  for (const key of shown) {
    const b = el('button', { type: 'button', class: 'chip', text: key });
    b.setAttribute('aria-label', `Test ${key}`);
    b.addEventListener('click', () => {
      $('key').value = key;
      testKey(key);
    });
    ul.append(el('li', {}, b));
  }
  if (state.typedKeys.length > shown.length) ul.append(el('li', { text: `… and ${fmtInt(state.typedKeys.length - shown.length)} earlier` }));
  if (state.bulkKeys) ul.append(el('li', { text: `and ${fmtInt(state.bulkKeys)} crawler URLs` }));
}

function randomWord() {
  const a = new Uint32Array(2);
  crypto.getRandomValues(a);
  return (a[0].toString(36) + a[1].toString(36)).slice(0, 10);
}

// measure tests PROBES keys never added and returns the share reported present.
function measure() {
  const probes = [];
  while (probes.length < PROBES) {
    const key = `probe:${randomWord()}`;
    if (!state.keyCounts.has(key)) probes.push(key);
  }
  return state.filter.hasMany(probes).filter(Boolean).length / PROBES;
}

function record(s) {
  state.history.push({ n: state.added, fill: s.fillRatio, est: s.estimatedErrorRate, measured: measure() });
  if (state.history.length > 400) state.history.splice(1, 1);
}

const SVG = 'http://www.w3.org/2000/svg';
function svg(tag, attrs, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

function niceMax(x) {
  const p = 10 ** Math.floor(Math.log10(x));
  for (const s of [1, 2, 2.5, 5, 10]) if (s * p >= x) return s * p;
  return 10 * p;
}

// drawChart draws series of { points: [[x, y]], cls, dots } on an SVG.
function drawChart(node, { xmax, log, ymin, ymax, yticks, series, label }) {
  const W = 320;
  const H = 180;
  const L = 44;
  const R = 16;
  const T = 8;
  const B = 28;
  node.setAttribute('viewBox', `0 0 ${W} ${H}`);
  node.replaceChildren();
  node.append(svg('title', {}, label));
  const X = (x) => L + ((W - L - R) * x) / xmax;
  const Y = (y) => {
    const t = log ? (Math.log10(Math.max(y, ymin)) - Math.log10(ymin)) / (Math.log10(ymax) - Math.log10(ymin)) : (y - ymin) / (ymax - ymin);
    return T + (H - T - B) * (1 - Math.min(1, Math.max(0, t)));
  };
  const axes = svg('g', { class: 'axes' });
  for (const [v, text] of yticks) {
    axes.append(svg('line', { x1: L, x2: W - R, y1: Y(v), y2: Y(v), class: 'gridline' }));
    axes.append(svg('text', { x: L - 4, y: Y(v) + 4, 'text-anchor': 'end' }, text));
  }
  for (let i = 0; i <= 4; i++) {
    const v = (xmax * i) / 4;
    axes.append(svg('text', { x: X(v), y: H - B + 14, 'text-anchor': 'middle' }, fmtInt(Math.round(v))));
  }
  axes.append(svg('text', { x: W - R, y: H - 2, 'text-anchor': 'end' }, 'keys added'));
  axes.append(svg('line', { x1: L, x2: L, y1: T, y2: H - B, class: 'axis' }));
  axes.append(svg('line', { x1: L, x2: W - R, y1: H - B, y2: H - B, class: 'axis' }));
  node.append(axes);
  for (const s of series) {
    const pts = s.points.filter(([x, y]) => x <= xmax && Number.isFinite(y));
    if (!pts.length) continue;
    if (s.dots) {
      const g = svg('g', { class: s.cls });
      for (const [x, y] of pts) g.append(svg('circle', { cx: X(x).toFixed(1), cy: Y(y).toFixed(1), r: 2.5 }));
      node.append(g);
    } else {
      const d = pts.map(([x, y], i) => `${i ? 'L' : 'M'}${X(x).toFixed(1)},${Y(y).toFixed(1)}`).join('');
      node.append(svg('path', { d, class: s.cls }));
    }
  }
}

function drawCharts() {
  const { m, k, history } = state;
  const last = history[history.length - 1]?.n ?? 0;
  const cap = state.filter.capacity || 0;
  const xmax = niceMax(Math.max(10, last, cap));
  const curve = (fn) => {
    const pts = [];
    if (!k || !isDrawable(state.kind)) return pts;
    for (let i = 0; i <= 120; i++) {
      const n = (xmax * i) / 120;
      pts.push([n, fn(n)]);
    }
    return pts;
  };
  drawChart($('chart-fill'), {
    label: 'Share of bits set',
    xmax,
    ymin: 0,
    ymax: 1,
    yticks: [[0, '0'], [0.25, '25%'], [0.5, '50%'], [0.75, '75%'], [1, '100%']],
    series: [
      { cls: 'theory', points: curve((n) => -Math.expm1((-k * n) / m)) },
      { cls: 'meas', dots: true, points: history.map((h) => [h.n, h.fill]) },
    ],
  });
  const target = state.filter.errorRate || 0;
  const ymin = target ? Math.min(1e-4, 10 ** Math.floor(Math.log10(target) - 1)) : 1e-4;
  const yticks = [];
  for (let e = Math.round(Math.log10(ymin)); e <= 0; e++) yticks.push([10 ** e, e === 0 ? '1' : `1e${e}`]);
  drawChart($('chart-fpr'), {
    label: 'False-positive rate',
    xmax,
    log: true,
    ymin,
    ymax: 1,
    yticks,
    series: [
      { cls: 'theory', points: curve((n) => theoryFPR(state.kind, m, k, n)) },
      { cls: 'est', points: history.map((h) => [h.n, h.est]) },
      { cls: 'meas', dots: true, points: history.filter((h) => h.measured > 0).map((h) => [h.n, h.measured]) },
    ],
  });
}

function refresh({ recordPoint = true } = {}) {
  const s = showStats();
  if (recordPoint) record(s);
  paintGrid();
  showKeys();
  drawCharts();
  $('remove').hidden = state.kind !== 'counting';
}

// ---------- making and replacing the filter ----------

function useFilter(filter, fromFile = '') {
  state.filter?.free();
  state.filter = filter;
  const s = filter.stats();
  state.kind = s.kind;
  state.m = s.bits;
  state.k = s.hashes;
  state.fromFile = fromFile;
  state.added = s.count;
  state.keyCounts = new Map();
  state.typedKeys = [];
  state.bulkKeys = 0;
  state.bitKeys = new Map();
  state.highlight = new Map();
  state.history = [];
  buildGrid();
  refresh();
  $('verdict').replaceChildren();
  $('explain').replaceChildren();
  $('bulk-status').textContent = '';
  $('findfp').disabled = !isDrawable(s.kind);
}

function createFilter() {
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
  useFilter(new Class(opts));
  $('status').textContent = `A new, empty ${kind} filter: ${fmtInt(m)} ${kind === 'counting' ? 'counters' : 'bits'}, ${k} hashes.`;
  return true;
}

// ---------- keys ----------

function readKey() {
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

function bitWord() {
  return state.kind === 'counting' ? 'counter' : 'bit';
}

// blockSentence says where a split-block key's bits are; '' for other kinds.
function blockSentence(positions) {
  if (state.kind !== 'blocked') return '';
  const b = Math.floor(positions[0] / BLOCK);
  return ` All 8 lie in block ${fmtInt(b)} (bits ${fmtInt(BLOCK * b)}–${fmtInt(BLOCK * b + BLOCK - 1)}), one in each of its 32-bit words: one cache line to read.`;
}

function addKey(key) {
  const f = state.filter;
  const positions = f.positions(key);
  const bytes = f.toBytes();
  const before = positions.map((p) => valueAt(bytes, state.kind, p));
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
  const what =
    state.kind === 'counting'
      ? `Each of its ${positions.length} counters went up by one: ${fresh} of them had been 0 (green), ${positions.length - fresh} were already above 0 (amber).`
      : `${fresh} of its ${positions.length} bits were 0 and are now 1 (green); ${positions.length - fresh} were already 1 (amber).`;
  say(
    el('p', { class: 'verdict-head', text: `Added "${key}".` }),
    el('p', { text: `Its ${w}s: ${positions.join(', ')}. ${what}${blockSentence(positions)}` }),
    ...(isNew ? [] : [el('p', { text: `All of its ${w}s were already set, so add() answered "already there": if you had not added "${key}" before, that was a false positive.` })]),
  );
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
  box.replaceChildren(
    el('p', { text: `Why the filter says yes to "${key}": every ${bitWord()} it looks at was set by other keys.` }),
    ul,
  );
}

function testKey(key, prefix = '') {
  const f = state.filter;
  $('explain').replaceChildren();
  if (!isDrawable(state.kind)) {
    const has = f.has(key);
    say(el('p', { class: `verdict-head ${has ? 'yes' : 'no'}`, text: `${prefix}"${key}": ${has ? 'probably in the set' : 'certainly not in the set'}.` }));
    return has;
  }
  const positions = f.positions(key);
  const bytes = f.toBytes();
  const values = positions.map((p) => valueAt(bytes, state.kind, p));
  const has = f.has(key);
  const zeros = [...new Set(positions.filter((p, j) => values[j] === 0))];
  highlight(positions.map((p, j) => [p, values[j] ? 'probe' : 'zero']));
  const w = bitWord();
  if (!has) {
    const named = zeros.length === 1 ? `${w} ${zeros[0]} is 0` : `${w}s ${list(zeros.map(String))} are 0`;
    say(
      el('p', { class: 'verdict-head no', text: `${prefix}"${key}": certainly not in the set.` }),
      el('p', { text: `It looks at ${w}s ${positions.join(', ')}, and ${named} (red). Adding "${key}" would have set ${zeros.length === 1 ? 'it' : 'them'}, so it was never added.${blockSentence(positions)}` }),
    );
    return false;
  }
  const fp = !state.keyCounts.has(key) && !state.fromFile;
  const head = el('p', { class: `verdict-head ${fp ? 'maybe' : 'yes'}`, text: `${prefix}"${key}": probably in the set.` });
  const repeats = new Set(positions).size < positions.length ? ' (a position can come up twice)' : '';
  const body = `All of its ${w}s (${positions.join(', ')})${repeats} are set.${blockSentence(positions)}`;
  if (state.keyCounts.has(key)) {
    say(head, el('p', { text: `${body} And it really is: it was added on this page.` }));
  } else if (state.fromFile) {
    say(head, el('p', { text: `${body} This filter was opened from a file, so the page cannot tell whether "${key}" was added or is a false positive.` }));
  } else {
    say(head, el('p', { class: 'fp', text: `${body} But "${key}" was never added: this is a false positive.` }));
    explain(key, positions);
  }
  return true;
}

function removeKey(key) {
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
    $('verdict').append(
      el('p', { text: `The page will not remove "${key}": it was never added, and taking one off counters that other keys raised could make those keys look absent (a false negative).` }),
    );
    return;
  }
  f.remove(key);
  state.added--;
  forget(key, positions);
  refresh();
  highlight(positions.map((p) => [p, 'dec']));
  say(
    el('p', { class: 'verdict-head', text: `Removed "${key}".` }),
    el('p', { text: `Counters ${positions.join(', ')} each went down by one. A classic filter cannot do this: clearing a bit could erase other keys that share it.` }),
  );
}

// ---------- false positives and bulk ----------

const WORDS = ['apple', 'river', 'cloud', 'tiger', 'lemon', 'piano', 'rocket', 'maple', 'coral', 'ember', 'falcon', 'garden', 'harbor', 'island', 'jungle', 'kettle', 'lantern', 'meadow', 'nectar', 'orbit'];

const tick = () => new Promise((r) => setTimeout(r, 0));

function setBusy(busy) {
  state.busy = busy;
  for (const id of ['create', 'bulk', 'bulksize', 'findfp', 'add', 'test', 'remove', 'file', 'download']) $(id).disabled = busy;
  if (busy) document.body.setAttribute('aria-busy', 'true');
  else document.body.removeAttribute('aria-busy');
  if (!busy) $('findfp').disabled = !isDrawable(state.kind);
}

async function findFalsePositive() {
  setError('key');
  if (state.filter.count === 0) {
    $('explain').replaceChildren();
    say(el('p', { class: 'verdict-head', text: 'Add a few keys first: an empty filter says "no" to everything, and it is always right.' }));
    return;
  }
  setBusy(true);
  try {
    const limit = 200_000;
    for (let tries = 0; tries < limit; ) {
      const batch = [];
      for (let i = 0; i < 2000; i++) {
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
    say(el('p', { class: 'verdict-head', text: `No false positive in ${fmtInt(limit)} fresh keys: at this fill level the filter is rarely wrong. Add more keys and try again.` }));
  } finally {
    setBusy(false);
  }
}

const HOSTS = ['news.example.com', 'shop.example.org', 'blog.example.net', 'docs.example.io', 'forum.example.com', 'wiki.example.org'];
const SECTIONS = ['article', 'product', 'post', 'page', 'thread', 'item', 'tag', 'category'];

function crawlerURL() {
  const host = HOSTS[Math.floor(Math.random() * HOSTS.length)];
  const section = SECTIONS[Math.floor(Math.random() * SECTIONS.length)];
  const slug = `${WORDS[Math.floor(Math.random() * WORDS.length)]}-${WORDS[Math.floor(Math.random() * WORDS.length)]}`;
  const id = Math.floor(Math.random() * 1e7);
  const query = Math.random() < 0.3 ? `?page=${1 + Math.floor(Math.random() * 9)}` : '';
  return `https://${host}/${section}/${slug}-${id}${query}`;
}

async function bulkInsert(total = 1000, steps = 20) {
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
    $('bulk-status').textContent = `Done: added ${fmtInt(total)} URLs.${repeats} Now ${fmtRate(s.fillRatio)} of ${bitWord()}s are set; false-positive rate ${fmtRate(s.estimatedErrorRate)} estimated, ${fmtRate(last.measured)} measured on ${fmtInt(PROBES)} fresh keys.`;
  } finally {
    setBusy(false);
  }
}

// ---------- files ----------

// Classic, counting and split-block filters are drawn bit by bit; scalable filters
// (layers) and sharded containers (a Worker's snapshot) only answer queries.
function isDrawable(kind) {
  return kind === 'classic' || kind === 'counting' || kind === 'blocked';
}

function download() {
  const s = state.filter.stats();
  const blob = new Blob([state.filter.toBytes()], { type: 'application/octet-stream' });
  const a = el('a', { href: URL.createObjectURL(blob), download: `edgebloom-${s.kind}-m${s.bits}-k${s.hashes}-n${s.count}.bloom` });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
}

async function openFile(file) {
  setError('file');
  const info = $('fileinfo');
  info.replaceChildren();
  let filter;
  try {
    const bytes = new Uint8Array(await file.arrayBuffer());
    filter = fromBytes(bytes, { maxBits: MAX_BITS });
  } catch (err) {
    setError('file', FILE_ERRORS[err.code] ?? `This file cannot be opened: ${err.message}`);
    info.replaceChildren();
    return;
  }
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
  $('status').textContent = `Opened ${file.name}: a ${s.kind} filter with ${fmtInt(s.count)} keys. Test keys in section 2.`;
}

// ---------- wiring ----------

function guard(field, fn) {
  return (...args) => {
    try {
      return fn(...args);
    } catch (err) {
      setError(field, err.message);
      return undefined;
    }
  };
}

function wire() {
  const params = $('params');
  params.addEventListener('input', () => showDerived());
  params.addEventListener('change', (e) => {
    if (e.target.name === 'kind') {
      updateFields();
      showDerived();
    }
    if (e.target.name === 'sizing') {
      updateFields();
      if (sizing() === 'mk') {
        // Start m and k from the current filter, so that switching is smooth.
        if (state.m && !$('m').dataset.touched) {
          $('m').value = String(state.m);
          $('k').value = String(state.k || 1);
        }
      }
      showDerived();
    }
  });
  for (const id of ['m', 'k']) $(id).addEventListener('input', () => ($(id).dataset.touched = '1'));
  params.addEventListener('submit', guard('n', (e) => {
    e.preventDefault();
    createFilter();
  }));
  $('keyform').addEventListener('submit', guard('key', (e) => {
    e.preventDefault();
    const key = readKey();
    if (key !== null) addKey(key);
  }));
  $('test').addEventListener('click', guard('key', () => {
    const key = readKey();
    if (key !== null) testKey(key);
  }));
  $('remove').addEventListener('click', guard('key', () => {
    const key = readKey();
    if (key !== null) removeKey(key);
  }));
  $('key').addEventListener('input', () => setError('key'));
  $('findfp').addEventListener('click', () => findFalsePositive().catch((err) => setError('key', err.message)));
  $('bulk').addEventListener('click', () => bulkInsert().catch((err) => ($('bulk-status').textContent = err.message)));
  $('bulksize').addEventListener('click', () => {
    document.querySelector('input[name="sizing"][value="np"]').checked = true;
    updateFields();
    $('n').value = '1000';
    $('p').value = '1%';
    if (createFilter()) bulkInsert().catch((err) => ($('bulk-status').textContent = err.message));
  });
  $('download').addEventListener('click', guard('file', download));
  $('file').addEventListener('change', () => {
    const file = $('file').files[0];
    // Forget the choice, so that choosing the same file again reloads it.
    if (file) openFile(file).finally(() => ($('file').value = ''));
  });
}

async function main() {
  wire();
  updateFields();
  showDerived();
  setBusy(true);
  try {
    await init();
  } catch (err) {
    $('status').textContent = `The filter engine did not load: ${err.message}. Reload the page to try again.`;
    return;
  }
  state.ready = true;
  setBusy(false);
  createFilter();
  $('status').textContent = `Ready: an empty filter of ${fmtInt(state.m)} bits and ${state.k} hashes. Type a key below and press Enter.`;
  document.body.dataset.ready = 'true';
}

main();
