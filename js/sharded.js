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
} from './abi.js';
import { loadArgs } from './args.js';
import { codedError } from './errors.js';
import { checkKeys } from './keys.js';
import { load } from './decode.js';
import { live, loadRoom, shardRecord } from './core.js';
import { BloomFilter } from './classic.js';
import { CountingBloomFilter } from './counting.js';
import { ScalableBloomFilter } from './scalable.js';
import { WindowBloomFilter } from './window.js';
import { BlockedBloomFilter } from './blocked.js';

// The class of each kind, for the loader of any kind.
const CLASSES = {
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

/** A filter split into shards; each key lives in exactly one of them. */
export class ShardedBloomFilter {
  #router;
  #shards;

  constructor(router, shards) {
    if (!(router instanceof BloomFilter) || !Array.isArray(shards) || shards.length < 2) {
      throw new TypeError('edgebloom: a ShardedBloomFilter comes from ShardedBloomFilter.fromBytes');
    }
    this.#router = router;
    this.#shards = shards;
  }

  /**
   * Loads a sharded container. Lengths are checked against the input before
   * any shard is loaded, and maxBits bounds each shard, as in Go's
   * snapshot.LoadSharded.
   */
  static fromBytes(input, opts) {
    const { bytes, maxBits } = loadArgs(input, opts);
    if (bytes.length < FIXED) throw fail('ERR_TRUNCATED', 'truncated sharded container');
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
    if (bytes.length < FIXED + 8 * s) throw fail('ERR_TRUNCATED', 'truncated sharded container');
    const lengths = [];
    let total = FIXED + 8 * s;
    for (let i = 0; i <= s; i++) {
      const n = dv.getBigUint64(CONTAINER_AT_LENGTHS + 8 * i, true);
      if (n > BigInt(bytes.length)) throw fail('ERR_TRUNCATED', 'truncated sharded container');
      lengths.push(Number(n));
      total += Number(n);
    }
    if (total > bytes.length) throw fail('ERR_TRUNCATED', 'truncated sharded container');
    if (total < bytes.length) throw fail('ERR_CORRUPT', 'trailing bytes after the sharded container');
    // The router before the shards, as Go's snapshot.LoadSharded checks it:
    // it must be the one for s shards (a router of another seed would send
    // keys to shards that do not hold them and report present keys absent).
    // Its m is checked before it is loaded, its seed, k and bits after (so a
    // damaged router is a checksum error).
    const at = FIXED + 8 * s;
    if (lengths[0] < HEADER_SIZE || dv.getBigUint64(at + RECORD_AT_BITS, true) !== BigInt(s)) {
      throw fail('ERR_CORRUPT', `the router is not the one for ${s} shards`);
    }
    // Each shard is bounded by an even share of the memory budget's room,
    // as maxBits bounds it, so that all of them and the copy of the last
    // fit: a container too large for the engine is ERR_TOO_LARGE from the
    // header of a shard, before that shard is copied in.
    const share = shardRecord(loadRoom(live()), s);
    const loaded = [];
    try {
      let off = FIXED + 8 * s;
      for (const n of lengths) {
        // As Go's snapshot.LoadSharded: the router is bounded by s, each
        // shard by maxBits (a container of s shards may hold s·maxBits bits).
        const part = bytes.subarray(off, off + n);
        const f = loaded.length
          ? load(BloomFilter, part, { maxBits }, KIND_CLASSIC, undefined, share)
          : load(BloomFilter, part, { maxBits: s }, KIND_CLASSIC);
        loaded.push(f);
        if (
          loaded.length === 1 &&
          (dv.getBigUint64(at + RECORD_AT_SEED, true) !== ROUTE_SEED ||
            f.bits !== s ||
            f.hashes !== 1 ||
            f.setBits !== 0)
        ) {
          throw fail('ERR_CORRUPT', `the router is not the one for ${s} shards`);
        }
        off += n;
      }
      const [router, ...shards] = loaded;
      return new ShardedBloomFilter(router, shards);
    } catch (err) {
      for (const f of loaded) f.free();
      throw err;
    }
  }

  #shardOf(key) {
    return this.#shards[this.#router.positions(key)[0]];
  }

  /** The number of shards. */
  get shards() {
    return this.#shards.length;
  }

  /** Shard i, for inspection; it stays owned by this filter. */
  shard(i) {
    return this.#shards[i];
  }

  /** Adds key to its shard and reports whether it was new. */
  add(key) {
    return this.#shardOf(key).add(key);
  }

  has(key) {
    return this.#shardOf(key).has(key);
  }

  /** Adds every key; a TypeError for one of them means none was added. */
  addMany(keys) {
    checkKeys(keys);
    return keys.map((k) => this.add(k));
  }

  hasMany(keys) {
    checkKeys(keys);
    return keys.map((k) => this.has(k));
  }

  /** Statistics over all shards. A key probes one shard, so the error rate is the shards' mean. */
  stats() {
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

  get kind() {
    return 'sharded';
  }

  /** The container, byte for byte what the Worker's snapshot endpoint writes for the same shards. */
  toBytes() {
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

  /** Frees every shard. */
  free() {
    this.#router.free();
    for (const f of this.#shards) f.free();
  }

  [Symbol.dispose]() {
    this.free();
  }
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
