// What a request costs workerd, and what workerd keeps, under "wrangler
// dev" (what "npm run worker:dev" runs), side by side in one run:
//
// - the floors: a JS Worker answering 401 (workerd's own, wrangler's proxy
//   included) and asking a Durable Object that does nothing (the least a
//   round trip to an object costs), and syumai/workers' own template (its generated entry
//   module, a fresh Go instance a request) with a Go program answering 401
//   with net/http alone (bench/floor), the anchor every row is a ratio to;
// - the front (dev.sh, test hooks on): a 401, a Durable Object round trip
//   that does nothing (GET /_test/echo: the meta object of no filter, 404),
//   a check of 100 keys and an add of 10 new keys, each through the
//   front and the shard (the filter's meta is cached).
//
// CPU time is the workerd processes' user + system time (/proc/PID/stat)
// over N requests of a kind, sent one at a time after WARM of the same kind
// (V8 tiers up the wasm as it runs: the first few hundred requests of a
// kind cost up to twice the steady state), so other processes on the
// machine do not count.
//
// Memory: the resident size of workerd over SOAK more requests one at a
// time, after the rows above: for the JS Worker its 401, for the front
// checks, adds and 401s in turn. The run fails (exit 1) when the front's
// workerd grew more than a JS Worker's by more than ALLOWED_MIB: a kept
// Go instance must not keep what its requests leave. Run from the
// repository root:
//
//   node worker/bench/front.js [N, default 300] [worker dir, default worker/]
//
// With another checkout's worker/ as the second argument it measures that
// Worker with the same floors (a "before" beside an "after").
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { cpuMs, rss, startDev, startWranglerDev, WORKER_DIR, workerdProcesses } from '../../testkit/worker.js';

const N = Number(process.argv[2] ?? 300);
const workerDir = resolve(process.argv[3] ?? WORKER_DIR);
const WARM = Number(process.env.WARM ?? 300);
const SOAK = Number(process.env.SOAK ?? 3000);
const ALLOWED_MIB = Number(process.env.ALLOWED_MIB ?? 48);
const MIB = 1 << 20;

// withPids adds the workerd processes of a server started by testkit/worker.js.
const withPids = (w) => Object.assign(w, { pids: () => workerdProcesses(w.pid) });

const rows = [];
async function measure(w, name, send) {
  const pids = w.pids();
  for (let i = 0; i < WARM; i++) await check(name, await send(-1 - i));
  const c0 = cpuMs(pids);
  const t0 = performance.now();
  for (let i = 0; i < N; i++) await check(name, await send(i));
  rows.push([name, (cpuMs(pids) - c0) / N, (performance.now() - t0) / N]);
}

async function check(name, res) {
  if (res.status >= 500) throw new Error(`${name}: ${res.status} ${new TextDecoder().decode(res.bytes)}`);
}

// soak sends SOAK requests one at a time and returns how much workerd's
// resident size grew over them.
async function soak(w, name, send) {
  const pids = w.pids();
  const before = rss(pids);
  for (let i = 0; i < SOAK; i++) await check(name, await send(i));
  const after = rss(pids);
  return { name, before, after, grown: after - before };
}

const wranglerConfig = (main, extra = {}) =>
  JSON.stringify({ name: 'bench', main, compatibility_date: '2026-04-01', ...extra }, null, 2) + '\n';

const dir = mkdtempSync(join(tmpdir(), 'edgebloom-front-'));
const memory = [];
let w;
try {
  // The floors.
  const js = join(dir, 'js');
  mkdirSync(js);
  // Its /echo asks a Durable Object that answers 404 and nothing else: the
  // least a round trip to an object costs, beside the front's echo row.
  writeFileSync(
    join(js, 'worker.mjs'),
    `export class Echo { fetch() { return new Response(null, { status: 404 }); } }
export default {
  async fetch(request, env) {
    if (new URL(request.url).pathname === '/echo') {
      const res = await env.ECHO.get(env.ECHO.idFromName('echo')).fetch('https://echo/meta');
      return new Response(JSON.stringify({ status: res.status }), { headers: { 'Content-Type': 'application/json' } });
    }
    return new Response(null, { status: 401, headers: { 'WWW-Authenticate': 'Bearer realm="edgebloom"' } });
  },
};
`,
  );
  writeFileSync(
    join(js, 'wrangler.json'),
    wranglerConfig('worker.mjs', {
      durable_objects: { bindings: [{ name: 'ECHO', class_name: 'Echo' }] },
      migrations: [{ tag: 'v1', new_sqlite_classes: ['Echo'] }],
    }),
  );
  w = withPids(await startWranglerDev(js, join(dir, 'js-state')));
  await measure(w, 'workerd floor: a JS Worker (401)', () => w.request('GET', '/'));
  await measure(w, 'workerd floor: a JS Worker, a Durable Object round trip that does nothing (404)', () =>
    w.request('GET', '/echo'),
  );
  memory.push(await soak(w, 'a JS Worker (401)', () => w.request('GET', '/')));
  await w.stop();

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
  writeFileSync(join(tpl, 'wrangler.json'), wranglerConfig('worker.mjs'));
  w = withPids(await startWranglerDev(tpl, join(dir, 'template-state')));
  await measure(w, "syumai/workers' template (401)", () => w.request('GET', '/'));
  await w.stop();

  // The service, as "npm run worker:dev" serves it.
  w = withPids(await startDev(join(dir, 'state'), { dir: workerDir, args: ['--var', 'EDGEBLOOM_TEST_HOOKS:1'] }));
  const put = await w.request('PUT', '/v1/filters/f', { capacity: 1_000_000, errorRate: 0.01 });
  if (put.status !== 201) throw new Error(`PUT: ${put.status}`);
  const keys = Array.from({ length: 100 }, (_, i) => `https://front.example/${i}`);
  await w.request('POST', '/v1/filters/f/add', { keys });
  const unauthorized = () => w.request('GET', '/v1/filters/f', undefined, { token: 'wrong' });
  const checkKeys = () => w.request('POST', '/v1/filters/f/check', { keys });
  const addKeys = (run) => (i) =>
    w.request('POST', '/v1/filters/f/add', {
      keys: Array.from({ length: 10 }, (_, j) => `https://front.example/${run}/${i}/${j}`),
    });
  await measure(w, 'front: 401', unauthorized);
  await measure(w, 'front: a Durable Object round trip that does nothing (404)', () => w.request('GET', '/_test/echo'));
  await measure(w, 'front: check of 100 keys', checkKeys);
  await measure(w, 'front: add of 10 new keys', addKeys('new'));
  const soakAdd = addKeys('soak');
  memory.push(await soak(w, 'the front (checks, adds, 401s)', (i) => [checkKeys, soakAdd, unauthorized][i % 3](i)));
  await w.stop();
  w = undefined;

  const anchor = rows.find(([name]) => name.startsWith('syumai'))[1];
  console.log(`Worker: ${workerDir}; ${N} requests a row after ${WARM} of warm-up, one at a time, under wrangler dev`);
  console.log(`| request | workerd CPU a request | vs the template | wall time a request |`);
  console.log('| --- | --- | --- | --- |');
  for (const [name, cpu, wall] of rows)
    console.log(`| ${name} | ${cpu.toFixed(2)} ms | ${(cpu / anchor).toFixed(2)}x | ${wall.toFixed(2)} ms |`);
  console.log();
  console.log(`| workerd over ${SOAK} more requests | resident before | after | grown |`);
  console.log('| --- | --- | --- | --- |');
  for (const m of memory)
    console.log(
      `| ${m.name} | ${(m.before / MIB).toFixed(1)} MiB | ${(m.after / MIB).toFixed(1)} MiB | ${(m.grown / MIB).toFixed(1)} MiB |`,
    );
  const [jsWorker, service] = memory;
  if (service.grown > jsWorker.grown + ALLOWED_MIB * MIB) {
    console.error(
      `FAIL: the front's workerd grew ${(service.grown / MIB).toFixed(1)} MiB over ${SOAK} requests, ` +
        `a JS Worker's ${(jsWorker.grown / MIB).toFixed(1)} MiB (allowed: ${ALLOWED_MIB} MiB more)`,
    );
    process.exitCode = 1;
  }
} finally {
  await w?.stop();
  rmSync(dir, { recursive: true, force: true });
}
