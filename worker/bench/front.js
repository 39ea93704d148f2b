// What a request costs workerd in CPU time, side by side in one run:
//
// - the floors: a JS Worker answering 401 (workerd's own), and
//   syumai/workers' own template (its generated entry module, a fresh Go
//   instance a request) with a Go program answering 401 with net/http
//   alone (bench/floor), the anchor every row is a ratio to;
// - the front: a 401, a check of 100 keys and an add of 10 new keys,
//   each through the front, the filter's meta object and the shard;
// - a shard alone: a check of 100 keys sent straight to the Durable
//   Object, and a round trip to it that does nothing (GET of an unknown
//   meta object's /meta, a 404), whose difference is the shard's own work.
//
// CPU time is the workerd processes' user + system time (/proc/PID/stat)
// over N requests of a kind, sent one at a time after 20 of warm-up, so
// other processes on the machine do not count. Run from the repository
// root:
//
//   node worker/bench/front.js [N, default 300] [worker dir, default worker/]
//
// With another checkout's worker/ as the second argument it measures that
// Worker with the same floors (a "before" beside an "after").
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Miniflare } from 'miniflare';
import { client, startWorker, TOKEN, WORKER_DIR, WRANGLER } from '../../testkit/worker.js';
import { bundleOptions } from '../../testkit/workerd.js';

const N = Number(process.argv[2] ?? 300);
const workerDir = resolve(process.argv[3] ?? WORKER_DIR);
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

const rows = [];
async function measure(name, send) {
  const pids = workerd();
  if (pids.length === 0) throw new Error('no workerd process found');
  for (let i = 0; i < 20; i++) await send(-1 - i); // warm
  const c0 = cpuMs(pids);
  const t0 = performance.now();
  for (let i = 0; i < N; i++) {
    const res = await send(i);
    if (res.status >= 500) throw new Error(`${name}: ${res.status}`);
  }
  rows.push([name, (cpuMs(pids) - c0) / N, (performance.now() - t0) / N]);
}

// A Worker of plain modules in Miniflare, on a port-less dispatchFetch.
async function plain(dir, script) {
  const mf = new Miniflare({ ...bundleOptions(dir, script), compatibilityDate: '2026-04-01', cf: false });
  await mf.ready;
  return { request: client((url, init) => mf.dispatchFetch(url, init)), dispose: () => mf.dispose() };
}

const dir = mkdtempSync(join(tmpdir(), 'edgebloom-front-'));
try {
  // The floors.
  const js = join(dir, 'js');
  mkdirSync(js);
  writeFileSync(
    join(js, 'worker.mjs'),
    `export default { fetch() { return new Response(null, { status: 401, headers: { 'WWW-Authenticate': 'Bearer realm="edgebloom"' } }); } };\n`,
  );
  let f = await plain(js, 'worker.mjs');
  await measure('workerd floor: a JS Worker (401)', () => f.request('GET', '/'));
  await f.dispose();

  // syumai/workers' template: the entry module, runtime and glue its
  // workers-assets-gen generates, with bench/floor as the Go program.
  const tpl = join(dir, 'template');
  execFileSync('go', ['run', 'github.com/syumai/workers/cmd/workers-assets-gen', '-mode=go', '-o', tpl], {
    cwd: WORKER_DIR,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  execFileSync(
    'go',
    ['build', '-trimpath', '-buildvcs=false', '-ldflags=-s -w -buildid=', '-o', join(tpl, 'app.wasm'), './bench/floor'],
    { cwd: WORKER_DIR, env: { ...process.env, GOOS: 'js', GOARCH: 'wasm' } },
  );
  f = await plain(tpl, 'worker.mjs');
  await measure("syumai/workers' template (401)", () => f.request('GET', '/'));
  await f.dispose();

  // The service, built as wrangler deploy builds it.
  const out = join(dir, 'bundle');
  execFileSync(WRANGLER, ['deploy', '--dry-run', '--outdir', out], {
    cwd: workerDir,
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false', NO_COLOR: '1' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const w = await startWorker(out, join(dir, 'state'));
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
  await measure('front: 401', () => w.request('GET', '/v1/filters/f', undefined, { token: 'wrong' }));
  await measure('front: check of 100 keys', () => w.request('POST', '/v1/filters/f/check', { keys }));
  await measure('front: add of 10 new keys', (i) =>
    w.request('POST', '/v1/filters/f/add', {
      keys: Array.from({ length: 10 }, (_, j) => `https://front.example/new/${i}/${j}`),
    }),
  );
  await measure('shard alone: check of 100 keys', () =>
    w.shardFetch('shard:f:0', '/check', { keys }, { 'X-Edgebloom-Shard': shard }),
  );
  await measure('a Durable Object round trip that does nothing (404)', () => w.object('meta:none', 'GET', '/meta'));
  await w.dispose();

  const anchor = rows.find(([name]) => name.startsWith('syumai'))[1];
  console.log(`Worker: ${workerDir}; token ${TOKEN.length} chars; ${N} requests a row, one at a time`);
  console.log(`| request | workerd CPU a request | vs the template | wall time a request |`);
  console.log('| --- | --- | --- | --- |');
  for (const [name, cpu, wall] of rows)
    console.log(`| ${name} | ${cpu.toFixed(2)} ms | ${(cpu / anchor).toFixed(2)}x | ${wall.toFixed(2)} ms |`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
