// Keys into the engine: a key is written as UTF-8 (strings, with
// encodeInto) or as its bytes into the scratch buffer, one at a time or
// packed in batches; a key longer than PIECE is hashed in pieces.

import { OP_DIGEST, KEY_ROUTED, BATCH_GROUP as GROUP } from './abi.js';
import { call, check, keyCall, keyView, keysCall, mem, mem32, scratch } from './core.js';

// Keys longer than this (UTF-16 units of a string, or bytes) are hashed in
// pieces of this size (OP_DIGEST), so that a key of any length needs at
// most 3 · 256 Ki bytes of scratch buffer, and linear memory, which never
// shrinks, stays small (js/test/budget.test.js hashes a 100 MB key).
export const PIECE = 256 * 1024;
// Batches are cut so that the scratch buffer stays near this size.
export const BATCH_BYTES = 1 << 20;
// String batches go to the engine a group of GROUP keys at a time, one call
// of the keys export a group (the engine hashes and probes groups of as
// many keys, bloom/batch.go), and every key is encoded once, by encodeInto,
// straight into the engine's memory (bench/README.md, "Method", measures
// each way against the others):
// - While the groups are ASCII (most URLs), a group's keys are joined and
//   encoded with one encodeInto, back to back: one call instead of GROUP.
// - Otherwise each key is encoded into a slot of its own, stride bytes
//   after the last, through a view of that slot made once (e.slots) and
//   kept while the scratch buffer stays where it is: making a view a key
//   costs more, and encoding elsewhere then copying into place
//   (copyWithin) is a second pass over the bytes and a second native call.
// A group tried joined that turns out not to be ASCII is encoded again key
// by key (the only time a key is encoded twice), and the groups after it go
// key by key until one is all ASCII again. A group is BATCH_GROUP keys, as
// many as the engine hashes before it probes.
// A group's layout in the scratch buffer: its result bytes at 0, its key
// lengths (uint32) at LENS_AT, its keys (joined, or one a slot) at SLOTS_AT.
const LENS_AT = GROUP;
const SLOTS_AT = LENS_AT + 4 * GROUP;
// Slots are a power of two of bytes, at least 3 bytes a UTF-16 unit of the
// group's longest key (encodeInto's worst case), at least MIN_STRIDE (URLs
// of up to 170 units) and at most MAX_STRIDE: a group with a longer key goes
// key by key as add and has do.
const MIN_STRIDE = 512;
const MAX_STRIDE = 16 * 1024;

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
    // (bench/README.md).
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

// oneKey adds or tests one key of at most PIECE units or bytes in h, and
// returns the result: through the key export, or for a sharded filter
// (KEY_ROUTED in add), whose keys the engine routes in batches only, through
// the keys export with a batch of one.
export function oneKey(e, add, h, key) {
  let n = putKey(e, key);
  if (!(add & KEY_ROUTED)) {
    const status = keyCall(e, add, h, 0, n);
    if (status < 0 || e.go.exited) check(e, status);
    return status === 1;
  }
  // The key at 0, its length after it, then its result byte.
  const lens = (n + 3) & ~3;
  if (lens + 5 > e.scratchSize) {
    scratch(e, lens + 5);
    n = putKey(e, key);
  }
  mem32(e)[(e.scratch + lens) >>> 2] = n;
  const status = keysCall(e, add, h, 1, lens, 0, n, lens + 4, 0);
  if (status < 0 || e.go.exited) check(e, status);
  return mem(e)[e.scratch + lens + 4] === 1;
}

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

// strideFor returns the slot size for keys of at most units UTF-16 units.
function strideFor(units) {
  let stride = MIN_STRIDE;
  while (stride < 3 * units) stride *= 2;
  return stride;
}

// stringsNeed returns the scratch buffer a string batch whose longest key
// has units UTF-16 units needs.
function stringsNeed(units) {
  const need = SLOTS_AT + GROUP * Math.min(strideFor(units), MAX_STRIDE);
  return 3 * units > MAX_STRIDE ? Math.max(need, 3 * units) : need;
}

// slots returns e.slots with slots of at least stride bytes, made anew when
// the scratch buffer moved or memory grew (which detaches views) or its
// slots are smaller.
function slots(e, stride) {
  let s = e.slots;
  if (s === null || s.at !== e.scratch || s.stride < stride || s.all.byteLength === 0) {
    if (s !== null && s.at === e.scratch && s.all.byteLength !== 0) stride = Math.max(stride, s.stride);
    const at = scratch(e, SLOTS_AT + GROUP * stride);
    const buffer = e.memory.buffer;
    const views = [];
    for (let k = 0; k < GROUP; k++) views.push(new Uint8Array(buffer, at + SLOTS_AT + k * stride, stride));
    s = e.slots = { at, stride, views, all: new Uint8Array(buffer, at + SLOTS_AT, GROUP * stride) };
  }
  return s;
}

// stringBatch adds (add 1) or tests (add 0) the strings from keys[i] to
// the next key that is not a string or is longer than PIECE, a group at a
// time (see GROUP), sets their results and returns where it stopped. A
// group's keys are found as it goes (not the whole run first, which on a
// large array would read every key once more from memory).
function stringBatch(e, add, h, keys, i, results) {
  let joined = true;
  let stop = i;
  for (let g = i; ; g = stop) {
    let longest = 0;
    for (const last = Math.min(g + GROUP, keys.length); stop < last; stop++) {
      const key = keys[stop];
      if (typeof key !== 'string' || key.length > PIECE) break;
      if (key.length > longest) longest = key.length;
    }
    const count = stop - g;
    if (count === 0) break;
    if (3 * longest > MAX_STRIDE) {
      for (let k = g; k < stop; k++) results[k] = oneKey(e, add, h, keys[k]);
      continue;
    }
    const s = slots(e, strideFor(longest));
    const lens = ((s.at + LENS_AT) >>> 2) - g;
    const u32 = mem32(e);
    let stride = 0;
    let end = 0;
    if (joined) {
      // Concatenated in a loop (a rope that encodeInto flattens) rather
      // than keys.slice().join(''): no array a group (bench/README.md).
      let text = '';
      for (let k = g; k < stop; k++) {
        const key = keys[k];
        text += key;
        u32[lens + k] = key.length;
      }
      end = encoder.encodeInto(text, s.all).written;
      if (end !== text.length) joined = false;
    }
    if (!joined) {
      let ascii = true;
      for (let k = g; k < stop; k++) {
        const n = encoder.encodeInto(keys[k], s.views[k - g]).written;
        u32[lens + k] = n;
        if (n !== keys[k].length) ascii = false;
      }
      joined = ascii;
      stride = s.stride;
      end = count * stride;
    }
    const status = keysCall(e, add, h, count, LENS_AT, SLOTS_AT, SLOTS_AT + end, 0, stride);
    if (status < 0 || e.go.exited) check(e, status);
    const res = mem(e);
    for (let k = g; k < stop; k++) results[k] = res[s.at + k - g] === 1;
  }
  return stop;
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
  const status = keysCall(e, add, h, count, lens, keyStart, off, 0, 0);
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
    if (typeof key !== 'string' && !(key instanceof Uint8Array)) throw badKey(keys, i);
  }
}

function badKey(keys, i) {
  const key = keys[i];
  const got = key === null ? 'null' : typeof key;
  return new TypeError(`edgebloom: keys[${i}] must be a string or a Uint8Array, got ${got}; nothing was added`);
}

// batchOp adds (add 1) or tests (add 0) keys in filter h, or with
// KEY_ROUTED in add, in sharded filter h, whose keys longer than PIECE go
// to whole(key), which returns the result.
export function batchOp(e, add, h, keys, whole) {
  if (!Array.isArray(keys)) checkKeys(keys);
  // All or nothing: every key is checked (as checkKeys does), and the
  // scratch buffer the largest part of the batch needs is made within the
  // memory budget, before any key is added. One pass does both: on an array
  // of a million keys each pass is a cache miss a key, which single calls
  // pay once. It runs from the last key to the first, so that the first
  // keys, encoded first, are still in the cache.
  let reserve = 0;
  let long = false;
  let bytes = false;
  let units = 0;
  let bad = -1;
  for (let k = keys.length - 1; k >= 0; k--) {
    const key = keys[k];
    if (typeof key === 'string') {
      if (key.length > PIECE) long = true;
      else if (key.length > units) units = key.length;
    } else if (key instanceof Uint8Array) {
      if (key.length > PIECE) long = true;
      else bytes = true;
    } else {
      bad = k;
    }
  }
  if (bad >= 0) throw badKey(keys, bad);
  if (bytes) {
    for (let k = 0; k < keys.length && reserve <= BATCH_BYTES; k++) {
      const key = keys[k];
      if (!isLong(key) && typeof key !== 'string') reserve += key.length + 9;
    }
    if (reserve > BATCH_BYTES) reserve = BATCH_BYTES + 16;
  }
  if (keys.length > 0) reserve = Math.max(reserve, stringsNeed(units));
  scratch(e, Math.max(reserve, long ? 3 * PIECE : 0));
  const results = new Array(keys.length);
  let i = 0;
  while (i < keys.length) {
    const key = keys[i];
    if (isLong(key)) {
      results[i] = whole ? whole(key) : streamKey(e, add, h, key) === 1;
      i++;
      continue;
    }
    if (typeof key === 'string') {
      i = stringBatch(e, add, h, keys, i, results);
      continue;
    }
    let j = i + 1;
    // A run of byte keys, while they fit in BATCH_BYTES (at least one).
    let size = maxKeyBytes(key) + 5;
    while (j < keys.length && typeof keys[j] !== 'string' && !isLong(keys[j])) {
      const need = maxKeyBytes(keys[j]) + 5;
      if (size + need > BATCH_BYTES) break;
      size += need;
      j++;
    }
    bytesBatch(e, add, h, keys, i, j, size, results);
    i = j;
  }
  return results;
}
