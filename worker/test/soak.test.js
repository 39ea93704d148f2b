// The kept Go front over thousands of requests (Miniflare, as "wrangler
// deploy" builds the Worker): one Go instance serves them all, so whatever a
// request leaves behind in Go (a callback never released, a buffer a
// closure holds) adds up until the isolate runs out of its 128 MB. The
// memory Go has taken from the host (runtime.MemStats.Sys, GET
// /_test/instance) must stay flat over 10,000 checks, adds, 401s and
// checkpoint lookups answered from the edge cache; bursts of readers of one
// new snapshot, who poll the cache while one of them makes it, and 1,500
// expensive requests whose clients leave after 5 ms must leave no request,
// exchange or goroutine behind, and Go's memory under the front's bound
// whatever the burst.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildWorker, rss, startWorker, TOKEN, workerdProcesses } from '../../testkit/worker.js';

const MIB = 1 << 20;
const REQUESTS = 10_000;
const CLIENTS = 4;
// Go's heap settles a few MiB above what it needs at once; a leak of even
// 1 KB a request would show as 10 MB here.
const ALLOWED_GROWTH = 4 * MIB;

// What a burst of expensive requests may take: the front's budget for
// them (heavyBudget in front/bounds.go, 24 MiB) twice over (Go's heap
// grows to twice what is live before it collects), above a baseline of
// about 8 MiB.
const MEMORY_BOUND = 56 * MIB;

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

// A pool of filters, each with CHECKPOINTS published checkpoints: every
// (filter, checkpoint) is a snapshot no reader has asked for yet, and every
// pair of its checkpoints a delta (20 × 325 of them), so that a test can
// make the edge cache miss as many times as it needs.
const POOL = 20;
const CHECKPOINTS = 26;
const pool = Array.from({ length: POOL }, (_, i) => ({ name: `pool-${i}`, generation: 0 }));

async function parallel(n, items, each) {
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < items.length) await each(items[next++]);
    }),
  );
}

async function untilDeadline(what, ms, check) {
  const deadline = Date.now() + ms;
  for (;;) {
    const last = await check();
    if (last === true) return;
    assert.ok(Date.now() < deadline, `${what}: ${JSON.stringify(last)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test('a pool of filters with checkpoints to read', { timeout: 300_000 }, async () => {
  await parallel(16, pool, async (f) => {
    const res = await w.request('PUT', `/v1/filters/${f.name}`, { capacity: 20_000, errorRate: 0.01, shards: 2 });
    assert.equal(res.status, 201, JSON.stringify(res.json));
  });
  for (let n = 1; n <= CHECKPOINTS; n++) {
    await parallel(16, pool, async (f) => {
      const res = await w.request('POST', `/v1/filters/${f.name}/add`, { keys: keys(`${f.name}-${n}`, 5) });
      assert.equal(res.status, 200, JSON.stringify(res.json));
    });
    // Checkpoint n is published by a lookup of "latest" once the interval
    // (1 s) since checkpoint n-1 has passed, and "latest" is cached as
    // long: each filter is looked at every 250 ms until it is there.
    let waiting = pool;
    await untilDeadline(`checkpoint ${n} of every filter`, 60_000, async () => {
      const left = [];
      await parallel(16, waiting, async (f) => {
        const res = await w.request('GET', `/v1/filters/${f.name}/checkpoints/latest`);
        if (res.status === 200 && res.json.checkpoint >= n) f.generation = res.json.generation;
        else left.push(f);
      });
      waiting = left;
      if (left.length === 0) return true;
      await new Promise((resolve) => setTimeout(resolve, 200));
      return `${left.length} filters wait`;
    });
  }
});

// The baseline of the instance between requests: nothing in flight but
// the request that asks.
let baseline;
async function idle() {
  let last;
  await untilDeadline('the front is idle again', 60_000, async () => {
    last = await instance();
    const { exchanges, asks, goroutines, heavyBytes, heavyWaiting } = last;
    if (exchanges === 0 && asks === 0 && heavyBytes === 0 && heavyWaiting === 0 && goroutines === baseline.goroutines)
      return true;
    return { exchanges, asks, goroutines, heavyBytes, heavyWaiting, baseline: baseline.goroutines };
  });
  return last;
}

test('the baseline of an idle front', async () => {
  baseline = await instance();
  assert.equal(baseline.exchanges, 0, JSON.stringify(baseline));
  assert.equal(baseline.asks, 0, JSON.stringify(baseline));
  assert.ok(baseline.goroutines > 0, JSON.stringify(baseline));
});

// The pool's snapshots, (filter, checkpoint) i: the bursts below take the
// first BURSTS, one each; the abandoned requests the rest.
const snapshotPath = (i) => {
  const f = pool[i % POOL];
  return `/v1/filters/${f.name}/checkpoints/${f.generation}/${CHECKPOINTS - Math.floor(i / POOL)}/snapshot`;
};
const BURSTS = 40;

const ABANDONED = 1_500;

test(
  `${ABANDONED.toLocaleString('en')} requests for checkpoint snapshots abandoned by their clients after 5 ms: their work stops, and Go's memory stays under its bound`,
  { timeout: 300_000 },
  async (t) => {
    // Each snapshot of the pool but the bursts' about three times: a client
    // that leaves stops the making, so the next may miss again.
    const kept = POOL * CHECKPOINTS - BURSTS;
    const paths = Array.from({ length: ABANDONED }, (_, i) => snapshotPath(BURSTS + (i % kept)));
    let answered = 0;
    // Eight clients at a time, each leaving after 5 ms: the client's fetch
    // is aborted, and the Worker's request.signal aborts then too (as
    // Cloudflare delivers it; Miniflare does not, so the tests' entry makes
    // it, testkit/worker-entry.mjs).
    await parallel(8, paths, async (path) => {
      try {
        const res = await w.fetch(`http://edgebloom.test${path}`, {
          headers: { Authorization: `Bearer ${TOKEN}`, 'X-Edgebloom-Test-Abort-After': '5' },
          signal: AbortSignal.timeout(5),
        });
        await res.arrayBuffer();
        answered++;
      } catch (err) {
        if (err.name !== 'TimeoutError' && err.name !== 'AbortError') throw err;
      }
    });
    const end = await idle();
    t.diagnostic(
      `${answered} of ${ABANDONED} answered before their clients left; Go's memory after: ${(end.memoryBytes / MIB).toFixed(1)} MiB`,
    );
    assert.ok(
      end.memoryBytes <= MEMORY_BOUND,
      `Go's memory is ${(end.memoryBytes / MIB).toFixed(1)} MiB after ${ABANDONED} abandoned snapshots; the bound is ${MEMORY_BOUND / MIB} MiB`,
    );
    // The front still answers.
    const res = await w.request('GET', snapshotPath(BURSTS));
    assert.equal(res.status, 200, new TextDecoder().decode(res.bytes).slice(0, 300));
  },
);

const READERS = 20;

test(
  `${BURSTS} bursts of ${READERS} readers of one new snapshot, half of them leaving: one makes it, the rest poll, and nothing stays behind`,
  { timeout: 300_000 },
  async (t) => {
    const start = await idle();
    for (let b = 0; b < BURSTS; b++) {
      const path = snapshotPath(b);
      const answers = await Promise.all(
        Array.from({ length: READERS }, async (_, i) => {
          // Every other reader leaves after 20 ms, while it polls.
          const headers = {
            Authorization: `Bearer ${TOKEN}`,
            ...(i % 2 ? { 'X-Edgebloom-Test-Abort-After': '20' } : {}),
          };
          const res = await w.fetch(`http://edgebloom.test${path}`, { headers });
          const bytes = new Uint8Array(await res.arrayBuffer());
          return { status: res.status, bytes, left: i % 2 === 1 };
        }),
      );
      const whole = answers.filter((a) => !a.left);
      for (const a of whole) assert.equal(a.status, 200, new TextDecoder().decode(a.bytes).slice(0, 300));
      for (const a of whole.slice(1)) assert.deepEqual(a.bytes, whole[0].bytes, 'every reader gets the same snapshot');
    }
    const end = await idle();
    t.diagnostic(`Go's memory: ${(start.memoryBytes / MIB).toFixed(1)} → ${(end.memoryBytes / MIB).toFixed(1)} MiB`);
    const grown = end.memoryBytes - start.memoryBytes;
    assert.ok(grown <= ALLOWED_GROWTH, `Go's memory grew ${(grown / MIB).toFixed(1)} MiB over ${BURSTS} bursts`);
  },
);

// Every delta between two checkpoints of the pool that no reader asked for
// yet is a miss of the edge cache: the front reads the shards and puts the
// answer in the cache through the request's exchange with JS. Go's memory
// stays flat over them.
const DELTAS = 6_000;
test(
  `the memory Go has taken stays flat over ${DELTAS.toLocaleString('en')} deltas the edge cache misses`,
  { timeout: 900_000 },
  async (t) => {
    const paths = [];
    for (let span = 1; span < CHECKPOINTS; span++)
      for (let a = 1; a + span <= CHECKPOINTS; a++)
        for (const f of pool)
          paths.push(`/v1/filters/${f.name}/checkpoints/${f.generation}/${a + span}/delta?from=${a}`);
    assert.ok(paths.length >= DELTAS + 300, `${paths.length} deltas in the pool`);
    paths.length = DELTAS + 300;
    const get = async (path) => {
      const res = await w.request('GET', path);
      assert.equal(res.status, 200, JSON.stringify(res.json));
      assert.equal(res.headers.get('X-Edgebloom-Cache'), 'miss', path);
    };
    await parallel(CLIENTS, paths.slice(0, 300), get);
    const start = await idle();
    await parallel(CLIENTS, paths.slice(300), get);
    const end = await idle();
    const grown = end.memoryBytes - start.memoryBytes;
    t.diagnostic(`Go's memory: ${(start.memoryBytes / MIB).toFixed(1)} -> ${(end.memoryBytes / MIB).toFixed(1)} MiB`);
    assert.ok(grown <= ALLOWED_GROWTH, `Go's memory grew ${(grown / MIB).toFixed(1)} MiB over ${DELTAS} delta misses`);
  },
);
