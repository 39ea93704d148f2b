// Add and check latency, bytes written per add, and what compaction, a load
// and a snapshot cost, at shard sizes of 1 MiB, 8 MiB and the cap, in
// a real workerd (Miniflare, the Worker built as "wrangler deploy" builds
// it). Each size is a one-shard filter sized so that its bitset has that
// many bytes at a 1% error rate; requests go through the Go front, one at a
// time. Run from the repository root:
//
//   node worker/bench/shards.js [requests per size, default 60]
//
// It prints a Markdown table (README.md, "Shards: adds, checks, compaction, loads, snapshots").
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildWorker, startWorker } from '../../testkit/worker.js';

const N = Number(process.argv[2] ?? 60);
const KEYS = 100;
const MIB = 1 << 20;
const BITS_PER_KEY = 9.585; // at 1%
const SIZES = [1, 8, 32]; // MiB of bitset

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const p90 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.9)];

const dir = mkdtempSync(join(tmpdir(), 'edgebloom-bench-'));
try {
  const out = join(dir, 'bundle');
  buildWorker(out);
  const w = await startWorker(out, join(dir, 'state'));
  const sizes = [];
  for (const mib of SIZES) {
    const name = `b${mib}`;
    const capacity = Math.floor((mib * MIB * 8) / BITS_PER_KEY) - 1000;
    const put = await w.request('PUT', `/v1/filters/${name}`, { capacity, errorRate: 0.01 });
    if (put.status !== 201) throw new Error(`PUT ${mib} MiB: ${put.status} ${JSON.stringify(put.json)}`);
    sizes.push({ mib, name, object: `shard:${name}:0`, add: [], written: [], check: [] });
  }
  const info = async (s) => (await w.hook(s.object, '/_test/counters')).json;
  const time = async (path, body) => {
    const t = performance.now();
    const res = await w.request('POST', path, body);
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.json)}`);
    return performance.now() - t;
  };
  // Each round goes through the sizes in a shuffled order, so that the load
  // of the machine and the order weigh on all alike; the first WARM rounds
  // (the shards made, the engines started and warm) are not counted.
  const WARM = 10;
  let seed = 1;
  const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
  for (let r = -WARM; r < N; r++) {
    const order = sizes
      .map((s) => [random(), s])
      .sort((a, b) => a[0] - b[0])
      .map(([, s]) => s);
    for (const s of order) {
      const keys = Array.from({ length: KEYS }, (_, i) => `https://bench.example/${s.mib}/${r}/${i}`);
      const before = (await info(s)).bytesWritten;
      const add = await time(`/v1/filters/${s.name}/add`, { keys });
      const written = (await info(s)).bytesWritten - before;
      const check = await time(`/v1/filters/${s.name}/check`, { keys });
      if (r < 0) continue;
      s.add.push(add);
      s.written.push(written);
      s.check.push(check);
    }
  }
  const rows = [];
  for (const s of sizes) {
    // A compaction of what was logged, then a load from the chunks alone,
    // then a snapshot.
    const { logBytes: logged, bytesWritten: before } = await info(s);
    let t = performance.now();
    const compacted = (await w.hook(s.object, '/_test/compact', {})).json;
    const compactMs = performance.now() - t;
    const compactBytes = compacted.bytesWritten - before;
    await w.hook(s.object, '/_test/evict', {});
    t = performance.now();
    await time(`/v1/filters/${s.name}/check`, { keys: ['warm-up'] });
    const loadMs = performance.now() - t;
    t = performance.now();
    const snap = await w.request('GET', `/v1/filters/${s.name}/snapshot`);
    if (snap.status !== 200) throw new Error(`snapshot: ${snap.status} ${JSON.stringify(snap.json)}`);
    const snapMs = performance.now() - t;
    rows.push({ ...s, logged, compactMs, compactBytes, loadMs, snapMs });
    await w.request('DELETE', `/v1/filters/${s.name}`);
  }
  await w.dispose();
  const base = median(rows[0].add);
  const [load] = (await import('node:os')).loadavg();
  console.log(`${N} rounds, load average ${load.toFixed(1)} at the end`);
  console.log(
    `| shard | add ${KEYS} keys, median (p90) | vs 1 MiB | bytes written an add, median (max) | check ${KEYS} keys, median (p90) | compaction of ${N} adds | load | snapshot |`,
  );
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const r of rows) {
    console.log(
      `| ${r.mib} MiB | ${median(r.add).toFixed(1)} ms (${p90(r.add).toFixed(1)}) | ${(median(r.add) / base).toFixed(2)}x | ` +
        `${median(r.written)} B (${Math.max(...r.written)}) | ${median(r.check).toFixed(1)} ms (${p90(r.check).toFixed(1)}) | ` +
        `${r.compactMs.toFixed(0)} ms: ${(r.logged / 1024).toFixed(0)} KiB of log, ${(r.compactBytes / MIB).toFixed(2)} MiB written | ${r.loadMs.toFixed(0)} ms | ${r.snapMs.toFixed(0)} ms |`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
