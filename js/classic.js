// The classic Bloom filter (kind 1): a bit array, k positions a key by
// enhanced double hashing; and its sizing from capacity and error rate.
import { OP_UNION, OP_INTERSECT, OP_EQUAL, KIND_CLASSIC } from './abi.js';
import { optimalBits, optimalHashes, estimateFPR as fpr } from './sizing.js';
import { Filter, combine, positions } from './filter.js';
import { addManyChanges, applyChanges, readBytes, writeBytes } from './changes.js';
import { load } from './decode.js';
import { CONSTRUCT, positiveInteger, rate, sizeArgs } from './args.js';

/** A classic Bloom filter. */
export class BloomFilter extends Filter {
  /** @param {{capacity: number, errorRate: number} | {bits: number, hashes: number}} opts */
  constructor(opts, ...internal) {
    if (opts === CONSTRUCT) {
      super(CONSTRUCT, ...internal);
    } else {
      const [explicit, a, b] = sizeArgs(opts, 'new BloomFilter');
      super(CONSTRUCT, KIND_CLASSIC, explicit, a, b);
    }
  }
  positions(key) {
    return positions(this, key);
  }
  /**
   * addMany that also says which bits it set: changed holds the position of
   * every bit that turned from 0 to 1, and count is the filter's count after.
   */
  addManyChanges(keys) {
    return addManyChanges(this, keys);
  }
  /** Sets the bits addManyChanges reported, and the count it gave, on another copy. */
  applyChanges(changes) {
    applyChanges(this, changes);
  }
  /** Bytes [start, end) of toBytes(), without encoding the whole filter. */
  readBytes(start, end) {
    return readBytes(this, start, end);
  }
  /** Replaces bytes of the payload, from byte start of the encoding; the count is unchanged. */
  writeBytes(start, bytes) {
    writeBytes(this, start, bytes);
  }
  /** Adds every key of other; both must have the same bits, hashes and seed. */
  union(other) {
    combine(this, OP_UNION, other, BloomFilter);
  }
  /** Keeps only bits also set in other. */
  intersect(other) {
    combine(this, OP_INTERSECT, other, BloomFilter);
  }
  equals(other) {
    return combine(this, OP_EQUAL, other, BloomFilter) === 1;
  }
  static fromBytes(bytes, opts) {
    return load(BloomFilter, bytes, opts, KIND_CLASSIC);
  }
}

/**
 * The bits m and hashes k for capacity n at error rate p:
 * m = ceil(-n ln p / ln²2), k = max(1, round(ln 2 · m / n)). The rules are
 * Go's (internal/abi/sizing.go, generated into sizing.js), so they work
 * before init() and give what the engine gives.
 */
export function optimal(capacity, errorRate) {
  const n = positiveInteger('capacity', capacity, Number.MAX_SAFE_INTEGER);
  const p = rate('errorRate', errorRate);
  const bits = optimalBits(n, p);
  return { bits, hashes: optimalHashes(bits, n) };
}

/** The expected false-positive rate (1 - e^(-kn/m))^k after n keys, as Go's. */
export function estimateFPR(bits, hashes, count) {
  positiveInteger('bits', bits, Number.MAX_SAFE_INTEGER);
  positiveInteger('hashes', hashes, 64);
  if (typeof count !== 'number' || !(count >= 0)) throw new RangeError('edgebloom: "count" must be a number >= 0');
  return fpr(bits, hashes, count);
}
