// The engine's memory over a shard's life, in Node, one process a size
// (linear memory never shrinks, so sizes must not share an engine): made,
// 100-key adds that report their changes, a compaction (every chunk read
// out with readBytes), a load (a fresh filter written chunk by chunk with
// writeBytes, the count and the log replayed with applyChanges), and a
// snapshot (readBytes of the whole encoding). Run from the repository root:
//
//   node worker/bench/memory.js            # every size
//   node worker/bench/memory.js 32         # one size, in MiB of bitset
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { init, BloomFilter } from 'edgebloom';
import { memoryBytes } from '../../js/test/engine.js';

const MIB = 1 << 20;
const CHUNK = MIB;

if (process.argv[2] === undefined) {
  console.log('| bitset | engine memory after make | after adds and compaction | after load | after snapshot |');
  console.log('| --- | --- | --- | --- | --- |');
  for (const mib of [1, 8, 16, 32]) {
    process.stdout.write(execFileSync(process.execPath, [fileURLToPath(import.meta.url), String(mib)]));
  }
} else {
  const mib = Number(process.argv[2]);
  await init();
  const fmt = (b) => `${(b / MIB).toFixed(1)} MiB (${(b / (mib * MIB)).toFixed(2)}x)`;
  const capacity = Math.floor((mib * MIB * 8) / 9.585) - 1000;
  const f = new BloomFilter({ capacity, errorRate: 0.01 });
  const made = memoryBytes();
  const log = [];
  for (let r = 0; r < 100; r++) {
    log.push(f.addManyChanges(Array.from({ length: 100 }, (_, i) => `https://m.example/${r}/${i}`)));
  }
  const size = f.byteLength;
  const payload = size - 72;
  for (let at = 0; at < payload; at += CHUNK) {
    f.readBytes(64 + at, 64 + Math.min(payload, at + CHUNK));
  }
  const head = f.readBytes(0, 64);
  const sum = f.readBytes(size - 8, size);
  const compacted = memoryBytes();
  // A load: chunk by chunk into a fresh filter, as store.js does.
  const chunks = [];
  for (let at = 0; at < payload; at += CHUNK) chunks.push(f.readBytes(64 + at, 64 + Math.min(payload, at + CHUNK)));
  f.free();
  const g = new BloomFilter({ capacity, errorRate: 0.01 });
  chunks.forEach((c, i) => g.writeBytes(64 + i * CHUNK, c));
  chunks.length = 0;
  g.applyChanges({ changed: [], count: Number(new DataView(head.buffer).getBigUint64(32, true)) });
  for (const c of log) g.applyChanges(c);
  if (!g.readBytes(size - 8, size).every((b, i) => b === sum[i])) throw new Error('load: checksum');
  const loaded = memoryBytes();
  g.readBytes(0); // the snapshot: a JS copy of the encoding, none in the engine
  const snapped = memoryBytes();
  console.log(`| ${mib} MiB | ${fmt(made)} | ${fmt(compacted)} | ${fmt(loaded)} | ${fmt(snapped)} |`);
}
