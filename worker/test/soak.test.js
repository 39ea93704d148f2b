// The kept Go front over thousands of requests (Miniflare, as "wrangler
// deploy" builds the Worker): one Go instance serves them all, so whatever a
// request leaves behind in Go (a callback never released, a buffer a
// closure holds) adds up until the isolate runs out of its 128 MB. The
// memory Go has taken from the host (runtime.MemStats.Sys, GET
// /_test/instance) must stay flat over 10,000 checks, adds, 401s and
// checkpoint lookups answered from the edge cache.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildWorker, rss, startWorker, workerdProcesses } from '../../testkit/worker.js';

const MIB = 1 << 20;
const REQUESTS = 10_000;
const CLIENTS = 4;
// Go's heap settles a few MiB above what it needs at once; a leak of even
// 1 KB a request would show as 10 MB here.
const ALLOWED_GROWTH = 4 * MIB;

let dir;
let w;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edgebloom-soak-'));
  buildWorker(join(dir, 'bundle'));
  w = await startWorker(join(dir, 'bundle'), join(dir, 'state'), { bindings: { EDGEBLOOM_CHECKPOINT_SECONDS: '1' } });
});

after(async () => {
  await w?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const instance = async () => {
  const res = await w.request('GET', '/_test/instance');
  assert.equal(res.status, 200, JSON.stringify(res.json));
  return res.json;
};

const keys = (prefix, n) => Array.from({ length: n }, (_, i) => `https://${prefix}.example/${i}`);

// mixed sends request i of a run: a check of 100 keys, an add of 10 new
// keys, a request with a wrong token (401), or the filter's latest
// checkpoint (from the edge cache), in turn, and checks its answer.
async function mixed(run, i) {
  switch (i % 4) {
    case 0: {
      const res = await w.request('POST', '/v1/filters/soak/check', { keys: keys('soak', 100) });
      assert.equal(res.status, 200, JSON.stringify(res.json));
      assert.ok(res.json.present.slice(0, 50).every(Boolean), 'the keys added first are present');
      return;
    }
    case 1: {
      const res = await w.request('POST', '/v1/filters/soak/add', { keys: keys(`${run}-${i}`, 10) });
      assert.equal(res.status, 200, JSON.stringify(res.json));
      assert.equal(res.json.added.length, 10);
      return;
    }
    case 2: {
      const res = await w.request('GET', '/v1/filters/soak', undefined, { token: 'wrong' });
      assert.equal(res.status, 401);
      return;
    }
    default: {
      const res = await w.request('GET', '/v1/filters/soak/checkpoints/latest');
      assert.equal(res.status, 200, JSON.stringify(res.json));
    }
  }
}

async function soak(run, n) {
  let next = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < n) await mixed(run, next++);
    }),
  );
}

test(`the memory Go has taken stays flat over ${REQUESTS.toLocaleString('en')} checks, adds, 401s and checkpoint lookups`, async (t) => {
  assert.equal(
    (await w.request('PUT', '/v1/filters/soak', { capacity: 1_000_000, errorRate: 0.01, shards: 2 })).status,
    201,
  );
  assert.equal((await w.request('POST', '/v1/filters/soak/add', { keys: keys('soak', 50) })).status, 200);
  // The filter's first checkpoint is published on a lookup once its
  // interval (1 s here) has passed: until then "latest" answers 503.
  for (let tries = 0; ; tries++) {
    const res = await w.request('GET', '/v1/filters/soak/checkpoints/latest');
    if (res.status === 200) break;
    assert.equal(res.status, 503, JSON.stringify(res.json));
    assert.ok(tries < 100, 'no checkpoint published in 10 s');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  // Warm: Go's heap grows to what the requests in flight need at once.
  await soak('warm', 300);
  const start = await instance();
  const rss0 = rss(workerdProcesses());
  await soak('soak', REQUESTS);
  const end = await instance();
  const rss1 = rss(workerdProcesses());
  t.diagnostic(`workerd resident: ${(rss0 / MIB).toFixed(1)} → ${(rss1 / MIB).toFixed(1)} MiB`);
  assert.equal(end.instance, start.instance, 'one Go program served every request');
  assert.equal(end.served, start.served + REQUESTS + 1);
  const grown = end.memoryBytes - start.memoryBytes;
  t.diagnostic(`Go's memory: ${(start.memoryBytes / MIB).toFixed(1)} → ${(end.memoryBytes / MIB).toFixed(1)} MiB`);
  assert.ok(
    grown <= ALLOWED_GROWTH,
    `Go's memory grew ${(grown / MIB).toFixed(1)} MiB over ${REQUESTS} requests ` +
      `(${(start.memoryBytes / MIB).toFixed(1)} → ${(end.memoryBytes / MIB).toFixed(1)} MiB)`,
  );
});

// Lookups of the latest checkpoint alone, as a crowd of readers sends them:
// each is answered from the edge cache, whose lookup goes through the
// request's exchange with JS and must leave nothing behind in Go either.
const LOOKUPS = 8_000;

test(`the memory Go has taken stays flat over ${LOOKUPS.toLocaleString('en')} lookups of the latest checkpoint`, async (t) => {
  const lookups = async (n) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (next++ < n) {
          const res = await w.request('GET', '/v1/filters/soak/checkpoints/latest');
          assert.equal(res.status, 200, JSON.stringify(res.json));
        }
      }),
    );
  };
  await lookups(300);
  const start = await instance();
  await lookups(LOOKUPS);
  const end = await instance();
  const grown = end.memoryBytes - start.memoryBytes;
  t.diagnostic(`Go's memory: ${(start.memoryBytes / MIB).toFixed(1)} → ${(end.memoryBytes / MIB).toFixed(1)} MiB`);
  assert.ok(
    grown <= ALLOWED_GROWTH,
    `Go's memory grew ${(grown / MIB).toFixed(1)} MiB over ${LOOKUPS} lookups ` +
      `(${(start.memoryBytes / MIB).toFixed(1)} → ${(end.memoryBytes / MIB).toFixed(1)} MiB)`,
  );
});
