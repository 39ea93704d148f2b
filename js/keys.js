// Keys into the engine: a key is written as UTF-8 (strings, with
// encodeInto) or as its bytes into the scratch buffer, one at a time or
// packed in batches; a key longer than PIECE is hashed in pieces.

import { OP_DIGEST } from './abi.js';
import { call, check, keyView, keysCall, mem, mem32, scratch } from './core.js';

// Keys longer than this (UTF-16 units of a string, or bytes) are hashed in
// pieces of this size (bloom.Digest), so that a key of any length needs at
// most 3 · 256 Ki bytes of scratch buffer: a 100 MB key once left 900 MB of
// linear memory behind.
const PIECE = 256 * 1024;
// Batches are cut so that the scratch buffer stays near this size.
export const BATCH_BYTES = 1 << 20;
// Keys joined for one encodeInto. Joining a whole batch was as fast for
// ASCII URLs but slower than encoding each key on its own as soon as some
// were not ASCII (the joined string is then two-byte, and encodeInto slows
// on long two-byte strings); groups of 32 were within 10% of the best of
// both (Node 20, 80-byte URLs).
const JOIN_KEYS = 32;

const encoder = new TextEncoder();

// streamKey adds (add 1) or tests (add 0) key in filter h in pieces of at
// most PIECE units or bytes (see PIECE), and returns the status.
export function streamKey(e, add, h, key) {
  call(e, OP_DIGEST, h, 0);
  if (typeof key === 'string') {
    // Each piece is encoded at the start of the scratch buffer (keyView).
    scratch(e, 3 * PIECE);
    for (let i = 0; i < key.length;) {
      let j = Math.min(key.length, i + PIECE);
      // A surrogate pair stays in one piece, so each piece encodes as its
      // part of the whole key does (a lone surrogate is U+FFFD either way).
      const last = key.charCodeAt(j - 1);
      if (j < key.length && last >= 0xd800 && last <= 0xdbff) j--;
      const n = encoder.encodeInto(key.substring(i, j), keyView(e)).written;
      call(e, OP_DIGEST, h, 1, 0, n);
      i = j;
    }
  } else {
    const base = scratch(e, PIECE);
    for (let i = 0; i < key.length; i += PIECE) {
      const piece = key.subarray(i, i + PIECE);
      mem(e).set(piece, base);
      call(e, OP_DIGEST, h, 1, 0, piece.length);
    }
  }
  return call(e, OP_DIGEST, h, 2, add);
}

function isLong(key) {
  return key.length > PIECE;
}

function keyError(key) {
  const got = key === null ? 'null' : typeof key;
  return new TypeError(`edgebloom: a key must be a string or a Uint8Array, got ${got}`);
}

// writeKey writes key at scratch offset off and returns its length in bytes.
// The caller has made room for maxKeyBytes(key) bytes there.
export function writeKey(u8, base, off, key) {
  if (typeof key === 'string') {
    // encodeInto beats a hand-written loop even for short ASCII URLs
    // (about 85 ns against 200 ns for 80 bytes, bench/README.md).
    const at = base + off;
    return encoder.encodeInto(key, u8.subarray(at, at + 3 * key.length)).written;
  }
  u8.set(key, base + off);
  return key.length;
}

export function maxKeyBytes(key) {
  if (typeof key === 'string') return 3 * key.length;
  if (key instanceof Uint8Array) return key.length;
  throw keyError(key);
}

// putKey writes key at the start of the scratch buffer and returns its
// length in bytes, or -1, having written nothing, when the key is longer
// than PIECE: the caller hashes it in pieces (streamKey).
export function putKey(e, key) {
  if (typeof key === 'string') {
    // encodeInto writes the whole key when it fits, which it does unless
    // the key is longer than the scratch buffer (64 KiB at first). The
    // view is made anew only after memory grew (which detaches it).
    let view = e.view;
    if (view.byteLength === 0) view = keyView(e);
    const r = encoder.encodeInto(key, view);
    if (r.read === key.length) return r.written;
    if (isLong(key)) return -1;
    scratch(e, 3 * key.length);
    return encoder.encodeInto(key, keyView(e)).written;
  }
  if (isLong(key)) return -1;
  const base = scratch(e, maxKeyBytes(key));
  return writeKey(mem(e), base, 0, key);
}

// keyOp runs a one-key operation of eb on handle h.
// keyOp runs a one-key operation of eb on handle h. A long key is written
// whole (remove has no pieces), within the memory budget.
export function keyOp(e, op, h, key) {
  let n = putKey(e, key);
  if (n < 0) n = writeKey(mem(e), scratch(e, maxKeyBytes(key)), 0, key);
  return call(e, op, h, 0, n);
}

// A batch's layout in the scratch buffer: one result byte a key at 0, the
// key lengths (uint32) from lens, the keys' bytes from keyStart.
export function layout(count) {
  const lens = (count + 3) & ~3;
  return [lens, lens + 4 * count];
}

// stringBatch adds (add 1) or tests (add 0) the strings keys[i:j], which
// hold chars UTF-16 code units. Groups of JOIN_KEYS keys are joined and
// encoded with one encodeInto while they are ASCII (most URLs), which makes
// their lengths in bytes their lengths in units. A group that is not ASCII,
// and the groups after it until one is ASCII again, are encoded key by key
// into a standing view past the keys and copied into place (copyWithin): on
// a corpus of non-ASCII URLs that cost less than one encodeInto of the
// joined group followed by splitting the UTF-8 by the keys' UTF-16 lengths
// in the engine (about 60 ns a key there), and less than making a view a
// key. Lone surrogates become U+FFFD key by key, as add encodes them.
function stringBatch(e, add, h, keys, i, j, chars, results) {
  const count = j - i;
  const [lens, keyStart] = layout(count);
  let longest = 0;
  for (let k = i; k < j; k++) if (keys[k].length > longest) longest = keys[k].length;
  const tailAt = keyStart + 3 * chars;
  const base = scratch(e, tailAt + 3 * longest);
  const view = keyView(e);
  const u8 = mem(e);
  const tail = view.subarray(tailAt, tailAt + 3 * longest);
  const u32 = mem32(e);
  const at = ((base + lens) >>> 2) - i;
  let end = keyStart;
  let joined = true;
  for (let g = i; g < j; g += JOIN_KEYS) {
    const stop = Math.min(g + JOIN_KEYS, j);
    if (joined) {
      const text = keys.slice(g, stop).join('');
      const n = encoder.encodeInto(text, view.subarray(end)).written;
      if (n === text.length) {
        for (let k = g; k < stop; k++) u32[at + k] = keys[k].length;
        end += n;
        continue;
      }
    }
    let ascii = true;
    for (let k = g; k < stop; k++) {
      const key = keys[k];
      const n = encoder.encodeInto(key, tail).written;
      u8.copyWithin(base + end, base + tailAt, base + tailAt + n);
      u32[at + k] = n;
      end += n;
      if (n !== key.length) ascii = false;
    }
    joined = ascii;
  }
  const status = keysCall(e, add, h, count, lens, keyStart, end, 0);
  if (status < 0 || e.go.exited) check(e, status);
  const res = mem(e);
  for (let k = 0; k < count; k++) results[i + k] = res[base + k] === 1;
}

// bytesBatch adds or tests keys[i:j], of any key type, written one by one.
function bytesBatch(e, add, h, keys, i, j, bytes, results) {
  const count = j - i;
  const [lens, keyStart] = layout(count);
  const base = scratch(e, keyStart + bytes);
  const u8 = mem(e);
  const u32 = mem32(e);
  const at = (base + lens) >>> 2;
  let off = keyStart;
  for (let k = 0; k < count; k++) {
    const n = writeKey(u8, base, off, keys[i + k]);
    u32[at + k] = n;
    off += n;
  }
  const status = keysCall(e, add, h, count, lens, keyStart, off, 0);
  if (status < 0 || e.go.exited) check(e, status);
  const res = mem(e);
  for (let k = 0; k < count; k++) results[i + k] = res[base + k] === 1;
}

/**
 * Internal: throws a TypeError naming the first key of keys that is not a
 * string or a Uint8Array, before a batch touches any filter, so that a
 * refused batch adds nothing.
 */
export function checkKeys(keys) {
  if (!Array.isArray(keys)) throw new TypeError('edgebloom: keys must be an array of strings or Uint8Arrays');
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    if (typeof key !== 'string' && !(key instanceof Uint8Array)) {
      const got = key === null ? 'null' : typeof key;
      throw new TypeError(`edgebloom: keys[${i}] must be a string or a Uint8Array, got ${got}; nothing was added`);
    }
  }
}

export function batchOp(e, add, h, keys) {
  checkKeys(keys);
  // All or nothing here too: the scratch buffer the largest part of the
  // batch needs is made first, within the memory budget, so that no part
  // can fail for want of memory after another was added.
  let reserve = 0;
  let long = false;
  for (let k = 0; k < keys.length && reserve <= BATCH_BYTES; k++) {
    const key = keys[k];
    if (isLong(key)) long = true;
    else reserve += (typeof key === 'string' ? 3 : 1) * key.length + 9;
  }
  scratch(e, reserve > BATCH_BYTES ? BATCH_BYTES + 16 : Math.max(reserve, long ? 3 * PIECE : 0));
  const results = new Array(keys.length);
  let i = 0;
  while (i < keys.length) {
    if (isLong(keys[i])) {
      results[i] = streamKey(e, add, h, keys[i]) === 1;
      i++;
      continue;
    }
    // Take keys while their UTF-8 fits in BATCH_BYTES (at least one key).
    let j = i;
    let bytes = 0;
    let chars = 0;
    let strings = true;
    while (j < keys.length) {
      const key = keys[j];
      if (isLong(key)) break;
      let need;
      if (typeof key === 'string') {
        need = 3 * key.length + 5;
      } else {
        need = maxKeyBytes(key) + 5;
        strings = false;
      }
      if (j > i && bytes + need > BATCH_BYTES) break;
      bytes += need;
      if (strings) chars += key.length;
      j++;
    }
    if (strings) stringBatch(e, add, h, keys, i, j, chars, results);
    else bytesBatch(e, add, h, keys, i, j, bytes, results);
    i = j;
  }
  return results;
}
