// The split-block kind (kind 5): Apache Parquet's Split Block Bloom Filter
// over the Go engine's bloom.BlockedFilter. A key's eight bits all lie in
// one 256-bit block, one bit in each of its eight 32-bit words, so an add
// or a has touches one cache line where a classic filter of the same rate
// touches about seven; the price is about 11 % more bits for the same rate.

import {
  OP_UNION,
  OP_INTERSECT,
  OP_EQUAL,
  OP_OPTIMAL_BLOCKS,
  OP_BLOCKED_FPR,
  KIND_BLOCKED,
  BLOCK_BITS,
} from './abi.js';
import { engineNumber } from './core.js';
import { Filter, combine, positions } from './filter.js';
import { parquetBitset } from './changes.js';
import { fromParquet, load } from './decode.js';
import { CONSTRUCT, MAX_BITS, options, positiveInteger, rate } from './args.js';

// blockedArgs validates { capacity, errorRate, forParquet } or { blocks }.
function blockedArgs(opts) {
  opts = options(opts, 'new BlockedBloomFilter');
  if (opts.blocks !== undefined) return [1, positiveInteger('blocks', opts.blocks, MAX_BITS / BLOCK_BITS), 0];
  if (opts.bits !== undefined || opts.hashes !== undefined) {
    throw new TypeError(
      'edgebloom: new BlockedBloomFilter takes { capacity, errorRate } or { blocks } (256 bits each), not "bits" and "hashes"',
    );
  }
  if (opts.forParquet !== undefined && typeof opts.forParquet !== 'boolean') {
    throw new TypeError(
      `edgebloom: new BlockedBloomFilter: "forParquet" must be a boolean, got ${typeof opts.forParquet}`,
    );
  }
  // Sizing 2: Go's ParquetBlocks, a power of two of blocks.
  const sizing = opts.forParquet ? 2 : 0;
  return [
    sizing,
    positiveInteger('capacity', opts.capacity, Number.MAX_SAFE_INTEGER),
    rate('errorRate', opts.errorRate),
  ];
}

/**
 * A split-block Bloom filter, byte for byte Parquet's: its parquetBitset()
 * is what a Parquet file stores for a column whose values are the keys.
 */
export class BlockedBloomFilter extends Filter {
  /** @param {{capacity: number, errorRate: number, forParquet?: boolean} | {blocks: number}} opts */
  constructor(opts, ...internal) {
    if (opts === CONSTRUCT) {
      super(CONSTRUCT, ...internal);
    } else {
      const [explicit, a, b] = blockedArgs(opts);
      super(CONSTRUCT, KIND_BLOCKED, explicit, a, b);
    }
  }
  /** The eight bits of key, one in each 32-bit word of its block: 256·block + 32·word + bit. */
  positions(key) {
    return positions(this, key);
  }
  /** The number of 256-bit blocks. */
  get blocks() {
    return this.bits / BLOCK_BITS;
  }
  /** Adds every key of other; both must have the same number of blocks. */
  union(other) {
    combine(this, OP_UNION, other, BlockedBloomFilter);
  }
  /** Keeps only bits also set in other. */
  intersect(other) {
    combine(this, OP_INTERSECT, other, BlockedBloomFilter);
  }
  equals(other) {
    return combine(this, OP_EQUAL, other, BlockedBloomFilter) === 1;
  }
  /** The bitset as a Parquet file stores it after the BloomFilterHeader: 32 bytes a block. */
  parquetBitset() {
    return parquetBitset(this);
  }
  static fromBytes(bytes, opts) {
    return load(BlockedBloomFilter, bytes, opts, KIND_BLOCKED);
  }
  /** A filter whose bits are a copy of a Parquet split-block bitset. */
  static fromParquet(bytes, opts) {
    return fromParquet(BlockedBloomFilter, bytes, opts);
  }
}

/**
 * The number of 256-bit blocks of the split-block filter new
 * BlockedBloomFilter({ capacity, errorRate }) makes: Go's OptimalBlocks, the
 * fewest blocks whose expected rate after capacity keys is at most
 * 0.9 · errorRate. Needs init().
 */
export function optimalBlocks(capacity, errorRate) {
  const n = positiveInteger('capacity', capacity, Number.MAX_SAFE_INTEGER);
  return engineNumber(OP_OPTIMAL_BLOCKS, n, rate('errorRate', errorRate));
}

/**
 * The expected false-positive rate of a split-block filter of `blocks`
 * blocks after count keys: Σ_j Poisson(j; count/blocks) · (1 − (31/32)^j)^8
 * (Go's EstimateBlockedFPR). Needs init().
 */
export function estimateBlockedFPR(blocks, count) {
  positiveInteger('blocks', blocks, MAX_BITS);
  if (typeof count !== 'number' || !Number.isSafeInteger(count) || count < 0) {
    throw new RangeError(`edgebloom: "count" must be an integer >= 0, got ${count}`);
  }
  return engineNumber(OP_BLOCKED_FPR, blocks, count);
}
