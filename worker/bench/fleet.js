// A fleet of readers joining at once: `readers` copies of what
// examples/sync-extension does on its first sync, run side by side in this
// process against the service as "npm run worker:dev" serves it (wrangler
// dev, dev.sh), with a filter of `keys` keys at 1 % in `shards` shards.
// Each reader runs the extension's own checkpoints.js: "latest", then the
// checkpoint's snapshot, read to its end (the extension keeps it as a Blob;
// a reader here counts it and drops it), with the extension's retries of a
// busy service (503, 429: Retry-After, jitter, back-off). It reports the
// refusals (503s and 429s met, and syncs that failed after their retries),
// each reader's time to its whole copy (median, 90th percentile, max), the
// time to the first byte, and the machine's load average. With `changes`,
// the same readers take /changes (no cache) instead, for comparison. Run
// from the repository root (wrangler dev builds the Worker on its first
// start):
//
//   node worker/bench/fleet.js [readers, default 100] [keys, default 10000000] [shards, default 4] [checkpoints|changes]
import { loadavg, tmpdir } from 'node:os';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { startDev, TOKEN } from '../../testkit/worker.js';
import { nextSync, get } from '../../examples/sync-extension/checkpoints.js';

const READERS = Number(process.argv[2] ?? 100);
const KEYS = Number(process.argv[3] ?? 10_000_000);
const SHARDS = Number(process.argv[4] ?? 4);
const PATH = process.argv[5] ?? 'checkpoints';
if (!['checkpoints', 'changes'].includes(PATH)) throw new Error('the path is checkpoints or changes');

const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
const s = (ms) => `${(ms / 1000).toFixed(1)} s`;
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

const dir = mkdtempSync(join(tmpdir(), 'edgebloom-fleet-bench-'));
let w;
try {
  const t0 = Date.now();
  w = await startDev(join(dir, 'state'), { timeoutMs: 600_000 });
  console.log(`wrangler dev answered in ${s(Date.now() - t0)}; load average ${load()}`);
  const name = 'fleet';
  const put = await w.request('PUT', `/v1/filters/${name}`, { capacity: KEYS, errorRate: 0.01, shards: SHARDS });
  if (put.status !== 201) throw new Error(`PUT: ${put.status}`);
  const t1 = Date.now();
  for (let n = 0; n < KEYS;) {
    const keys = Array.from({ length: Math.min(10_000, KEYS - n) }, () => `https://www.example.com/p/${n++}`);
    const res = await w.request('POST', `/v1/filters/${name}/add`, { keys });
    if (res.status !== 200) throw new Error(`add: ${res.status}`);
  }
  const minted = await w.request('POST', '/v1/tokens', { scope: 'read', filter: name, expiresIn: 3600 });
  const config = { service: w.base, filter: name, token: minted.json.token };
  // The first checkpoint, published once asked for (503 checkpoint_pending meanwhile).
  const latest = await (
    await get(`${w.base}/v1/filters/${name}/checkpoints/latest`, { token: TOKEN, filter: name })
  ).json();
  console.log(`${KEYS} keys in ${SHARDS} shards added in ${s(Date.now() - t1)}; checkpoint ${latest.checkpoint}`);

  // One reader's first sync, as the extension makes it.
  const reader = async () => {
    const r = { refusals: [], error: null, bytes: 0, firstByteMs: null };
    const start = Date.now();
    const onWait = ({ status, code }) => r.refusals.push(`${status} ${code}`);
    try {
      let res;
      if (PATH === 'checkpoints') ({ res } = await nextSync(config, null, { onWait }));
      else res = await get(`${w.base}/v1/filters/${name}/changes`, { token: config.token, filter: name, onWait });
      // The extension takes the body as a Blob, which the browser keeps out
      // of its memory; here it is counted as it arrives and dropped.
      for await (const chunk of res.body) {
        if (r.bytes === 0) r.firstByteMs = Date.now() - start;
        r.bytes += chunk.length;
      }
      const length = Number(res.headers.get('Content-Length'));
      if (r.bytes !== length) throw new Error(`${r.bytes} bytes of ${length}`);
    } catch (err) {
      r.error = err.message;
    }
    r.ms = Date.now() - start;
    return r;
  };
  const before = load();
  const t2 = Date.now();
  const all = await Promise.all(Array.from({ length: READERS }, reader));
  const wall = Date.now() - t2;
  const done = all.filter((r) => !r.error);
  const refusals = all.flatMap((r) => r.refusals);
  const counts = new Map();
  for (const x of refusals) counts.set(x, (counts.get(x) ?? 0) + 1);
  const kinds = [...counts].map(([k, n]) => `${n} × ${k}`);
  console.log(
    `${READERS} readers' first syncs through ${PATH}, at once (load average before: ${before}; after: ${load()}):`,
  );
  console.log(
    `- copies made: ${done.length} of ${READERS}, ${(done[0]?.bytes / 1e6).toFixed(2)} MB each; all in ${s(wall)}`,
  );
  console.log(
    `- refusals met (each retried): ${refusals.length}${kinds.length ? ` (${kinds.join(', ')})` : ''}; ` +
      `readers refused at least once: ${all.filter((r) => r.refusals.length).length}; syncs failed: ${all.length - done.length}`,
  );
  const ms = done.map((r) => r.ms);
  const first = done.map((r) => r.firstByteMs);
  if (done.length)
    console.log(
      `- time to the whole copy: median ${s(pct(ms, 0.5))}, 90th percentile ${s(pct(ms, 0.9))}, max ${s(pct(ms, 1))}; ` +
        `to its first byte: median ${s(pct(first, 0.5))}, max ${s(pct(first, 1))}`,
    );
  for (const r of all.filter((r) => r.error).slice(0, 3)) console.log(`- a failure: ${r.error}`);
} finally {
  await w?.stop();
  rmSync(dir, { recursive: true, force: true });
}
