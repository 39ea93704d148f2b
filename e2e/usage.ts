// Uses every export with its declared types; each @ts-expect-error line
// must be an error, so the types are not just `any`. Type-checked by the
// package and ecosystem tests against the installed package.
import {
  init,
  BloomFilter,
  CountingBloomFilter,
  ScalableBloomFilter,
  BlockedBloomFilter,
  ShardedBloomFilter,
  fromBytes,
  optimal,
  estimateFPR,
  optimalBlocks,
  estimateBlockedFPR,
  MAX_BITS,
  type Key,
  type FilterStats,
  type WasmSource,
} from 'edgebloom';

const sources: WasmSource[] = [new URL('https://example.com/edgebloom.wasm'), '/edgebloom.wasm', new Uint8Array(8)];
await init(sources[0]);
await init();
await init(undefined, { memoryLimit: 32 * 2 ** 20 });
// @ts-expect-error: the budget is a number of bytes
await init(undefined, { memoryLimit: '32MB' });
const f = new BloomFilter({ capacity: 1000, errorRate: 0.01 });
const key: Key = new TextEncoder().encode('https://example.com/');
const isNew: boolean = f.add('https://example.com/') && f.add(key);
const answers: boolean[] = f.hasMany(['a', key]);
const positions: number[] = f.positions('a');
const bytes: Uint8Array<ArrayBuffer> = f.toBytes();
const stats: FilterStats = f.stats();
const kind: 'classic' | 'counting' | 'scalable' | 'window' | 'blocked' | 'sharded' = fromBytes(bytes).kind;
const again: BloomFilter = BloomFilter.fromBytes(bytes.buffer, { maxBits: MAX_BITS });
f.union(again);
const c = new CountingBloomFilter({ bits: 1024, hashes: 3 });
const removed: boolean = c.remove('a');
const s = new ScalableBloomFilter({ initialCapacity: 100, errorRate: 0.001 });
const layers: number = s.layers;
const sh = new ShardedBloomFilter({ capacity: 1000, errorRate: 0.01, shards: 4 });
const shardedNumbers: number = sh.count + sh.bits + sh.setBits + sh.estimatedErrorRate + sh.byteLength;
const shardedKind: 'sharded' = sh.kind;
const shardedMany: boolean[] = sh.addMany(['a', key]);
const size: { bits: number; hashes: number } = optimal(1e6, 0.01);
const fpr: number = estimateFPR(size.bits, size.hashes, 1e6);
const sizedBlocks: number = optimalBlocks(1e6, 0.01);
const blockedRate: number = estimateBlockedFPR(sizedBlocks, 1e6);
const b = new BlockedBloomFilter({ capacity: 1000, errorRate: 0.01 });
const bitset: Uint8Array<ArrayBuffer> = b.parquetBitset();
const fromParquet: BlockedBloomFilter = BlockedBloomFilter.fromParquet(bitset, { maxBits: MAX_BITS });
b.union(fromParquet);
const blocks: number = new BlockedBloomFilter({ blocks: 8 }).blocks;
const blockedPositions: number[] = b.positions(key);
const sameBlocked: boolean = b.equals(BlockedBloomFilter.fromBytes(b.toBytes()));
for (const g of [f, c, s, again, b, fromParquet]) g.free();
console.log(
  isNew,
  answers,
  positions,
  stats,
  kind,
  removed,
  layers,
  fpr,
  sizedBlocks,
  blockedRate,
  blocks,
  blockedPositions,
  sameBlocked,
);

// @ts-expect-error: a key is a string or a Uint8Array
f.add(42);
// @ts-expect-error: a capacity needs an error rate
new BloomFilter({ capacity: 1000 });
// @ts-expect-error: a sharded filter needs its number of shards
new ShardedBloomFilter({ capacity: 1000, errorRate: 0.01 });
// @ts-expect-error: only a counting filter removes
f.remove('a');
// @ts-expect-error: a scalable filter takes an initial capacity
new ScalableBloomFilter({ capacity: 100, errorRate: 0.01 });
// @ts-expect-error: union takes a BloomFilter
f.union(c);
// @ts-expect-error: a split-block filter is sized by blocks, not bits and hashes
new BlockedBloomFilter({ bits: 1024, hashes: 8 });
// @ts-expect-error: union takes a BlockedBloomFilter
b.union(f);
