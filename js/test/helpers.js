// Shared by the Node tests.

// XXH64 in BigInt (the demo's), for the few bytes of a router record's checksum.
import { xxh64 } from '../../web-demo/xxh64.js';

// crawlerURLs returns n distinct URL-like keys, the same on every call.
export function crawlerURLs(n, prefix = 'https://www.example') {
  const out = new Array(n);
  for (let i = 0; i < n; i++) out[i] = `${prefix}${i % 97}.com/path/${i}/page-${(i * 2654435761) >>> 0}.html`;
  return out;
}

// routerBytes is the router record of a sharded container for shardCount
// shards, as Go's snapshot.Router writes it: a classic filter with
// m = shardCount, k = 1, seed 0x9e3779b97f4a7c15 and no bits set. The JS API
// makes filters of seed 0 only, so the record is written here.
export function routerBytes(shardCount) {
  const words = Math.ceil(shardCount / 64);
  const b = new Uint8Array(64 + 8 * words + 8);
  const dv = new DataView(b.buffer);
  b.set([0x45, 0x42, 0x4c, 0x4d, 1, 1, 1, 0]); // "EBLM", version 1, classic, XXH64, no flags
  dv.setBigUint64(8, 0x9e3779b97f4a7c15n, true);
  dv.setBigUint64(16, BigInt(shardCount), true);
  dv.setUint32(24, 1, true);
  dv.setBigUint64(56, BigInt(8 * words), true);
  dv.setBigUint64(b.length - 8, xxh64(b.subarray(0, b.length - 8)), true);
  return b;
}

// shardedContainer builds a container as the Worker does: the router of
// routerBytes, then the shards, every key in the shard the router gives it.
export function shardedContainer({ BloomFilter, ShardedBloomFilter }, shardCount, keys) {
  const router = BloomFilter.fromBytes(routerBytes(shardCount));
  const shards = Array.from({ length: shardCount }, () => new BloomFilter({ capacity: keys.length, errorRate: 0.01 }));
  const f = new ShardedBloomFilter(router, shards);
  f.addMany(keys);
  const bytes = f.toBytes();
  f.free();
  return bytes;
}
