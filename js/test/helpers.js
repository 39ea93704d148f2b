// Shared by the Node tests.

// crawlerURLs returns n distinct URL-like keys, the same on every call.
export function crawlerURLs(n, prefix = 'https://www.example') {
  const out = new Array(n);
  for (let i = 0; i < n; i++) out[i] = `${prefix}${i % 97}.com/path/${i}/page-${(i * 2654435761) >>> 0}.html`;
  return out;
}

// xxh64 is XXH64 (seed 0) in BigInt arithmetic: slow, for the few bytes of
// a router record's checksum.
function xxh64(bytes) {
  const M = (1n << 64n) - 1n;
  const P1 = 11400714785074694791n;
  const P2 = 14029467366897019727n;
  const P3 = 1609587929392839161n;
  const P4 = 9650029242287828579n;
  const P5 = 2870177450012600261n;
  const rotl = (x, r) => ((x << r) | (x >> (64n - r))) & M;
  const round = (acc, v) => (rotl((acc + v * P2) & M, 31n) * P1) & M;
  const merge = (h, v) => ((((h ^ round(0n, v)) * P1) & M) + P4) & M;
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = bytes.length;
  let i = 0;
  let h;
  if (n >= 32) {
    let v1 = (P1 + P2) & M;
    let v2 = P2;
    let v3 = 0n;
    let v4 = (M + 1n - P1) & M;
    for (; i + 32 <= n; i += 32) {
      v1 = round(v1, dv.getBigUint64(i, true));
      v2 = round(v2, dv.getBigUint64(i + 8, true));
      v3 = round(v3, dv.getBigUint64(i + 16, true));
      v4 = round(v4, dv.getBigUint64(i + 24, true));
    }
    h = (rotl(v1, 1n) + rotl(v2, 7n) + rotl(v3, 12n) + rotl(v4, 18n)) & M;
    h = merge(merge(merge(merge(h, v1), v2), v3), v4);
  } else {
    h = P5;
  }
  h = (h + BigInt(n)) & M;
  for (; i + 8 <= n; i += 8) h = ((rotl(h ^ round(0n, dv.getBigUint64(i, true)), 27n) * P1) & M) + P4 & M;
  for (; i + 4 <= n; i += 4) h = ((rotl(h ^ ((BigInt(dv.getUint32(i, true)) * P1) & M), 23n) * P2) & M) + P3 & M;
  for (; i < n; i++) h = (rotl(h ^ ((BigInt(bytes[i]) * P5) & M), 11n) * P1) & M;
  h ^= h >> 33n;
  h = (h * P2) & M;
  h ^= h >> 29n;
  h = (h * P3) & M;
  h ^= h >> 32n;
  return h;
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
