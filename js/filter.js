// The filter every kind is: the Filter class (add, has, batches, statistics,
// encoding, free), and the operations only some kinds offer, as functions
// of this module that the kinds' classes call (classic.js, counting.js,
// scalable.js, window.js, blocked.js).
import {
  OP_NEW,
  OP_FREE,
  OP_REMOVE,
  OP_POSITIONS,
  OP_STATS,
  OP_CLEAR,
  OP_ENCODE,
  OP_OUTPUT_PTR,
  OP_OUTPUT_RELEASE,
  OP_INSPECT,
  OP_DECODE,
  OP_ROTATE,
  OP_FROM_PARQUET,
  OP_PARAMS,
  OP_ADD_CHANGES,
  OP_APPLY_CHANGES,
  OP_READ_BYTES,
  OP_WRITE_PAYLOAD,
  OP_GROWTH,
  KIND_SCALABLE,
  KIND_BLOCKED,
  KIND_CLASSIC,
  KIND_WINDOW,
  KIND_NAMES,
  STAT_BITS,
  STAT_HASHES,
  STAT_COUNT,
  STAT_SET_BITS,
  STAT_ESTIMATED_COUNT,
  STAT_FILL_RATIO,
  STAT_ESTIMATED_FPR,
  STAT_CAPACITY,
  STAT_TARGET_FPR,
  STAT_OVER_CAPACITY,
  STAT_KIND,
  STAT_LAYERS,
  STAT_ENCODED_SIZE,
  NUM_STATS,
  HEADER_SIZE,
  CHECKSUM_SIZE,
  MAX_HASHES,
  CONTAINER_MAGIC,
} from './abi.js';
import {
  budgetRoom,
  call,
  check,
  dead,
  engineExited,
  engineNumber,
  keyCall,
  live,
  loadRecord,
  loadRoom,
  loadScratch,
  mem,
  mem32,
  registry,
  rescratch,
  scratch,
  scratchGrowth,
  tooLarge,
} from './core.js';
import { BATCH_BYTES, batchOp, keyOp, layout, maxKeyBytes, putKey, streamKey, writeKey } from './keys.js';
import { CONSTRUCT, loadArgs, options } from './args.js';
import { codedError } from './errors.js';

// What changes as a filter takes keys, read afresh on every get: the count,
// and for a scalable filter, which grows by layers, its size too.
const CHANGING = [STAT_COUNT];
const GROWING = [STAT_BITS, STAT_CAPACITY, STAT_ENCODED_SIZE, STAT_LAYERS];

// See the static block of Filter.
let reach;
let paramOf;

function freed() {
  return codedError(Error, 'ERR_FREED', 'edgebloom: the filter was freed');
}

export class Filter {
  #handle = 0;
  #e; // the engine that holds this filter
  // The statistics that take constant time, read once when the filter is
  // made or loaded (OP_PARAMS); see CHANGING and GROWING for those that
  // are read again.
  #params;

  // The bytes this filter counts against the engine's memory budget.
  #size = 0;
  // What the finalizer gives back if the filter is dropped without free():
  // its size follows #size as a scalable filter grows.
  #held;

  constructor(token, kind, explicit, a, b, handle, generations = 0) {
    if (token !== CONSTRUCT) throw new TypeError('edgebloom: illegal constructor');
    const e = live();
    // The engine refuses a filter larger than the room the budget has
    // left (in KiB), before it allocates.
    const room = Math.max(0, Math.floor(budgetRoom(e) / 1024));
    this.#handle = handle ?? call(e, OP_NEW, 0, kind, explicit, generations, Math.min(room, 2 ** 31 - 1), a, b);
    this.#e = e;
    const held = (this.#held = { handle: this.#handle, e, size: 0 });
    registry?.register(this, held, this);
    this.#params = this.#readParams();
    this.#size = held.size = this.#params[STAT_ENCODED_SIZE];
    e.used += this.#size;
  }

  #readParams() {
    const e = this.#engine();
    const base = scratch(e, 8 * NUM_STATS);
    call(e, OP_PARAMS, this.#handle, 0);
    return new Float64Array(mem(e).buffer, base, NUM_STATS).slice();
  }

  // param returns a statistic that takes constant time: from the cache, or
  // from the engine when it changes.
  #param(i) {
    const p = this.#params;
    if (CHANGING.includes(i) || (p[STAT_KIND] === KIND_SCALABLE && GROWING.includes(i))) return this.#readParams()[i];
    this.#engine();
    return p[i];
  }

  // engine returns the engine after checking this filter is still live.
  #engine() {
    const e = this.#e;
    if (this.#handle === 0) throw freed();
    if (dead(e)) throw engineExited();
    return e;
  }

  #stat(i) {
    const e = this.#engine();
    const base = scratch(e, 8 * NUM_STATS);
    call(e, OP_STATS, this.#handle, 0);
    return new Float64Array(mem(e).buffer, base, NUM_STATS)[i];
  }

  /**
   * Adds key and reports whether it was new (test-and-add).
   * @param {string | Uint8Array} key
   */
  add(key) {
    const e = this.#engine();
    const n = putKey(e, key);
    if (n < 0) return streamKey(e, 1, this.#handle, key) === 1;
    const status = keyCall(e, 1, this.#handle, 0, n);
    if (status < 0 || e.go.exited) check(e, status);
    return status === 1;
  }

  /** @param {string | Uint8Array} key */
  has(key) {
    const e = this.#engine();
    const n = putKey(e, key);
    if (n < 0) return streamKey(e, 0, this.#handle, key) === 1;
    const status = keyCall(e, 0, this.#handle, 0, n);
    if (status < 0 || e.go.exited) check(e, status);
    return status === 1;
  }

  /** @param {Array<string | Uint8Array>} keys */
  addMany(keys) {
    const e = this.#engine();
    const results = batchOp(e, 1, this.#handle, keys);
    // A scalable filter grows as it fills: its new layers count against
    // the memory budget from the batch that made them on.
    if (this.#params[STAT_KIND] === KIND_SCALABLE) {
      const size = this.#readParams()[STAT_ENCODED_SIZE];
      e.used += size - this.#size;
      this.#size = this.#held.size = size;
    }
    return results;
  }

  /** @param {Array<string | Uint8Array>} keys */
  hasMany(keys) {
    const e = this.#engine();
    return batchOp(e, 0, this.#handle, keys);
  }

  // kind, bits, hashes, count, capacity, errorRate, byteLength and layers
  // take constant time; setBits, estimatedCount, fillRatio,
  // estimatedErrorRate and overCapacity pass over the bits once.
  get kind() {
    return KIND_NAMES[this.#param(STAT_KIND)];
  }
  get bits() {
    return this.#param(STAT_BITS);
  }
  get hashes() {
    return this.#param(STAT_HASHES);
  }
  get count() {
    return this.#param(STAT_COUNT);
  }
  get setBits() {
    return this.#stat(STAT_SET_BITS);
  }
  get estimatedCount() {
    return this.#stat(STAT_ESTIMATED_COUNT);
  }
  get fillRatio() {
    return this.#stat(STAT_FILL_RATIO);
  }
  get estimatedErrorRate() {
    return this.#stat(STAT_ESTIMATED_FPR);
  }
  get capacity() {
    return this.#param(STAT_CAPACITY);
  }
  get errorRate() {
    return this.#param(STAT_TARGET_FPR);
  }
  get overCapacity() {
    return this.#stat(STAT_OVER_CAPACITY) === 1;
  }
  get byteLength() {
    return this.#param(STAT_ENCODED_SIZE);
  }
  /** All statistics in one object. */
  stats() {
    const e = this.#engine();
    const base = scratch(e, 8 * NUM_STATS);
    call(e, OP_STATS, this.#handle, 0);
    const s = new Float64Array(mem(e).buffer, base, NUM_STATS).slice();
    return {
      kind: KIND_NAMES[s[STAT_KIND]],
      bits: s[STAT_BITS],
      hashes: s[STAT_HASHES],
      count: s[STAT_COUNT],
      setBits: s[STAT_SET_BITS],
      estimatedCount: s[STAT_ESTIMATED_COUNT],
      fillRatio: s[STAT_FILL_RATIO],
      estimatedErrorRate: s[STAT_ESTIMATED_FPR],
      capacity: s[STAT_CAPACITY],
      errorRate: s[STAT_TARGET_FPR],
      overCapacity: s[STAT_OVER_CAPACITY] === 1,
      layers: s[STAT_LAYERS],
      byteLength: s[STAT_ENCODED_SIZE],
    };
  }

  /** Removes every key. */
  clear() {
    call(this.#engine(), OP_CLEAR, this.#handle);
  }

  /** The filter in the documented binary format, identical to Go's MarshalBinary. */
  toBytes() {
    return output(this);
  }

  /** Frees the filter's memory in the engine. Later calls throw; free() again does nothing. */
  free() {
    if (this.#handle === 0) return;
    const e = this.#e;
    // free() never throws: on a dead engine it has nothing to free.
    if (!dead(e)) {
      e.used -= this.#size;
      try {
        e.eb(OP_FREE, this.#handle, 0, 0, 0, 0, 0, 0);
      } catch {
        e.dead = true;
      }
    }
    registry?.unregister(this);
    this.#handle = 0;
  }

  [Symbol.dispose]() {
    this.free();
  }

  // The operations below the class, which only some kinds offer, reach a
  // filter's engine and handle through these; they are functions of this
  // module, not methods that every filter shows.
  static {
    reach = (f) => [f.#engine(), f.#handle];
    paramOf = (f, i) => f.#param(i);
  }
}

/** Drops the oldest generation of window f and starts an empty newest one. */
export function rotate(f) {
  const [e, h] = reach(f);
  call(e, OP_ROTATE, h);
}

/** Removes key from counting filter f; false, and no change, when it is certainly absent. */
export function remove(f, key) {
  const [e, h] = reach(f);
  return keyOp(e, OP_REMOVE, h, key) === 1;
}

/** The positions of key in f (classic, counting and split-block filters). */
export function positions(f, key) {
  const [e, h] = reach(f);
  const keyBytes = maxKeyBytes(key);
  const out = (keyBytes + 7) & ~7;
  const base = scratch(e, out + 8 * MAX_HASHES);
  const n = writeKey(mem(e), base, 0, key);
  const k = call(e, OP_POSITIONS, h, 0, n, out);
  return Array.from(new Float64Array(mem(e).buffer, base + out, k));
}

/** Runs OP_UNION, OP_INTERSECT or OP_EQUAL on f and other, which must be a Class. */
export function combine(f, op, other, Class) {
  if (!(other instanceof Class)) throw new TypeError(`edgebloom: the argument must be a ${Class.name}`);
  const [e, h] = reach(f);
  const [, g] = reach(other);
  return call(e, op, h, g);
}

/** The layers of a scalable filter, or the generations of a window. */
export function layers(f) {
  return paramOf(f, STAT_LAYERS);
}

// growth returns the bytes the new layers of scalable filter f take if it
// gets n new keys, or a number past room as soon as they pass it: bloom's
// rule for its layers, run by the engine.
export function growth(f, n, room) {
  const [e, h] = reach(f);
  return engineNumber(OP_GROWTH, n, Math.max(0, room), e, h);
}

// A classic filter's changes and byte ranges (BloomFilter offers them; see
// index.d.ts and wasm/changes.go).

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

// output encodes the filter and copies it out of the engine's output
// buffer, less skip bytes at the start and trim at the end.
function output(f, skip = 0, trim = 0) {
  const [e, h] = reach(f);
  const n = call(e, OP_ENCODE, h);
  const ptr = call(e, OP_OUTPUT_PTR) >>> 0;
  const bytes = mem(e).slice(ptr + skip, ptr + n - trim);
  call(e, OP_OUTPUT_RELEASE);
  return bytes;
}

// Whether bytes start as a sharded container (a Worker's snapshot of a
// filter of several shards) does: its magic, CONTAINER_MAGIC.
const isContainer = (bytes) => [...CONTAINER_MAGIC].every((c, i) => bytes[i] === c.charCodeAt(0));

// The error of a kind's fromBytes given a sharded container: what the bytes
// hold, and the two calls that load them. Its code is ERR_NOT_FILTER, as
// Go's bloom.Decode says of the same bytes.
function containerError(Class, bytes) {
  const shards = new DataView(bytes.buffer, bytes.byteOffset).getUint32(8, true);
  return codedError(
    Error,
    'ERR_NOT_FILTER',
    `edgebloom: ${Class.name}.fromBytes: these bytes are a sharded snapshot (magic "${CONTAINER_MAGIC}", ${shards} shards), ` +
      'as the Worker sends for a filter of several shards, not one filter: load them with fromBytes(bytes), ' +
      'which takes any filter or snapshot, or ShardedBloomFilter.fromBytes(bytes)',
  );
}

/**
 * Loads a filter from bytes in the documented format: of kind want into
 * Class, or when Class is undefined, of any kind into its class in classes.
 * record, when given, is the longest input the memory budget has room for
 * (a sharded container's share for each shard); by default, a load's own.
 */
export function load(Class, input, opts, want, classes, record) {
  const { bytes, maxBits } = loadArgs(input, opts);
  const e = live();
  if (bytes.length < HEADER_SIZE) {
    throw codedError(Error, 'ERR_TRUNCATED', 'bloom: truncated filter');
  }
  // The header is checked before the rest is copied into linear memory,
  // which grows for good: an oversized or foreign input costs nothing. It is
  // checked as the decoder of kind want checks it, so a header of another
  // kind is ERR_KIND where Go's decoder says so.
  let base = scratch(e, HEADER_SIZE);
  mem(e).set(bytes.subarray(0, HEADER_SIZE), base);
  // Any kind: the one the header names; one the format does not have is
  // read as classic, as Go's decoders dispatch.
  const any = bytes[5] >= KIND_CLASSIC && bytes[5] <= KIND_BLOCKED ? bytes[5] : KIND_CLASSIC;
  // The memory budget bounds the header's bits as maxBits does, at the
  // same step of Go's order of checks: a filter that cannot fit is
  // ERR_TOO_LARGE from its header, before a byte of it is copied, whatever
  // else is wrong with it; Go's decoders given that bound say the same.
  const room = loadRoom(e);
  const fits = record ?? loadRecord(room);
  let kind;
  try {
    kind = call(e, OP_INSPECT, 0, 0, want ?? any, 0, 0, maxBits, fits);
  } catch (err) {
    if (err.code === 'ERR_NOT_FILTER' && Class !== undefined && isContainer(bytes)) throw containerError(Class, bytes);
    const bits = new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(16, true);
    if (err.code !== 'ERR_TOO_LARGE' || bits > BigInt(maxBits)) throw err;
    throw codedError(
      RangeError,
      'ERR_TOO_LARGE',
      `edgebloom: a filter of ${bits} bits needs more than the engine's memory budget has left: ${room} bytes of ${e.limit}, and a load takes its size twice, the input and the filter (init({ memoryLimit }) sets the budget); nothing was changed`,
    );
  }
  // The record, as long as its checked header says and no longer, is
  // decoded in order, as Go's decoders read it: a record cut short or
  // damaged gets the code Go gives it, and bytes after a whole record are
  // refused after it. (One refusal, one code: js/test/mutations.test.js.)
  const size =
    HEADER_SIZE + CHECKSUM_SIZE + Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(56, true));
  // A classic, counting or split-block record cut short reaches the end of
  // its input before its checksum: Go's decoders say ERR_TRUNCATED, and so
  // does this, before a byte is copied. Scalable filters and windows hold
  // records whose headers and checksums come before the cut.
  if (bytes.length < size && kind !== KIND_SCALABLE && kind !== KIND_WINDOW) {
    throw codedError(Error, 'ERR_TRUNCATED', 'bloom: truncated filter');
  }
  // At most the record the bound above lets through: its copy and the
  // filter it becomes fit the room.
  const n = Math.min(bytes.length, size);
  base = loadScratch(e, n);
  mem(e).set(bytes.subarray(0, n), base);
  let handle;
  try {
    handle = call(e, OP_DECODE, 0, n, 0, 0, 0, maxBits, fits);
  } finally {
    if (!e.dead) rescratch(e);
  }
  if (bytes.length > size) {
    e.eb(OP_FREE, handle, 0, 0, 0, 0, 0, 0);
    throw codedError(Error, 'ERR_CORRUPT', 'bloom: corrupt filter: trailing bytes after the filter');
  }
  const C = Class ?? classes[kind];
  return new C(CONSTRUCT, kind, 0, 0, 0, handle);
}

/** A split-block filter of Class whose bits are a copy of a Parquet bitset. */
export function fromParquet(Class, input, opts) {
  const { bytes, maxBits } = loadArgs(input, opts);
  const e = live();
  // Checked before the bitset is copied into linear memory, which grows for good.
  if (8 * bytes.length > maxBits) {
    throw codedError(
      RangeError,
      'ERR_TOO_LARGE',
      `bloom: filter exceeds the size bound: the bitset has ${8 * bytes.length} bits, maxBits is ${maxBits}`,
    );
  }
  const need = scratchGrowth(e, bytes.length) + bytes.length;
  if (need > budgetRoom(e)) throw tooLarge(e, `a bitset of ${bytes.length} bytes`, need);
  const base = scratch(e, bytes.length);
  mem(e).set(bytes, base);
  let handle;
  try {
    handle = call(e, OP_FROM_PARQUET, 0, bytes.length, 0, 0, 0, maxBits);
  } finally {
    if (!e.dead) rescratch(e);
  }
  return new Class(CONSTRUCT, KIND_BLOCKED, 0, 0, 0, handle);
}
