// What a shard's JavaScript does for a check of 100 keys, step by step, in
// Node with the same npm module (the Durable Object's round trip is not in
// it: worker/bench/front.js measures that), and what a load's checks cost
// on 28 MiB: the chunks' CRC-32 in JS beside the whole encoding's XXH64 in
// the engine. Run from the repository root after `npm run build`:
//
//   node worker/bench/shard-cost.js
import { init, BloomFilter } from '../../js/node.js';
import { crc32 } from '../shard/store.js';

await init(undefined, { memoryLimit: 72 * 2 ** 20 });
const f = new BloomFilter({ capacity: 1_000_000, errorRate: 0.01 });
const keys = Array.from({ length: 100 }, (_, i) => `https://front.example/${i}`);
f.addMany(keys);
const body = JSON.stringify({ keys });
const header = JSON.stringify({ filter: 'f', index: 0, capacity: 1_000_000, errorRate: 0.01, generation: Date.now() });
const parsed = JSON.parse(body).keys;
const present = f.hasMany(parsed);
const N = 20_000;
const us = (fn) => {
  for (let i = 0; i < 2000; i++) fn();
  const t = performance.now();
  for (let i = 0; i < N; i++) fn();
  return (((performance.now() - t) / N) * 1000).toFixed(1);
};
console.log(`a check of 100 keys, µs (mean of ${N}):`);
console.log(`  X-Edgebloom-Shard JSON.parse ${us(() => JSON.parse(header))}`);
console.log(`  body JSON.parse ${us(() => JSON.parse(body))}`);
console.log(`  hasMany(100) ${us(() => f.hasMany(parsed))}`);
console.log(`  answer JSON.stringify ${us(() => JSON.stringify({ present }))}`);
console.log(
  `  all of it ${us(() => JSON.stringify({ present: f.hasMany(JSON.parse(body).keys), p: JSON.parse(header) }))}`,
);
f.free();

const big = new BloomFilter({ capacity: 25_000_000, errorRate: 0.01 });
const chunk = new Uint8Array(1 << 20).map((_, i) => i * 7);
const n = Math.floor((big.byteLength - 72) / chunk.length);
for (let i = 0; i < n; i++) big.writeBytes(64 + i * chunk.length, chunk);
let t = performance.now();
for (let i = 0; i < n; i++) crc32(chunk);
const crcMs = performance.now() - t;
t = performance.now();
big.applyChanges({ changed: [], count: 1 });
big.readBytes(big.byteLength - 8, big.byteLength);
const sumMs = performance.now() - t;
console.log(
  `a load's checks on ${n} MiB: CRC-32 of every chunk in JS ${crcMs.toFixed(0)} ms, the XXH64 of the whole encoding ${sumMs.toFixed(0)} ms`,
);
big.free();
