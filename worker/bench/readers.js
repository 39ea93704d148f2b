// A crowd of readers of one filter's checkpoints (README.md, "Checkpoints:
// a crowd of readers"), under "wrangler dev" (what "npm run worker:dev"
// runs), for a large filter and a small one side by side in one run: each
// gets two checkpoints, its delta from the first to the second and the
// second's snapshot are read once (so the edge cache holds them), then
// `readers` clients read the delta and a tenth as many the snapshot, all at
// once. It reports the answers by status (a refusal is a 503), those the
// cache did not give (each one a read of the filter's shards), the time,
// and Go's memory in the front (runtime.MemStats.Sys, GET /_test/instance)
// and its budget of expensive work in use, before and after. The large
// filter is created for `capacity` keys in 4 shards and filled with `fill`
// keys (10,000 a request): the front weighs its requests from its
// parameters, not from the keys it holds. Run from the repository root:
//
//   node worker/bench/readers.js [readers, default 1000] [capacity, default 10000000] [fill, default 200000]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDev, TOKEN } from '../../testkit/worker.js';

const READERS = Number(process.argv[2] ?? 1000);
const CAPACITY = Number(process.argv[3] ?? 10_000_000);
const FILL = Number(process.argv[4] ?? 200_000);
const SHARDS = 4;

const dir = mkdtempSync(join(tmpdir(), 'edgebloom-readers-bench-'));
let w;
try {
  w = await startDev(join(dir, 'state'), {
    args: ['--var', 'EDGEBLOOM_TEST_HOOKS:1', '--var', 'EDGEBLOOM_CHECKPOINT_SECONDS:1'],
  });
  const instance = async () => (await w.request('GET', '/_test/instance')).json;
  const mib = (b) => (b / 2 ** 20).toFixed(1);
  let n = 0;
  const keys = (count) => Array.from({ length: count }, () => `https://www.example.com/page/${n++}`);

  // A filter with two checkpoints whose delta and snapshot the cache holds.
  async function prepare(name, capacity, fill) {
    const put = await w.request('PUT', `/v1/filters/${name}`, { capacity, errorRate: 0.01, shards: SHARDS });
    if (put.status !== 201) throw new Error(`PUT ${name}: ${put.status}`);
    const t0 = performance.now();
    for (let i = 0; i < fill; i += 10_000) {
      const res = await w.request('POST', `/v1/filters/${name}/add`, { keys: keys(Math.min(10_000, fill - i)) });
      if (res.status !== 200) throw new Error(`add: ${res.status}`);
    }
    const filled = (performance.now() - t0) / 1000;
    let first = 0;
    let latest;
    for (const round of [1, 2]) {
      await w.request('POST', `/v1/filters/${name}/add`, { keys: keys(1000) });
      for (const deadline = Date.now() + 60_000; ; await new Promise((r) => setTimeout(r, 200))) {
        const l = await w.request('GET', `/v1/filters/${name}/checkpoints/latest`);
        if (l.status === 200 && l.json.checkpoint > first) {
          latest = l.json;
          break;
        }
        if (Date.now() > deadline) throw new Error(`${name}: no checkpoint ${round} within 60 s`);
      }
      first ||= latest.checkpoint;
    }
    const base = `/v1/filters/${name}/checkpoints/${latest.generation}/${latest.checkpoint}`;
    const paths = { delta: `${base}/delta?from=${first}`, snapshot: `${base}/snapshot` };
    const sizes = {};
    for (const [what, path] of Object.entries(paths)) {
      const res = await w.request('GET', path);
      if (res.status !== 200) throw new Error(`${name} ${what}: ${res.status}`);
      sizes[what] = res.bytes.length;
    }
    return { name, capacity, fill, filled, paths, sizes };
  }

  // Every reader at once: the delta READERS times, the snapshot a tenth as
  // many, each read to its end.
  async function crowd(f) {
    const before = await instance();
    const reads = [...Array(READERS).fill(f.paths.delta), ...Array(READERS / 10).fill(f.paths.snapshot)];
    const statuses = {};
    let misses = 0;
    const t0 = performance.now();
    await Promise.all(
      reads.map(async (path) => {
        const res = await fetch(w.base + path, { headers: { Authorization: `Bearer ${TOKEN}` } });
        await res.arrayBuffer();
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        if (res.status === 200 && res.headers.get('X-Edgebloom-Cache') !== 'hit') misses++;
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    const after = await instance();
    return { statuses, misses, seconds, before, after };
  }

  const big = await prepare('readers-big', CAPACITY, FILL);
  const small = await prepare('readers-small', 20_000, 2_000);
  console.log(`${READERS} readers of the delta and ${READERS / 10} of the snapshot, at once, under wrangler dev:`);
  console.log(
    '| filter | delta, snapshot | answers | not from the cache | time | Go memory before → after | budget in use after |',
  );
  console.log('| --- | --- | --- | --- | --- | --- | --- |');
  for (const f of [small, big]) {
    const r = await crowd(f);
    const answers = Object.entries(r.statuses)
      .map(([s, c]) => `${c} × ${s}`)
      .join(', ');
    console.log(
      `| ${f.capacity.toLocaleString('en')} keys in ${SHARDS} shards, ${f.fill.toLocaleString('en')} added (in ${f.filled.toFixed(0)} s) | ` +
        `${f.sizes.delta.toLocaleString('en')} B, ${f.sizes.snapshot.toLocaleString('en')} B | ${answers} | ${r.misses} | ${r.seconds.toFixed(1)} s | ` +
        `${mib(r.before.memoryBytes)} → ${mib(r.after.memoryBytes)} MiB | ${r.after.heavyBytes} B |`,
    );
  }
} finally {
  await w?.stop();
  rmSync(dir, { recursive: true, force: true });
}
