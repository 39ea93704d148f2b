// Sharded containers: one filter split into shards, as the edgebloom Worker
// publishes its snapshots (docs/format.md, "Sharded containers"). A key
// belongs to shard router.positions(key)[0], where the router is a classic
// filter with m = shards and k = 1, so Go, the Worker and this module route
// every key alike.
//
//	offset size  field
//	0      4     magic "EBSC"
//	4      1     container version, 1
//	5      1     routing scheme, 1
//	6      2     reserved, 0
//	8      4     s, the number of shards (2 or more)
//	12     4     reserved, 0
//	16     8     the router record's length
//	24     8·s   each shard record's length
//	24+8s  ...   the router record, then the s shard records
//
// Integers are little-endian; every record is a classic filter in the
// documented format, with its own checksum. The router has m = s, k = 1,
// seed 0x9e3779b97f4a7c15 and no bits set.

import {
  KIND_CLASSIC,
  KIND_COUNTING,
  KIND_SCALABLE,
  KIND_WINDOW,
  KIND_BLOCKED,
  HEADER_SIZE,
  CONTAINER_MAGIC,
  CONTAINER_VERSION,
  CONTAINER_ROUTING,
  CONTAINER_HEADER as FIXED,
  CONTAINER_AT_VERSION,
  CONTAINER_AT_ROUTING,
  CONTAINER_AT_RESERVED,
  CONTAINER_AT_SHARDS,
  CONTAINER_AT_RESERVED2,
  CONTAINER_AT_LENGTHS,
  RECORD_AT_SEED,
  RECORD_AT_BITS,
  MAX_SHARDS,
  ROUTE_SEED,
  OP_ROUTED,
  KEY_ROUTED,
} from './abi.js';
import { CONSTRUCT, loadArgs, options, positiveInteger, rate } from './args.js';
import { codedError } from './errors.js';
import { PIECE, batchOp, checkKeys, maxKeyBytes, oneKey } from './keys.js';
import { load } from './decode.js';
import { reach } from './filter.js';
import { call, dead, engineExited, live, loadRoom, mem32, scratch, shardRecord } from './core.js';
import { BloomFilter } from './classic.js';
import { CountingBloomFilter } from './counting.js';
import { ScalableBloomFilter } from './scalable.js';
import { WindowBloomFilter } from './window.js';
import { BlockedBloomFilter } from './blocked.js';

// The class of each kind, for the loader of any kind.
export const CLASSES = {
  [KIND_CLASSIC]: BloomFilter,
  [KIND_COUNTING]: CountingBloomFilter,
  [KIND_SCALABLE]: ScalableBloomFilter,
  [KIND_WINDOW]: WindowBloomFilter,
  [KIND_BLOCKED]: BlockedBloomFilter,
};

const MAGIC = [...CONTAINER_MAGIC].map((c) => c.charCodeAt(0));
// More shards than MAX_SHARDS is not a container this module made sense
// of. The router is a classic filter record with m = s, k = 1, no bits set
// and the seed ROUTE_SEED (Go's snapshot.RouteSeed), so that the bits a key
// sets inside its shard do not depend on the shard it was sent to.

const fail = (code, message) => codedError(Error, code, `edgebloom: ${message}`);

/** Whether bytes start like a sharded container rather than a single filter. */
export function isSharded(bytes) {
  return bytes.length >= MAGIC.length && MAGIC.every((b, i) => bytes[i] === b);
}

const freed = () => codedError(Error, 'ERR_FREED', 'edgebloom: the filter was freed');

// newRouter returns a new router of s shards (m = s, k = 1, seed
// ROUTE_SEED), the one Go's snapshot.Router(s) makes.
function newRouter(s) {
  return new BloomFilter(CONSTRUCT, KIND_CLASSIC, 0, 0, 0, call(live(), OP_ROUTED, 0, s, 0, 2));
}

// make returns the router and shards of new ShardedBloomFilter(opts): the
// Worker's for a filter of these parameters, each shard of capacity
// ceil(capacity / shards) (worker/front's shardCapacity) at errorRate.
function make(opts) {
  options(opts, 'new ShardedBloomFilter');
  const capacity = positiveInteger('capacity', opts.capacity, Number.MAX_SAFE_INTEGER);
  const errorRate = rate('errorRate', opts.errorRate);
  const s = positiveInteger('shards', opts.shards, MAX_SHARDS);
  if (s < 2) {
    throw new RangeError(
      `edgebloom: "shards" must be an integer from 2 to ${MAX_SHARDS}, got 1: a filter of one shard is a BloomFilter, as the Worker's snapshot of it is`,
    );
  }
  const per = Number((BigInt(capacity) + BigInt(s) - 1n) / BigInt(s));
  const made = [];
  try {
    made.push(newRouter(s));
    for (let i = 0; i < s; i++) made.push(new BloomFilter({ capacity: per, errorRate }));
  } catch (err) {
    for (const f of made) f.free();
    throw err;
  }
  return made;
}

// isRouter reports whether f is the router of s shards: m = s, k = 1, no
// bits set and the seed ROUTE_SEED.
function isRouter(f, s) {
  if (f.bits !== s || f.hashes !== 1 || f.setBits !== 0) return false;
  const seed = new DataView(f.readBytes(RECORD_AT_SEED, RECORD_AT_SEED + 8).buffer).getBigUint64(0, true);
  return seed === ROUTE_SEED;
}

// route returns the engine's handle of router and shards together
// (OP_ROUTED), or 0 when the engine does not route them: shards of
// different seeds.
function route(router, shards) {
  const fs = [router, ...shards];
  const [e] = reach(router);
  const at = scratch(e, 4 * fs.length) >>> 2;
  const u32 = mem32(e);
  fs.forEach((f, i) => (u32[at + i] = reach(f)[1]));
  try {
    return call(e, OP_ROUTED, 0, 0, fs.length);
  } catch (err) {
    if (err.code === 'ERR_KIND') return 0;
    throw err;
  }
}

/**
 * A filter split into shards, as the edgebloom Worker keeps one: each key
 * lives in exactly one shard, which the router picks. It has the getters,
 * batches and statistics of a BloomFilter, over all its shards.
 */
export class ShardedBloomFilter {
  #router;
  #shards;
  // The engine's handle of this filter's router and shards together
  // (OP_ROUTED), which the keys export takes with KEY_ROUTED; 0 for shards
  // of different seeds, which the engine does not route (then each key
  // goes to its shard from here).
  #set = 0;

  /**
   * A new, empty filter of the Worker's shards for these parameters:
   * `new ShardedBloomFilter({ capacity, errorRate, shards })` holds, key for
   * key, the bytes of the Worker's snapshot of a filter made with them.
   * (Given a router and its shards, BloomFilters, it takes them over.)
   */
  constructor(opts, ...internal) {
    let router;
    let shards;
    if (opts === CONSTRUCT) [router, shards] = internal;
    else if (opts instanceof BloomFilter) {
      [router, shards] = [opts, internal[0]];
      if (
        !Array.isArray(shards) ||
        shards.length < 2 ||
        !shards.every((f) => f instanceof BloomFilter) ||
        new Set([router, ...shards]).size !== shards.length + 1 ||
        !isRouter(router, shards.length)
      ) {
        throw new TypeError(
          'edgebloom: new ShardedBloomFilter(router, shards) takes the router of shards.length shards and 2 or more other BloomFilters',
        );
      }
    } else [router, ...shards] = make(opts);
    this.#router = router;
    this.#shards = shards;
    this.#set = route(router, shards);
  }

  /**
   * Loads a sharded container. Lengths are checked against the input before
   * any shard is loaded, and maxBits bounds each shard, as in Go's
   * snapshot.LoadSharded.
   */
  static fromBytes(input, opts) {
    const { bytes, maxBits } = loadArgs(input, opts);
    const s = containerShards(bytes);
    const { lengths } = containerLengths(bytes, s, bytes.length);
    // The router before the shards, as Go's snapshot.LoadSharded checks it:
    // it must be the one for s shards (a router of another seed would send
    // keys to shards that do not hold them and report present keys absent).
    // Its m is checked before it is loaded, its seed, k and bits after (so a
    // damaged router is a checksum error).
    let off = FIXED + 8 * s;
    routerHead(bytes.subarray(off), s, lengths[0]);
    // Each shard is bounded by an even share of the memory budget's room,
    // as maxBits bounds it, so that all of them and the copy of the last
    // fit: a container too large for the engine is ERR_TOO_LARGE from the
    // header of a shard, before that shard is copied in.
    const share = shardRecord(loadRoom(live()), s);
    const loaded = [];
    try {
      for (const n of lengths) {
        // As Go's snapshot.LoadSharded: the router is bounded by s, each
        // shard by maxBits (a container of s shards may hold s·maxBits bits).
        const part = bytes.subarray(off, off + n);
        loaded.push(
          loaded.length ? load(BloomFilter, part, { maxBits }, KIND_CLASSIC, undefined, share) : loadRouter(part, s),
        );
        off += n;
      }
      return assemble(loaded);
    } catch (err) {
      for (const f of loaded) f.free();
      throw err;
    }
  }

  #shardOf(key) {
    return this.#shards[this.#router.positions(key)[0]];
  }

  // engine returns the engine after checking this filter is still live.
  #engine() {
    if (this.#shards === null) throw freed();
    const e = live();
    if (dead(e)) throw engineExited();
    return e;
  }

  /** The number of shards. */
  get shards() {
    this.#engine();
    return this.#shards.length;
  }

  /** Shard i, for inspection; it stays owned by this filter. */
  shard(i) {
    this.#engine();
    return this.#shards[i];
  }

  /** Adds key to its shard and reports whether it was new. */
  add(key) {
    return this.#one(KEY_ROUTED | 1, key);
  }

  has(key) {
    return this.#one(KEY_ROUTED, key);
  }

  #one(add, key) {
    const e = this.#engine();
    // A key longer than PIECE goes to its shard from here, which hashes it
    // in pieces: the engine routes the keys it holds whole.
    maxKeyBytes(key);
    if (this.#set === 0 || key.length > PIECE) {
      const f = this.#shardOf(key);
      return add & 1 ? f.add(key) : f.has(key);
    }
    return oneKey(e, add, this.#set, key);
  }

  /** Adds every key to its shard; all or nothing, as Filter.addMany. */
  addMany(keys) {
    return this.#many(KEY_ROUTED | 1, keys);
  }

  hasMany(keys) {
    return this.#many(KEY_ROUTED, keys);
  }

  // many runs a batch in the engine, which routes each key to its shard; a
  // key longer than the engine takes whole goes to its shard from here.
  #many(add, keys) {
    const e = this.#engine();
    if (this.#set === 0) {
      checkKeys(keys);
      return keys.map((k) => this.#one(add, k));
    }
    return batchOp(e, add, this.#set, keys, (key) => this.#one(add, key));
  }

  // sum returns the sum over the shards of one of their getters, in shard
  // order as stats() sums them.
  #sum(name) {
    this.#engine();
    let t = 0;
    for (const f of this.#shards) t += f[name];
    return t;
  }

  // The getters of every filter, over all shards, equal to stats()'s
  // fields. A key probes one shard: the error rates are the shards'
  // (estimatedErrorRate their mean).
  get kind() {
    this.#engine();
    return 'sharded';
  }
  get bits() {
    return this.#sum('bits');
  }
  get hashes() {
    this.#engine();
    return this.#shards[0].hashes;
  }
  get count() {
    return this.#sum('count');
  }
  get setBits() {
    return this.#sum('setBits');
  }
  get estimatedCount() {
    return this.#sum('estimatedCount');
  }
  get fillRatio() {
    return this.#sum('setBits') / this.#sum('bits');
  }
  get estimatedErrorRate() {
    return this.#sum('estimatedErrorRate') / this.#shards.length;
  }
  get capacity() {
    return this.#sum('capacity');
  }
  get errorRate() {
    this.#engine();
    return this.#shards[0].errorRate;
  }
  get overCapacity() {
    this.#engine();
    return this.#shards.some((f) => f.overCapacity);
  }
  get byteLength() {
    return FIXED + 8 * this.#shards.length + this.#router.byteLength + this.#sum('byteLength');
  }

  /** All statistics in one object, from one pass over the bits: the getters' values. */
  stats() {
    this.#engine();
    const all = this.#shards.map((f) => f.stats());
    const sum = (name) => all.reduce((t, s) => t + s[name], 0);
    return {
      kind: 'sharded',
      bits: sum('bits'),
      hashes: all[0].hashes,
      count: sum('count'),
      setBits: sum('setBits'),
      estimatedCount: sum('estimatedCount'),
      fillRatio: sum('setBits') / sum('bits'),
      estimatedErrorRate: sum('estimatedErrorRate') / all.length,
      capacity: sum('capacity'),
      errorRate: all[0].errorRate,
      overCapacity: all.some((s) => s.overCapacity),
      layers: all.length,
      byteLength: FIXED + 8 * all.length + this.#router.byteLength + sum('byteLength'),
    };
  }

  /** Removes every key from every shard. */
  clear() {
    this.#engine();
    for (const f of this.#shards) f.clear();
  }

  /** The container, byte for byte what the Worker's snapshot endpoint writes for the same shards. */
  toBytes() {
    this.#engine();
    const parts = [this.#router.toBytes(), ...this.#shards.map((f) => f.toBytes())];
    const head = new Uint8Array(FIXED + 8 * this.#shards.length);
    const dv = new DataView(head.buffer);
    head.set(MAGIC);
    head[CONTAINER_AT_VERSION] = CONTAINER_VERSION;
    head[CONTAINER_AT_ROUTING] = CONTAINER_ROUTING;
    dv.setUint32(CONTAINER_AT_SHARDS, this.#shards.length, true);
    parts.forEach((p, i) => dv.setBigUint64(CONTAINER_AT_LENGTHS + 8 * i, BigInt(p.length), true));
    const out = new Uint8Array(head.length + parts.reduce((t, p) => t + p.length, 0));
    out.set(head);
    let off = head.length;
    for (const p of parts) {
      out.set(p, off);
      off += p.length;
    }
    return out;
  }

  /** Frees every shard. Later calls throw ERR_FREED; free() again does nothing. */
  free() {
    if (this.#shards === null) return;
    const e = live();
    if (this.#set !== 0 && !dead(e)) call(e, OP_ROUTED, this.#set, 0, 0, 1);
    this.#router.free();
    for (const f of this.#shards) f.free();
    this.#shards = null;
  }

  [Symbol.dispose]() {
    this.free();
  }
}

const truncated = () => fail('ERR_TRUNCATED', 'truncated sharded container');

/**
 * Internal: checks a container's fixed header (bytes' first FIXED bytes)
 * and returns its number of shards.
 */
export function containerShards(bytes) {
  if (bytes.length < FIXED) throw truncated();
  if (!isSharded(bytes)) throw fail('ERR_NOT_FILTER', 'not a sharded container');
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes[CONTAINER_AT_VERSION] !== CONTAINER_VERSION || bytes[CONTAINER_AT_ROUTING] !== CONTAINER_ROUTING)
    throw fail('ERR_VERSION', 'unsupported sharded container version or routing');
  const s = dv.getUint32(CONTAINER_AT_SHARDS, true);
  if (
    dv.getUint16(CONTAINER_AT_RESERVED, true) !== 0 ||
    dv.getUint32(CONTAINER_AT_RESERVED2, true) !== 0 ||
    s < 2 ||
    s > MAX_SHARDS
  ) {
    throw fail('ERR_CORRUPT', 'corrupt sharded container header');
  }
  return s;
}

/**
 * Internal: the records' lengths of a container of s shards (bytes holds
 * its header and lengths) and its whole length, checked against its input's
 * length when that is known (containerSize) before any shard is loaded.
 */
export function containerLengths(bytes, s, length) {
  if (bytes.length < FIXED + 8 * s) throw truncated();
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const lengths = [];
  for (let i = 0; i <= s; i++) lengths.push(dv.getBigUint64(CONTAINER_AT_LENGTHS + 8 * i, true));
  const total = lengths.reduce((a, n) => a + n, BigInt(FIXED + 8 * s));
  if (length !== undefined) containerSize(lengths, total, length);
  return { lengths: lengths.map(Number), declared: lengths, total };
}

/** Internal: refuses a container whose lengths do not add up to its input's length. */
export function containerSize(lengths, total, length) {
  if (lengths.some((n) => n > BigInt(length)) || total > BigInt(length)) throw truncated();
  if (total < BigInt(length)) throw fail('ERR_CORRUPT', 'trailing bytes after the sharded container');
}

const notRouter = (s) => fail('ERR_CORRUPT', `the router is not the one for ${s} shards`);

/** Internal: checks the router record's header (head, its first bytes) and length n: m must be s. */
export function routerHead(head, s, n) {
  if (n < HEADER_SIZE || new DataView(head.buffer, head.byteOffset).getBigUint64(RECORD_AT_BITS, true) !== BigInt(s))
    throw notRouter(s);
}

/** Internal: loads the router of s shards from its record. */
export function loadRouter(part, s) {
  const f = load(BloomFilter, part, { maxBits: s }, KIND_CLASSIC);
  if (!isRouter(f, s)) {
    f.free();
    throw notRouter(s);
  }
  return f;
}

/** Internal: the sharded filter of loaded filters, the router first. */
export function assemble([router, ...shards]) {
  return new ShardedBloomFilter(CONSTRUCT, router, shards);
}

/**
 * Loads a filter of any kind, or a sharded container, from bytes in the
 * documented formats.
 */
export function fromBytes(input, opts) {
  const { bytes } = loadArgs(input, opts);
  if (isSharded(bytes)) return ShardedBloomFilter.fromBytes(bytes, opts);
  return load(undefined, bytes, opts, undefined, CLASSES);
}
