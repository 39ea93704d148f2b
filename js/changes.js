// A classic filter's changes and byte ranges (BloomFilter offers them; see
// index.d.ts and wasm/changes.go), and a split-block filter's Parquet
// bitset: the operations on a filter's bits as bytes and positions.
import {
  OP_ADD_CHANGES,
  OP_APPLY_CHANGES,
  OP_OUTPUT_PTR,
  OP_OUTPUT_RELEASE,
  OP_READ_BYTES,
  OP_WRITE_PAYLOAD,
  HEADER_SIZE,
  CHECKSUM_SIZE,
} from './abi.js';
import { call, mem, mem32, scratch } from './core.js';
import { BATCH_BYTES, layout, maxKeyBytes, writeKey } from './keys.js';
import { options } from './args.js';
import { codedError } from './errors.js';
import { output, reach } from './filter.js';

export function addManyChanges(f, keys) {
  const [e, h] = reach(f);
  if (!Array.isArray(keys)) throw new TypeError('edgebloom: keys must be an array of strings or Uint8Arrays');
  // Every key is checked before any is added: a bad key adds nothing.
  for (const key of keys) maxKeyBytes(key);
  const added = new Array(keys.length);
  const parts = [];
  let total = 0;
  let i = 0;
  while (i < keys.length) {
    let j = i;
    let bytes = 0;
    while (j < keys.length) {
      const need = maxKeyBytes(keys[j]) + 5;
      if (j > i && bytes + need > BATCH_BYTES) break;
      bytes += need;
      j++;
    }
    const count = j - i;
    const [lens, keyStart] = layout(count);
    const base = scratch(e, keyStart + bytes);
    const u8 = mem(e);
    const u32 = mem32(e);
    let off = keyStart;
    for (let k = 0; k < count; k++) {
      const n = writeKey(u8, base, off, keys[i + k]);
      u32[((base + lens) >>> 2) + k] = n;
      off += n;
    }
    const n = call(e, OP_ADD_CHANGES, h, count, lens, keyStart, off);
    const res = mem(e);
    for (let k = 0; k < count; k++) added[i + k] = res[base + k] === 1;
    const ptr = call(e, OP_OUTPUT_PTR) >>> 0;
    parts.push(new Uint32Array(res.buffer.slice(ptr, ptr + 4 * n)));
    call(e, OP_OUTPUT_RELEASE);
    total += n;
    i = j;
  }
  let changed = parts.length === 1 ? parts[0] : new Uint32Array(total);
  if (parts.length !== 1) {
    let at = 0;
    for (const part of parts) {
      changed.set(part, at);
      at += part.length;
    }
  }
  return { added, changed, count: f.count };
}

export function applyChanges(f, changes) {
  const [e, h] = reach(f);
  options(changes, 'applyChanges');
  const { changed, count } = changes;
  if (!(changed instanceof Uint32Array) && !Array.isArray(changed)) {
    throw new TypeError('edgebloom: "changed" must be a Uint32Array or an array of bit positions');
  }
  if (typeof count !== 'number' || !Number.isSafeInteger(count) || count < 0) {
    throw new RangeError(`edgebloom: "count" must be an integer >= 0, got ${count}`);
  }
  // Checked whole before any bit is set, so a bad position changes nothing.
  const bits = f.bits;
  for (const p of changed) {
    if (!Number.isInteger(p) || p < 0 || p >= bits) {
      throw codedError(
        RangeError,
        'ERR_ARG',
        `edgebloom: a position must be an integer from 0 to ${bits - 1}, got ${p}`,
      );
    }
  }
  const piece = BATCH_BYTES / 4;
  let i = 0;
  do {
    const n = Math.min(piece, changed.length - i);
    const base = scratch(e, 4 * n);
    const u32 = mem32(e);
    for (let k = 0; k < n; k++) u32[(base >>> 2) + k] = changed[i + k];
    call(e, OP_APPLY_CHANGES, h, 0, n, 0, 0, count);
    i += n;
  } while (i < changed.length);
}

// range checks [start, end) against the encoding's length and returns it.
function range(f, start, end, what) {
  const size = f.byteLength;
  const ok = (v) => Number.isSafeInteger(v) && v >= 0 && v <= size;
  if (!ok(start) || !ok(end) || start > end) {
    throw codedError(
      RangeError,
      'ERR_ARG',
      `edgebloom: ${what}: the range [${start}, ${end}) must lie inside the encoding of ${size} bytes`,
    );
  }
  return size;
}

export function readBytes(f, start, end = f.byteLength) {
  const [e, h] = reach(f);
  range(f, start, end, 'readBytes');
  const out = new Uint8Array(end - start);
  // In pieces of at most BATCH_BYTES, so the engine never holds a copy
  // of the filter.
  for (let lo = start; lo < end; lo += BATCH_BYTES) {
    const hi = Math.min(end, lo + BATCH_BYTES);
    const base = scratch(e, hi - lo);
    call(e, OP_READ_BYTES, h, 0, 0, 0, 0, lo, hi);
    out.set(mem(e).subarray(base, base + hi - lo), lo - start);
  }
  return out;
}

export function writeBytes(f, start, bytes) {
  const [e, h] = reach(f);
  if (!(bytes instanceof Uint8Array)) throw new TypeError('edgebloom: writeBytes takes a Uint8Array');
  const size = range(f, start, start + bytes.length, 'writeBytes');
  if (start < HEADER_SIZE || start + bytes.length > size - CHECKSUM_SIZE) {
    throw codedError(
      RangeError,
      'ERR_ARG',
      `edgebloom: writeBytes: only the payload, bytes [${HEADER_SIZE}, ${size - CHECKSUM_SIZE}), can be written`,
    );
  }
  // The last piece first: only it can hold bits beyond m, which are
  // refused, so a refused write changes nothing.
  const pieces = [];
  for (let lo = 0; lo < bytes.length; lo += BATCH_BYTES) pieces.unshift(lo);
  for (const lo of pieces) {
    const piece = bytes.subarray(lo, lo + BATCH_BYTES);
    const base = scratch(e, piece.length);
    mem(e).set(piece, base);
    call(e, OP_WRITE_PAYLOAD, h, piece.length, 0, 0, 0, start - HEADER_SIZE + lo);
  }
}

// A split-block filter's payload is Parquet's bitset (docs/format.md),
// so the encoding without its header and checksum is the bitset: no
// operation of its own in the engine, whose size has a budget
// (docs/npm.md, "Size").
export function parquetBitset(f) {
  return output(f, HEADER_SIZE, CHECKSUM_SIZE);
}
