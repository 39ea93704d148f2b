// A cache hit costs what it is (DESIGN.md, "Bounds"): in workerd, with
// Miniflare's real Cache API, readers of a large filter's cached checkpoint
// delta and snapshot take no share of the front's budget of expensive
// work, which only a request that builds an answer takes. A filter created
// for 12 M keys at 1 % in 4 shards is weighed from those parameters, not
// from the keys it holds: it need not be filled for its requests to weigh
// what a full one's would (front/bounds.go).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { buildWorker, startWorker } from '../../testkit/worker.js';

const SHARDS = 4;
const BUDGET = 24 << 20; // heavyBudget in front/bounds.go

let dir;
let mf;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edgebloom-hits-'));
  buildWorker(join(dir, 'bundle'));
  mf = await startWorker(join(dir, 'bundle'), join(dir, 'state'), {
    bindings: { EDGEBLOOM_CHECKPOINT_SECONDS: '1' },
  });
});

after(async () => {
  await mf?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const urls = (prefix, n) => Array.from({ length: n }, (_, i) => `https://${prefix}.example/${i}`);
const text = (res) => new TextDecoder().decode(res.bytes).slice(0, 300);

async function instance() {
  const res = await mf.request('GET', '/_test/instance');
  assert.equal(res.status, 200);
  return res.json;
}

// until polls check (a function returning a truthy value when done) for
// at most ms, and returns its value.
async function until(what, check, ms = 30_000) {
  for (const deadline = Date.now() + ms; ; await delay(20)) {
    const v = await check();
    if (v) return v;
    assert.ok(Date.now() < deadline, `${what}: not within ${ms} ms`);
  }
}

// A filter with two checkpoints, whose delta from the first to the second
// and snapshot of the second are read once, and so cached: the paths of
// its cached delta and snapshot.
async function cachedCheckpoints(name, capacity) {
  const made = await mf.request('PUT', `/v1/filters/${name}`, { capacity, errorRate: 0.01, shards: SHARDS });
  assert.equal(made.status, 201, JSON.stringify(made.json));
  let first = 0;
  let latest;
  for (const round of [1, 2]) {
    const added = await mf.request('POST', `/v1/filters/${name}/add`, { keys: urls(`${name}-${round}`, 200) });
    assert.equal(added.status, 200, JSON.stringify(added.json));
    latest = await until(`checkpoint ${round} of ${name}`, async () => {
      const l = await mf.request('GET', `/v1/filters/${name}/checkpoints/latest`);
      return l.status === 200 && l.json.checkpoint > first ? l.json : null;
    });
    first ||= latest.checkpoint;
  }
  const base = `/v1/filters/${name}/checkpoints/${latest.generation}/${latest.checkpoint}`;
  const paths = { delta: `${base}/delta?from=${first}`, snapshot: `${base}/snapshot` };
  for (const path of Object.values(paths)) {
    const res = await mf.request('GET', path);
    assert.equal(res.status, 200, text(res));
  }
  return paths;
}

let big;
let small;

// Reads every path of reads at once and returns the count of each status,
// and the count of answers that did not come from the cache.
async function burst(reads) {
  const answers = await Promise.all(reads.map((path) => mf.request('GET', path)));
  const statuses = {};
  let misses = 0;
  for (const res of answers) {
    statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    if (res.status === 200 && res.headers.get('X-Edgebloom-Cache') !== 'hit') misses++;
  }
  return { statuses, misses };
}

test(
  '1,000 readers of a large filter’s cached delta and 100 of its cached snapshot: none refused',
  { timeout: 300_000 },
  async () => {
    big = await cachedCheckpoints('hits-big', 12_000_000);
    small = await cachedCheckpoints('hits-small', 200_000);
    const reads = [...Array(1000).fill(big.delta), ...Array(100).fill(big.snapshot)];
    const { statuses, misses } = await burst(reads);
    assert.deepEqual(statuses, { 200: 1100 }, 'every cached read answered 200');
    assert.equal(misses, 0, 'every answer came from the cache');
    const now = await until('the front idle', async () => {
      const i = await instance();
      return i.heavyBytes === 0 && i.heavyWaiting === 0 ? i : null;
    });
    assert.equal(now.heavyWaiting, 0);
  },
);

// With the whole budget taken (as a large build would take it), cached
// reads of the large filter and of another one on the same front go on
// all the same, and none of them waited for a share: the budget stays the
// holder's alone throughout.
test('cached reads are not held up while the budget is taken', { timeout: 120_000 }, async () => {
  assert.ok(big && small, 'the first test made the filters');
  // A checkpoint's snapshot is cached for 64 intervals (64 s here): read
  // each path once more, so that the cache holds them all for the burst.
  for (const path of [big.delta, big.snapshot, small.delta, small.snapshot]) {
    assert.equal((await mf.request('GET', path)).status, 200);
  }
  const holder = mf.request('GET', `/_test/heavy?bytes=${BUDGET}`);
  await until('the budget taken', async () => (await instance()).heavyBytes === BUDGET);
  const reads = [
    ...Array(150).fill(big.delta),
    ...Array(50).fill(big.snapshot),
    ...Array(50).fill(small.delta),
    ...Array(50).fill(small.snapshot),
  ];
  const { statuses, misses } = await burst(reads);
  assert.deepEqual(statuses, { 200: 300 }, 'every cached read answered 200 while the budget was taken');
  assert.equal(misses, 0);
  const during = await instance();
  assert.deepEqual([during.heavyBytes, during.heavyWaiting], [BUDGET, 0], JSON.stringify(during));
  assert.equal((await mf.request('POST', '/_test/heavy/release')).status, 200);
  assert.equal((await holder).status, 200);
});
