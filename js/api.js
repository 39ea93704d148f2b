// The public API shared by every entry point, except init(), which each
// entry point defines for its runtime.
export { BloomFilter, optimal, estimateFPR } from './classic.js';
export { CountingBloomFilter } from './counting.js';
export { ScalableBloomFilter } from './scalable.js';
export { WindowBloomFilter } from './window.js';
export { MAX_BITS, MAX_GENERATIONS } from './args.js';
export { DEFAULT_MEMORY_LIMIT } from './core.js';
export { BlockedBloomFilter, optimalBlocks, estimateBlockedFPR } from './blocked.js';
export { ShardedBloomFilter, fromBytes } from './sharded.js';
export { fromStream } from './stream.js';
export { canonicalURL } from './canonical.js';
export { applyDelta } from './delta.js';
export { version } from './version.js';
