// Expensive requests abandoned by their clients, under "wrangler dev" (what
// "npm run worker:dev" runs): a pool of filters with published checkpoints,
// then BURST requests for checkpoint snapshots the edge cache has not kept,
// eight at a time, each client leaving after 5 ms. wrangler dev does not
// deliver the abort to the Worker (request.signal never aborts), so each
// request runs in the front until it ends by itself. Afterwards the bench
// asks GET /_test/instance (each ask with a client timeout of 5 s) until
// the front is idle (no exchanges, no answers awaited from JS, nothing
// waiting for the budget of expensive requests), and reports whether it
// answered, how long it took, Go's memory and workerd's resident size
// before and after, beside a JS Worker's resident size after as many
// requests. Run from the repository root:
//
//   node worker/bench/abandoned.js [BURST, default 300] [idle deadline in s, default 120]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { rss, startDev, startJsWorker, TOKEN, workerdProcesses } from '../../testkit/worker.js';

const BURST = Number(process.argv[2] ?? 300);
const IDLE_S = Number(process.argv[3] ?? 120);
const POOL = 10;
const CHECKPOINTS = 12;
const MIB = 1 << 20;
const mib = (n) => `${(n / MIB).toFixed(1)} MiB`;

async function parallel(n, items, each) {
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < items.length) await each(items[next++]);
    }),
  );
}

const keys = (prefix, n) => Array.from({ length: n }, (_, i) => `https://${prefix}.example/${i}`);

// ask sends one request with a client timeout and returns its JSON, or
// the reason it got none.
async function ask(base, path, ms) {
  const t0 = performance.now();
  try {
    const res = await fetch(base + path, {
      headers: { Authorization: `Bearer ${TOKEN}` },
      signal: AbortSignal.timeout(ms),
    });
    const text = await res.text();
    const json = (res.headers.get('Content-Type') ?? '').startsWith('application/json') ? JSON.parse(text) : text;
    return { status: res.status, json, ms: performance.now() - t0 };
  } catch (err) {
    return { error: err.cause?.code ? `${err.name} (${err.cause.code})` : err.name, ms: performance.now() - t0 };
  }
}

const dir = mkdtempSync(join(tmpdir(), 'edgebloom-abandoned-'));
let w;
try {
  // A JS Worker's resident size after BURST abandoned requests, the same way.
  w = await startJsWorker(
    dir,
    `export default { async fetch() { await new Promise((r) => setTimeout(r, 20)); return new Response('x'.repeat(20000)); } };\n`,
  );
  const jsBefore = rss(workerdProcesses(w.pid));
  await parallel(8, Array.from({ length: BURST }), async () => {
    await fetch(w.base + '/', { signal: AbortSignal.timeout(5) })
      .then((r) => r.arrayBuffer())
      .catch(() => {});
  });
  const jsAnswer = await ask(w.base, '/', 5000);
  const jsAfter = rss(workerdProcesses(w.pid));
  await w.stop();

  w = await startDev(join(dir, 'state'), {
    args: ['--var', 'EDGEBLOOM_TEST_HOOKS:1', '--var', 'EDGEBLOOM_CHECKPOINT_SECONDS:1'],
  });
  const pids = () => workerdProcesses(w.pid);
  const pool = Array.from({ length: POOL }, (_, i) => ({ name: `pool-${i}`, generation: 0 }));
  await parallel(8, pool, async (f) => {
    const res = await w.request('PUT', `/v1/filters/${f.name}`, { capacity: 20_000, errorRate: 0.01, shards: 2 });
    if (res.status !== 201) throw new Error(`PUT: ${res.status}`);
  });
  for (let n = 1; n <= CHECKPOINTS; n++) {
    await parallel(8, pool, (f) => w.request('POST', `/v1/filters/${f.name}/add`, { keys: keys(`${f.name}-${n}`, 5) }));
    // Checkpoint n is published by a lookup of "latest" once the interval
    // since checkpoint n-1 has passed.
    let waiting = pool;
    for (const deadline = Date.now() + 60_000; waiting.length > 0;) {
      if (Date.now() > deadline) throw new Error(`checkpoint ${n}: ${waiting.length} filters wait`);
      const left = [];
      await parallel(8, waiting, async (f) => {
        const res = await w.request('GET', `/v1/filters/${f.name}/checkpoints/latest`);
        if (res.status === 200 && res.json.checkpoint >= n) f.generation = res.json.generation;
        else left.push(f);
      });
      waiting = left;
      if (left.length) await new Promise((r) => setTimeout(r, 200));
    }
  }
  // workerd's own port beside wrangler's proxy: the port of a workerd
  // process of wrangler dev's that answers /_test/instance as the front.
  const listening = execFileSync('ss', ['-ltnpH'], { encoding: 'utf8' });
  let direct;
  for (const pid of pids()) {
    for (const [, port] of listening.matchAll(new RegExp(`127\\.0\\.0\\.1:(\\d+) .*pid=${pid},`, 'g'))) {
      if (Number(port) === w.port || direct) continue;
      const a = await ask(`http://127.0.0.1:${port}`, '/_test/instance', 3000);
      if (typeof a.json === 'object' && a.json.instance) direct = `http://127.0.0.1:${port}`;
    }
  }
  console.log(`wrangler's proxy: ${w.base}; workerd's own port: ${direct ?? 'none found'}`);
  const before = await ask(w.base, '/_test/instance', 5000);
  const rssBefore = rss(pids());
  const paths = Array.from({ length: BURST }, (_, i) => {
    const j = i % (POOL * CHECKPOINTS);
    const f = pool[j % POOL];
    return `/v1/filters/${f.name}/checkpoints/${f.generation}/${CHECKPOINTS - Math.floor(j / POOL)}/snapshot`;
  });
  let answered = 0;
  const t0 = performance.now();
  await parallel(8, paths, async (path) => {
    try {
      const res = await fetch(w.base + path, {
        headers: { Authorization: `Bearer ${TOKEN}` },
        signal: AbortSignal.timeout(5),
      });
      await res.arrayBuffer();
      answered++;
    } catch {}
  });
  const sent = performance.now() - t0;
  // Until the front is idle, or the deadline.
  const asks = [];
  const directAsks = [];
  let last;
  const deadline = Date.now() + IDLE_S * 1000;
  for (;;) {
    const at = performance.now() - t0;
    let other;
    [last, other] = await Promise.all([
      ask(w.base, '/_test/instance', 5000),
      direct ? ask(direct, '/_test/instance', 5000) : undefined,
    ]);
    asks.push(last);
    if (other) directAsks.push(other);
    const show = (a) =>
      a
        ? `${a.error ?? a.status} in ${a.ms.toFixed(0)} ms ${typeof a.json === 'object' ? `exchanges ${a.json.exchanges}, waiting ${a.json.heavyWaiting}` : ''}`
        : '-';
    console.log(`  ${(at / 1000).toFixed(1)} s: through the proxy ${show(last)}; workerd's own port ${show(other)}`);
    const j = last.json;
    if (j?.exchanges === 0 && j.asks === 0 && j.heavyWaiting === 0 && j.heavyBytes === 0) break;
    if (Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  const idleAfter = performance.now() - t0;
  const rssAfter = rss(pids());
  const first = asks[0];
  const unanswered = asks.filter((a) => a.json === undefined || typeof a.json === 'string').length;
  const most = [...asks, ...directAsks].reduce(
    (m, a) =>
      typeof a.json === 'object'
        ? {
            exchanges: Math.max(m.exchanges, a.json.exchanges),
            heavyWaiting: Math.max(m.heavyWaiting, a.json.heavyWaiting),
          }
        : m,
    { exchanges: 0, heavyWaiting: 0 },
  );
  console.log(
    `${BURST} snapshot requests abandoned after 5 ms, 8 at a time, under wrangler dev (sent in ${(sent / 1000).toFixed(1)} s; ${answered} answered before their clients left)`,
  );
  console.log(
    `first GET /_test/instance after the burst: ${first.error ?? first.status} in ${first.ms.toFixed(0)} ms ${typeof first.json === 'object' ? JSON.stringify(first.json) : ''}`,
  );
  console.log(
    `asks of /_test/instance through the proxy: ${asks.length}, without an answer in 5 s or not 200: ${unanswered}; most exchanges seen (either way) ${most.exchanges}, most waiting for the budget ${most.heavyWaiting}`,
  );
  const idle = typeof last.json === 'object' && last.json.exchanges === 0 && last.json.heavyWaiting === 0;
  console.log(
    idle
      ? `idle again ${(idleAfter / 1000).toFixed(1)} s after the burst began`
      : `NOT idle within ${IDLE_S} s: ${JSON.stringify(last)}`,
  );
  console.log();
  console.log('| | resident before | after | Go has taken before | after |');
  console.log('| --- | --- | --- | --- | --- |');
  console.log(
    `| the front's workerd | ${mib(rssBefore)} | ${mib(rssAfter)} | ${mib(before.json.memoryBytes)} | ${typeof last.json === 'object' ? mib(last.json.memoryBytes) : '-'} |`,
  );
  console.log(
    `| a JS Worker's workerd (20 KB after 20 ms; answered after: ${jsAnswer.status ?? jsAnswer.error}) | ${mib(jsBefore)} | ${mib(jsAfter)} | | |`,
  );
  if (!idle) process.exitCode = 1;
} finally {
  await w?.stop();
  rmSync(dir, { recursive: true, force: true });
}
