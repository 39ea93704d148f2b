// The CPU time a request costs workerd: one the Go front answers alone
// (401), one only a shard's Durable Object serves (a check of 100 keys sent
// to the object directly, no front), and the same check through the front
// (the front, the filter's meta object and the shard). CPU time is the
// workerd process's user + system time (/proc/PID/stat) over N requests of
// a kind, sent one at a time, so other processes on the machine do not
// count. A last row runs bench/floor (a syumai/workers Worker that answers
// 401 with net/http alone) in place of the front: what the fresh Go
// instance syumai/workers starts for every request costs before any of the
// front's code. Run from the repository root:
//
//   node worker/bench/front.js [N, default 200]
import { execFileSync } from 'node:child_process';
import { copyFileSync, readFileSync, readdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildWorker, startMiniflare, WORKER_DIR } from '../harness.js';

const N = Number(process.argv[2] ?? 200);
const TICK_MS = 10; // USER_HZ is 100 on Linux

// stat returns the fields of /proc/pid/stat after the command name.
const stat = (pid) => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');

// workerd finds the workerd processes among this process's descendants.
function workerd() {
  const kids = new Map();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const comm = readFileSync(`/proc/${d}/comm`, 'utf8').trim();
      kids.set(Number(d), { ppid: Number(stat(d)[1]), comm });
    } catch {}
  }
  const mine = new Set([process.pid]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, k] of kids) if (mine.has(k.ppid) && !mine.has(pid)) (mine.add(pid), (grew = true));
  }
  return [...mine].filter((p) => kids.get(p)?.comm === 'workerd');
}

const cpuMs = (pids) => pids.reduce((t, p) => t + (Number(stat(p)[11]) + Number(stat(p)[12])) * TICK_MS, 0);

const dir = mkdtempSync(join(tmpdir(), 'edgebloom-front-'));
try {
  const out = join(dir, 'bundle');
  buildWorker(out);
  const w = await startMiniflare(out, join(dir, 'state'));
  const pids = workerd();
  if (pids.length === 0) throw new Error('no workerd process found');
  await w.request('PUT', '/v1/filters/f', { capacity: 1_000_000, errorRate: 0.01 });
  const keys = Array.from({ length: 100 }, (_, i) => `https://front.example/${i}`);
  await w.request('POST', '/v1/filters/f/add', { keys });
  const { json: meta } = await w.hook('meta:f', '/meta');
  const shard = JSON.stringify({
    filter: 'f',
    index: 0,
    capacity: 1_000_000,
    errorRate: 0.01,
    generation: meta.generation,
  });
  const kinds = {
    'front alone (401)': () => w.request('GET', '/v1/filters/f', undefined, { token: 'wrong' }),
    'Durable Object alone (check, 100 keys)': () =>
      w.shardFetch('shard:f:0', '/check', { keys }, { 'X-Edgebloom-Shard': shard }),
    'front + Durable Objects (check, 100 keys)': () => w.request('POST', '/v1/filters/f/check', { keys }),
  };
  const rows = [];
  const measure = async (name, send, pids) => {
    for (let i = 0; i < 20; i++) await send(); // warm
    const c0 = cpuMs(pids);
    const t0 = performance.now();
    for (let i = 0; i < N; i++) {
      const res = await send();
      if (res.status >= 500) throw new Error(`${name}: ${res.status}`);
    }
    rows.push([name, (cpuMs(pids) - c0) / N, (performance.now() - t0) / N]);
  };
  for (const [name, send] of Object.entries(kinds)) await measure(name, send, pids);
  await w.dispose();
  // The floor: the same bundle with bench/floor as the Go program.
  const app = readdirSync(out).find((f) => f.endsWith('-app.wasm'));
  execFileSync(
    'go',
    [
      'build',
      '-trimpath',
      '-buildvcs=false',
      '-ldflags=-s -w -buildid=',
      '-o',
      join(dir, 'floor.wasm'),
      './bench/floor',
    ],
    {
      cwd: WORKER_DIR,
      env: { ...process.env, GOOS: 'js', GOARCH: 'wasm' },
    },
  );
  copyFileSync(join(dir, 'floor.wasm'), join(out, app));
  const f = await startMiniflare(out, join(dir, 'state2'));
  await measure('syumai/workers floor: net/http alone (401)', () => f.request('GET', '/'), workerd());
  await f.dispose();
  console.log(`| request (${N} each) | workerd CPU a request | wall time a request |`);
  console.log('| --- | --- | --- |');
  for (const [name, cpu, wall] of rows) console.log(`| ${name} | ${cpu.toFixed(2)} ms | ${wall.toFixed(2)} ms |`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
