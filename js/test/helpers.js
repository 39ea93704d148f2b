// Shared by the Node tests.

// crawlerURLs returns n distinct URL-like keys, the same on every call.
export function crawlerURLs(n, prefix = 'https://www.example') {
  const out = new Array(n);
  for (let i = 0; i < n; i++) out[i] = `${prefix}${i % 97}.com/path/${i}/page-${(i * 2654435761) >>> 0}.html`;
  return out;
}

// shardedContainer builds a container as the Worker does: a router with
// m = shards and k = 1, then the shards. The Worker's router has seed
// 0x9e3779b97f4a7c15, which the JS API cannot make; this one has seed 0, and
// routing only needs the container to agree with itself. Real Worker
// snapshots are loaded in worker/test.
export function shardedContainer({ BloomFilter, ShardedBloomFilter }, shardCount, keys) {
  const router = new BloomFilter({ bits: shardCount, hashes: 1 });
  const shards = Array.from({ length: shardCount }, () => new BloomFilter({ capacity: keys.length, errorRate: 0.01 }));
  const f = new ShardedBloomFilter(router, shards);
  f.addMany(keys);
  const bytes = f.toBytes();
  f.free();
  return bytes;
}
