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
export { canonicalURL } from './canonical.js';
// Internal, for tests of what happens after the engine stopped (the edge
// service's Durable Object test hook): not part of the documented API.
export { _crashEngine, _memoryBudget, _memoryBytes } from './core.js';
export { applyDelta } from './delta.js';
