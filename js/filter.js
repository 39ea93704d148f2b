// The filter every kind is: the Filter class (add, has, batches, statistics,
// encoding, free), and the operations only some kinds offer, as functions
// of this module that the kinds' classes call (classic.js, counting.js,
// scalable.js, window.js, blocked.js). A filter's bits as bytes and
// positions are in changes.js; filters from bytes, in decode.js.
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
  OP_ROTATE,
  OP_PARAMS,
  OP_GROWTH,
  KIND_SCALABLE,
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
  MAX_HASHES,
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
  mem,
  registry,
  scratch,
} from './core.js';
import { batchOp, keyOp, maxKeyBytes, putKey, streamKey, writeKey } from './keys.js';
import { CONSTRUCT } from './args.js';
import { codedError } from './errors.js';

// What changes as a filter takes keys, read afresh on every get: the count,
// and for a scalable filter, which grows by layers, its size too.
const CHANGING = [STAT_COUNT];
const GROWING = [STAT_BITS, STAT_CAPACITY, STAT_ENCODED_SIZE, STAT_LAYERS];

// See the static block of Filter: reach(f) gives [engine, handle] of f, for
// the operations of filter.js, changes.js and decode.js.
export let reach;
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

// output encodes the filter and copies it out of the engine's output
// buffer, less skip bytes at the start and trim at the end.
export function output(f, skip = 0, trim = 0) {
  const [e, h] = reach(f);
  const n = call(e, OP_ENCODE, h);
  const ptr = call(e, OP_OUTPUT_PTR) >>> 0;
  const bytes = mem(e).slice(ptr + skip, ptr + n - trim);
  call(e, OP_OUTPUT_RELEASE);
  return bytes;
}
