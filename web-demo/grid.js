// The grid: one square a bit or counter (or a shaded run of them for large
// filters; one 256-bit block at a time for large split-block filters), read
// from the filter's bytes in the documented format.
import { $, BLOCK, CELL_LIMIT, DENSITY_CELLS, HEADER, WORD, isDrawable, state } from './state.js';
import { el, fmtInt } from './format.js';

// valueAt reads bit or counter i from bytes in the documented format.
export function valueAt(bytes, kind, i) {
  if (kind === 'counting') {
    const b = bytes[HEADER + Math.floor(i / 2)];
    return i % 2 === 0 ? b & 15 : b >> 4;
  }
  return (bytes[HEADER + Math.floor(i / 8)] >> (i % 8)) & 1;
}

// valuesAt reads the bits or counters at positions: a classic filter's
// bytes one by one with readBytes, without encoding the filter; other kinds
// from their encoding.
export function valuesAt(f, kind, positions) {
  if (f.readBytes) {
    return positions.map((p) => {
      const at = HEADER + Math.floor(p / 8);
      return (f.readBytes(at, at + 1)[0] >> (p % 8)) & 1;
    });
  }
  const bytes = f.toBytes();
  return positions.map((p) => valueAt(bytes, kind, p));
}

// cellValues returns, for each cell of the grid, the bit or counter (one
// cell per bit) or the share of nonzero bits in its run (density view).
function cellValues() {
  const f = state.filter;
  // A classic filter's header and payload are read as they are, without
  // encoding the filter or hashing it for the checksum; other kinds encode.
  const bytes = f.readBytes ? f.readBytes(0, f.byteLength - 8) : f.toBytes();
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

// showNumbers writes each bit's number in its square when the reader asks
// (the "Show bit numbers" box): squares one a bit of a classic or counting
// filter only.
export function showNumbers() {
  const box = $('numbers');
  const can = (state.kind === 'classic' || state.kind === 'counting') && !state.density;
  box.disabled = !can;
  $('grid').classList.toggle('numbered', can && box.checked);
}

export function buildGrid() {
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
    $('gridcaption').textContent =
      `A ${kind} filter keeps several ${{ scalable: 'layers', window: 'generations' }[kind] ?? 'shards'} of bits; the page does not draw them, but it answers queries.`;
    return;
  }
  state.density = m > CELL_LIMIT;
  grid.className = `grid ${state.density ? 'dense' : m > 512 ? 'small' : ''} ${kind}`;
  showNumbers();
  const n = state.density ? DENSITY_CELLS : m;
  const per = m / DENSITY_CELLS;
  const frag = document.createDocumentFragment();
  for (let i = 0; i < n; i++) {
    const c = el('span', { class: 'c', 'data-i': String(i), 'data-n': String(i) });
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
    frag.append(
      el(
        'div',
        { class: 'blockwrap', 'data-block': String(b) },
        el('p', { class: 'blabel', text: `block ${fmtInt(b)}` }),
        block,
      ),
    );
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
  for (const w of document.querySelectorAll('#grid .blockwrap'))
    w.classList.toggle('hit', w.dataset.block === String(b));
}

export function paintGrid() {
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
export function highlight(marks) {
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
