// How one key becomes its positions, step by step, with the numbers of the
// key on show: the page works the arithmetic of docs/format.md out again
// in BigInt, and shows it only when it lands on exactly the positions the
// engine (Go, in WebAssembly) reports for the key.
import { $, BLOCK, HEADER, WORD, state } from './state.js';
import { el, fmtInt } from './format.js';
import { MASK64, u64, xxh64 } from './xxh64.js';

const mul = (a, b) => (a * b) & MASK64;

/** SplitMix64's finalizer: the second hash of double hashing, from the first. */
export function mix64(z) {
  z ^= z >> 30n;
  z = mul(z, 0xbf58476d1ce4e5b9n);
  z ^= z >> 27n;
  z = mul(z, 0x94d049bb133111ebn);
  z ^= z >> 31n;
  return z;
}

const SALT = [0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d, 0x705495c7, 0x2df1424b, 0x9efc4947, 0x5c6bfb31];

/**
 * The steps from a key's bytes to its k positions in a classic or counting
 * filter of m bits or counters (hash scheme 1, docs/format.md).
 */
export function classicSteps(bytes, m, k, seed = 0n) {
  const M = BigInt(m);
  const h1 = xxh64(bytes, seed);
  const h2 = mix64(h1);
  let x = (h1 * M) >> 64n;
  let y = (h2 * M) >> 64n;
  const start = { x, y };
  const probes = [];
  for (let i = 1; i <= k; i++) {
    const pos = x;
    x = (x + y) % M;
    y = (y + BigInt(i)) % M;
    probes.push({ i, pos: Number(pos), x: Number(x), y: Number(y) });
  }
  return { h1, h2, x0: Number(start.x), y0: Number(start.y), probes, positions: probes.map((p) => p.pos) };
}

/** The steps from a key's bytes to its 8 bits in a split-block filter of `blocks` blocks (hash scheme 2). */
export function blockedSteps(bytes, blocks) {
  const h = xxh64(bytes, 0n);
  const hi = h >> 32n;
  const lo = Number(h & 0xffffffffn);
  const block = Number((hi * BigInt(blocks)) >> 32n);
  const words = SALT.map((salt, w) => {
    const product = Math.imul(lo, salt) >>> 0;
    const bit = product >>> 27;
    return { w, salt, product, bit, pos: BLOCK * block + WORD * w + bit };
  });
  return { h, hi: Number(hi), lo, block, words, positions: words.map((w) => w.pos) };
}

const hex = (x, digits = 16) => `0x${x.toString(16).padStart(digits, '0')}`;

// seedOf reads the XXH64 seed from a filter's header (bytes 8 to 15, little-endian).
function seedOf(bytes) {
  return u64(bytes, 8);
}

function row(cells, head = false) {
  return el(
    'tr',
    {},
    ...cells.map((c) =>
      el(head ? 'th' : 'td', typeof c === 'object' && !(c instanceof Node) ? c : { text: String(c) }),
    ),
  );
}

function table(caption, head, rows) {
  return el(
    'div',
    {},
    el('p', { class: 'help', text: caption }),
    el('table', { class: 'steps' }, el('thead', {}, row(head, true)), el('tbody', {}, ...rows)),
  );
}

function line(...parts) {
  return el('p', { class: 'eq' }, ...parts);
}

/**
 * Shows how key became positions (what the engine reported for it) in the
 * filter on show; hides the box for kinds the page does not draw, or when
 * its own arithmetic does not land on the engine's positions.
 */
export function showHashMath(key, positions) {
  const box = $('hashmath');
  box.replaceChildren();
  box.hidden = true;
  $('hashmath-box').hidden = true;
  const { kind, m, k } = state;
  if (key === null || !['classic', 'counting', 'blocked'].includes(kind)) return;
  const bytes = typeof key === 'string' ? new TextEncoder().encode(key) : key;
  const f = state.filter;
  // The header holds the seed; a classic filter reads it without encoding.
  const filterBytes = f.readBytes ? f.readBytes(0, HEADER) : f.toBytes();
  if (filterBytes.length < HEADER) return;
  const shown =
    bytes.length > 24
      ? `${[...bytes.subarray(0, 24)].map((b) => b.toString(16).padStart(2, '0')).join(' ')} …`
      : [...bytes].map((b) => b.toString(16).padStart(2, '0')).join(' ');
  // The heading is the summary of the box, which stays as the reader left it.
  $('hashmath-sum').textContent = `How "${key}" became ${kind === 'blocked' ? 'its 8 bits' : `its ${k} positions`}`;
  const parts = [];
  parts.push(
    line(
      `Its bytes, as UTF-8: `,
      el('code', { text: shown }),
      ` (${fmtInt(bytes.length)} ${bytes.length === 1 ? 'byte' : 'bytes'}).`,
    ),
  );
  let steps;
  if (kind === 'blocked') {
    const blocks = m / BLOCK;
    steps = blockedSteps(bytes, blocks);
    parts.push(
      line(
        'One hash of those bytes: ',
        el('var', { text: 'h' }),
        ' = XXH64(bytes, seed 0) = ',
        el('code', { text: hex(steps.h), 'data-value': 'h' }),
        '.',
      ),
      line(
        'Its upper half picks the block: ',
        el('var', { text: 'h' }),
        ' >> 32 = ',
        el('code', { text: hex(steps.hi, 8) }),
        `, scaled to b = ${fmtInt(blocks)} ${blocks === 1 ? 'block' : 'blocks'} by multiplying and keeping the top 32 bits: ⌊${hex(steps.hi, 8)} × ${fmtInt(blocks)} / 2³²⌋ = `,
        el('b', { text: fmtInt(steps.block), 'data-value': 'block' }),
        '.',
      ),
      line(
        'Its lower half ',
        el('var', { text: 'x' }),
        ' = ',
        el('var', { text: 'h' }),
        ' mod 2³² = ',
        el('code', { text: hex(steps.lo, 8) }),
        " picks one bit in each of the block's eight 32-bit words: multiplied by the word's salt (Parquet's constants), the top 5 bits of the low 32 give a bit from 0 to 31.",
      ),
      table(
        'x · salt[w] mod 2³², then >> 27; the position is 256 · block + 32 · w + bit',
        ['word w', 'salt[w]', 'x · salt[w] mod 2³²', 'bit', 'position'],
        steps.words.map((s) =>
          row([s.w, hex(s.salt, 8), hex(s.product, 8), s.bit, { text: fmtInt(s.pos), 'data-pos': String(s.pos) }]),
        ),
      ),
    );
  } else {
    const seed = seedOf(filterBytes);
    steps = classicSteps(bytes, m, k, seed);
    const unit = kind === 'counting' ? 'counter' : 'bit';
    parts.push(
      line(
        'One hash of those bytes: ',
        el('var', { text: 'h₁' }),
        ` = XXH64(bytes, seed ${seed}) = `,
        el('code', { text: hex(steps.h1), 'data-value': 'h1' }),
        '.',
      ),
      line(
        'A second from the first, without reading the key again: ',
        el('var', { text: 'h₂' }),
        ' = mix64(',
        el('var', { text: 'h₁' }),
        ') = ',
        el('code', { text: hex(steps.h2), 'data-value': 'h2' }),
        " (SplitMix64's finalizer: three shifts and two multiplications).",
      ),
      line(
        `Each is reduced to 0…m − 1 (m = ${fmtInt(m)}) by multiplying and keeping the top 64 bits of the 128-bit product, which needs no division: `,
        el('var', { text: 'x' }),
        ` = ⌊h₁ · ${fmtInt(m)} / 2⁶⁴⌋ = `,
        el('b', { text: fmtInt(steps.x0), 'data-value': 'x' }),
        ', ',
        el('var', { text: 'y' }),
        ` = ⌊h₂ · ${fmtInt(m)} / 2⁶⁴⌋ = `,
        el('b', { text: fmtInt(steps.y0), 'data-value': 'y' }),
        '.',
      ),
      line(
        `Then k = ${fmtInt(k)} probes of enhanced double hashing: probe i takes x as its ${unit}, then steps x by y and y by i, both mod m, so the k positions walk apart with one hash computed.`,
      ),
      table(
        `probe i: position = x; then x ← (x + y) mod ${fmtInt(m)}, y ← (y + i) mod ${fmtInt(m)}`,
        ['probe i', 'position', 'next x', 'next y'],
        steps.probes.map((p) =>
          row([p.i, { text: fmtInt(p.pos), 'data-pos': String(p.pos) }, fmtInt(p.x), fmtInt(p.y)]),
        ),
      ),
    );
  }
  // Shown only when it is the engine's answer.
  if (steps.positions.length !== positions.length || steps.positions.some((p, i) => p !== positions[i])) return;
  parts.push(
    el('p', {
      class: 'help',
      text: 'These are the positions the engine (Go, compiled to WebAssembly) reported for this key: the page worked them out again from docs/format.md.',
    }),
  );
  box.replaceChildren(...parts);
  box.hidden = false;
  $('hashmath-box').hidden = false;
}
