// What keeping a local copy in sync costs (README.md, "Local copies:
// /changes"): a 1 M-key filter at 1% in the Worker (Miniflare, built as
// "wrangler deploy" builds it), filled with `fill` keys; a copy takes the
// snapshot from GET /changes, then each round 1 000 new keys are added and
// the copy syncs with ?since=CURSOR. It reports the bytes a sync transfers
// (body, and body plus every response header as name: value CRLF), the
// time applyDelta takes in Node (median over rounds, each on a fresh copy),
// and a sync with nothing new. Run from the repository root:
//
//   node worker/bench/sync.js [fill, default 1000000] [rounds, default 20] [shards, default 1]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildWorker, startWorker } from '../../testkit/worker.js';

const FILL = Number(process.argv[2] ?? 1_000_000);
const ROUNDS = Number(process.argv[3] ?? 20);
const SHARDS = Number(process.argv[4] ?? 1);
const NEW = 1000;

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const max = (xs) => Math.max(...xs);
const headerBytes = (h) => [...h].reduce((t, [k, v]) => t + k.length + 2 + v.length + 2, 0);

const dir = mkdtempSync(join(tmpdir(), 'edgebloom-sync-bench-'));
const edgebloom = await import('edgebloom');
await edgebloom.init();
try {
  const out = join(dir, 'bundle');
  buildWorker(out);
  const w = await startWorker(out, join(dir, 'state'));
  const name = 'sync';
  const put = await w.request('PUT', `/v1/filters/${name}`, { capacity: 1_000_000, errorRate: 0.01, shards: SHARDS });
  if (put.status !== 201) throw new Error(`PUT: ${put.status}`);
  let n = 0;
  const keys = (count) => Array.from({ length: count }, () => `https://www.example.com/page/${n++}?q=${n % 97}`);
  for (let i = 0; i < FILL; i += 10_000) {
    const res = await w.request('POST', `/v1/filters/${name}/add`, { keys: keys(Math.min(10_000, FILL - i)) });
    if (res.status !== 200) throw new Error(`add: ${res.status}`);
  }
  const first = await w.request('GET', `/v1/filters/${name}/changes`);
  let snapshot = first.bytes;
  let cursor = first.headers.get('X-Edgebloom-Cursor');
  const body = [];
  const total = [];
  const apply = [];
  for (let r = 0; r < ROUNDS; r++) {
    const res0 = await w.request('POST', `/v1/filters/${name}/add`, { keys: keys(NEW) });
    if (res0.status !== 200) throw new Error(`add: ${res0.status}`);
    const res = await w.request('GET', `/v1/filters/${name}/changes?since=${cursor}`);
    if (res.headers.get('X-Edgebloom-Format') !== 'delta') throw new Error(`round ${r}: no delta`);
    body.push(res.bytes.length);
    total.push(res.bytes.length + headerBytes(res.headers));
    const copy = edgebloom.fromBytes(snapshot);
    const t = performance.now();
    cursor = edgebloom.applyDelta(copy, res.bytes, cursor);
    apply.push(performance.now() - t);
    snapshot = copy.toBytes();
    copy.free();
  }
  const idle = await w.request('GET', `/v1/filters/${name}/changes?since=${cursor}`);
  const snap = await w.request('GET', `/v1/filters/${name}/snapshot`);
  if (Buffer.compare(Buffer.from(snap.bytes), Buffer.from(snapshot)) !== 0)
    throw new Error('the copy is not the snapshot');
  console.log(
    `filter: capacity 1 000 000 at 1%, ${SHARDS} shard(s), filled with ${FILL} keys; snapshot ${snap.bytes.length} B`,
  );
  console.log('| what | median | max | target |');
  console.log('| --- | --- | --- | --- |');
  console.log(`| a sync after ${NEW} new keys: delta body | ${median(body)} B | ${max(body)} B | |`);
  console.log(`| the same with every response header | ${median(total)} B | ${max(total)} B | ≤ 16 384 B |`);
  console.log(
    `| applyDelta of it in Node | ${median(apply).toFixed(3)} ms | ${max(apply).toFixed(3)} ms | < 1 ms a thousand keys |`,
  );
  console.log(
    `| a sync with nothing new: body, with every header | ${idle.bytes.length} B, ${idle.bytes.length + headerBytes(idle.headers)} B | | < 200 B |`,
  );
  await w.dispose();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
