// What a shard that gave its filter back costs its next request, and the
// memory the isolate holds, in workerd (Miniflare, the Worker built as
// wrangler deploy builds it). For one-shard filters at 1% of 1 to 32 MiB:
// the median wall time of a check of 100 keys with the filter in memory,
// beside one right after POST /_test/evict (the next request loads it
// from storage), in the same run. Then two shards of 28.6 MiB (a 50 M-key
// filter at 1%) live at once: the engine's linear memory, and what a
// snapshot of that filter adds to workerd's resident memory at its peak
// (the process's VmHWM, reset through /proc/PID/clear_refs before it,
// less its VmRSS then); and the Go front's memory after 200 adds of 500
// keys. Run from the repository root:
//
//   node worker/bench/reload.js [rounds, default 9]
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildWorker, startWorker } from '../../testkit/worker.js';

const ROUNDS = Number(process.argv[2] ?? 9);
const MiB = 2 ** 20;
const median = (a) => a.sort((x, y) => x - y)[a.length >> 1];
const time = async (fn) => {
  const t = performance.now();
  await fn();
  return performance.now() - t;
};

// workerd returns the workerd processes among this process's descendants.
function workerd() {
  const parent = new Map();
  const comm = new Map();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      parent.set(Number(d), Number(readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1].split(' ')[1]));
      comm.set(Number(d), readFileSync(`/proc/${d}/comm`, 'utf8').trim());
    } catch {}
  }
  const mine = new Set([process.pid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const [pid, ppid] of parent) if (mine.has(ppid) && !mine.has(pid)) (mine.add(pid), (grew = true));
  }
  return [...mine].filter((p) => comm.get(p) === 'workerd');
}
const status = (pid, field) =>
  Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'))[1]) * 1024;

const dir = mkdtempSync(join(tmpdir(), 'edgebloom-reload-'));
try {
  buildWorker(join(dir, 'bundle'));
  const w = await startWorker(join(dir, 'bundle'), join(dir, 'state'));
  const keys = Array.from({ length: 100 }, (_, i) => `https://reload.example/${i}`);
  console.log('| shard | check, in memory | check that loads the shard first | the load |');
  console.log('| --- | --- | --- | --- |');
  for (const [name, capacity] of [
    ['r1', 100_000],
    ['r8', 7_000_000],
    ['r28', 25_000_000],
    ['r32', 28_000_000],
  ]) {
    await w.request('PUT', `/v1/filters/${name}`, { capacity, errorRate: 0.01 });
    await w.request('POST', `/v1/filters/${name}/add`, { keys });
    const warm = [];
    const cold = [];
    const check = () => w.request('POST', `/v1/filters/${name}/check`, { keys });
    for (let i = 0; i < ROUNDS; i++) {
      warm.push(await time(check));
      await w.hook(`shard:${name}:0`, '/_test/evict', {});
      cold.push(await time(check));
    }
    const bytes = (await w.request('GET', `/v1/filters/${name}`)).json.total.byteLength;
    const [m, c] = [median(warm), median(cold)];
    console.log(
      `| ${(bytes / MiB).toFixed(1)} MiB | ${m.toFixed(1)} ms | ${c.toFixed(1)} ms | ${(c - m).toFixed(0)} ms |`,
    );
    await w.request('DELETE', `/v1/filters/${name}`);
  }
  await w.request('PUT', '/v1/filters/two', { capacity: 50_000_000, errorRate: 0.01, shards: 2 });
  const many = Array.from({ length: 64 }, (_, i) => `https://reload.example/two/${i}`);
  await w.request('POST', '/v1/filters/two/add', { keys: many });
  const counters = (await w.hook('shard:two:0', '/_test/counters')).json;
  console.log(
    `two shards of 28.6 MiB live: engine linear memory ${(counters.memoryBytes / MiB).toFixed(1)} MiB, ` +
      `budget used ${(counters.memoryBudget.used / MiB).toFixed(1)} of ${(counters.memoryBudget.limit / MiB).toFixed(0)} MiB`,
  );
  const pids = workerd();
  for (let i = 0; i < 3; i++) {
    const rss = pids.map((p) => status(p, 'VmRSS'));
    for (const p of pids) writeFileSync(`/proc/${p}/clear_refs`, '5');
    const snap = await w.request('GET', '/v1/filters/two/snapshot');
    const peak = pids.reduce((t, p, j) => t + status(p, 'VmHWM') - rss[j], 0);
    console.log(
      `a snapshot of it (${(snap.bytes.length / MiB).toFixed(1)} MiB, status ${snap.status}): ` +
        `workerd's resident memory peaked ${(peak / MiB).toFixed(1)} MiB above where it was`,
    );
  }
  await w.request('PUT', '/v1/filters/front', { capacity: 100_000, errorRate: 0.01, shards: 4 });
  for (let i = 0; i < 200; i++) {
    const batch = Array.from({ length: 500 }, (_, j) => `https://reload.example/front/${i}/${j}`);
    await w.request('POST', '/v1/filters/front/add', { keys: batch });
  }
  const front = (await w.request('GET', '/_test/instance')).json;
  console.log(
    `the Go front after 200 adds of 500 keys: ${(front.memoryBytes / MiB).toFixed(1)} MiB taken from the host`,
  );
  await w.dispose();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
