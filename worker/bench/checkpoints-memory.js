// What a kept front instance holds after serving readers (README.md,
// "Memory of the kept Go front"): Go's memory (runtime.MemStats.Sys, from
// GET /_test/instance) before and after `count` requests of one kind, one
// after the other, in the Worker in Miniflare (built as "wrangler deploy"
// builds it), after 300 of the same kind to warm it up: "latest" answered
// from the edge cache, "latest" where the Cache API keeps nothing (miss:
// each answer made and put in the cache), or an idle /changes?since= sync
// (a round trip to every shard). Run from the repository root:
//
//   node worker/bench/checkpoints-memory.js [latest|miss|changes, default latest] [count, default 3000]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildWorker, startWorker } from '../../testkit/worker.js';

const KIND = process.argv[2] ?? 'latest';
const COUNT = Number(process.argv[3] ?? 3000);
if (!['latest', 'miss', 'changes'].includes(KIND)) throw new Error('the kind is latest, miss or changes');

const dir = mkdtempSync(join(tmpdir(), 'edgebloom-ckpt-bench-'));
try {
  const out = join(dir, 'bundle');
  buildWorker(out);
  const w = await startWorker(out, join(dir, 'state'), {
    bindings: { EDGEBLOOM_CHECKPOINT_SECONDS: '60' },
    cache: KIND !== 'miss',
  });
  await w.request('PUT', '/v1/filters/m', { capacity: 20_000, errorRate: 0.01, shards: 4 });
  await w.request('POST', '/v1/filters/m/add', { keys: ['https://a.example/', 'https://b.example/'] });
  const cursor = (await w.request('GET', '/v1/filters/m/changes')).headers.get('X-Edgebloom-Cursor');
  const path = KIND === 'changes' ? `/v1/filters/m/changes?since=${cursor}` : '/v1/filters/m/checkpoints/latest';
  const memory = async () => (await w.request('GET', '/_test/instance')).json.memoryBytes;
  for (let i = 0; i < 300; i++) await w.request('GET', path);
  const before = await memory();
  const start = performance.now();
  for (let i = 0; i < COUNT; i++) {
    const res = await w.request('GET', path);
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status}`);
  }
  const ms = (performance.now() - start) / COUNT;
  const after = await memory();
  const mib = (b) => (b / 2 ** 20).toFixed(1);
  console.log(`${COUNT} × GET ${KIND}: Go's memory ${mib(before)} → ${mib(after)} MiB, ${ms.toFixed(2)} ms a request`);
  await w.dispose();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
