// The counting Bloom filter (kind 2): 4-bit counters, so keys can be removed.
import { OP_EQUAL, KIND_COUNTING } from './abi.js';
import { Filter, combine, positions, remove } from './filter.js';
import { load } from './decode.js';
import { CONSTRUCT, sizeArgs } from './args.js';

/** A Bloom filter of 4-bit counters that supports remove(). */
export class CountingBloomFilter extends Filter {
  constructor(opts, ...internal) {
    if (opts === CONSTRUCT) {
      super(CONSTRUCT, ...internal);
    } else {
      const [explicit, a, b] = sizeArgs(opts, 'new CountingBloomFilter');
      super(CONSTRUCT, KIND_COUNTING, explicit, a, b);
    }
  }
  positions(key) {
    return positions(this, key);
  }
  /** Removes key; false, and no change, when it is certainly absent. */
  remove(key) {
    return remove(this, key);
  }
  equals(other) {
    return combine(this, OP_EQUAL, other, CountingBloomFilter) === 1;
  }
  static fromBytes(bytes, opts) {
    return load(CountingBloomFilter, bytes, opts, KIND_COUNTING);
  }
}
