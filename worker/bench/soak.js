// Memory over a long run of the kept Go front, in Miniflare (the Worker
// built as "wrangler deploy" builds it): checks of 100 keys, adds of 10 new
// keys and 401s in turn, four clients at once, with workerd's resident size
// and the memory Go has taken (GET /_test/instance) every STEP requests. A
// leak grows with every step; V8 and Go's heaps grow in steps and stop.
// Run from the repository root:
//
//   node worker/bench/soak.js [requests, default 28000] [step, default 4000]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildWorker, rss, startWorker, workerdProcesses } from '../../testkit/worker.js';

const REQUESTS = Number(process.argv[2] ?? 28_000);
const STEP = Number(process.argv[3] ?? 4_000);
const CLIENTS = 4;
const MIB = 1 << 20;

const keys = (prefix, n) => Array.from({ length: n }, (_, i) => `https://${prefix}.example/${i}`);

const dir = mkdtempSync(join(tmpdir(), 'edgebloom-soak-'));
let w;
try {
  buildWorker(join(dir, 'bundle'));
  w = await startWorker(join(dir, 'bundle'), join(dir, 'state'));
  const put = await w.request('PUT', '/v1/filters/soak', { capacity: 1_000_000, errorRate: 0.01, shards: 2 });
  if (put.status !== 201) throw new Error(`PUT: ${put.status}`);
  const send = (i) => {
    switch (i % 3) {
      case 0:
        return w.request('POST', '/v1/filters/soak/check', { keys: keys('soak', 100) });
      case 1:
        return w.request('POST', '/v1/filters/soak/add', { keys: keys(`add-${i}`, 10) });
      default:
        return w.request('GET', '/v1/filters/soak', undefined, { token: 'wrong' });
    }
  };
  console.log('| requests | workerd resident | Go has taken |');
  console.log('| --- | --- | --- |');
  let next = 0;
  for (let end = STEP; end <= REQUESTS; end += STEP) {
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (next < end) {
          const res = await send(next++);
          if (res.status >= 500) throw new Error(`${res.status}: ${new TextDecoder().decode(res.bytes)}`);
        }
      }),
    );
    const { memoryBytes } = (await w.request('GET', '/_test/instance')).json;
    const resident = rss(workerdProcesses());
    console.log(`| ${end} | ${(resident / MIB).toFixed(1)} MiB | ${(memoryBytes / MIB).toFixed(1)} MiB |`);
  }
} finally {
  await w?.dispose();
  rmSync(dir, { recursive: true, force: true });
}
