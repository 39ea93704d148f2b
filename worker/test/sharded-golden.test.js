// The service's snapshot of a 4-shard filter of fixed parameters and keys
// is snapshot/testdata/service-4shards.snap, byte for byte, and its totals
// (GET of the filter) are service-4shards.json's. Go's snapshot.NewSharded
// (snapshot/sharded_golden_test.go) and the npm module's sharded
// constructor build the same bytes from the same parameters and keys, and
// their statistics are checked against the same totals, so that Go, JS and
// the service agree on how a sharded filter is made and totalled.
//
//   UPDATE_GOLDEN=1 node --test worker/test/sharded-golden.test.js
//
// writes both files from the Worker (review the diff: a change means every
// copy made by the constructors differs from the service's).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildWorker, startWorker } from '../../testkit/worker.js';

const testdata = new URL('../../snapshot/testdata/', import.meta.url);
const SNAP = new URL('service-4shards.snap', testdata);
const TOTALS = new URL('service-4shards.json', testdata);

// The parameters and keys, in the order they are added (the count depends
// on it): snapshot/testdata/README.md gives the same rule.
const PARAMS = { capacity: 20000, errorRate: 0.01, shards: 4 };
const ASCII = Array.from({ length: 10000 }, (_, i) => `https://example.com/page/${i}`);
const OTHER = Array.from({ length: 100 }, (_, i) => [
  `https://example.com/café/${i}`,
  `https://例え.jp/ページ/${i}`,
  `https://example.com/😀/${i}`,
]).flat();

let dir;
let w;
let edgebloom;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edgebloom-sharded-golden-'));
  buildWorker(join(dir, 'bundle'));
  w = await startWorker(join(dir, 'bundle'), join(dir, 'state'));
  edgebloom = await import('edgebloom');
  await edgebloom.init();
});

after(async () => {
  await w?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test("the service's 4-shard snapshot of the fixed keys is the golden file", { timeout: 120_000 }, async () => {
  assert.equal((await w.request('PUT', '/v1/filters/golden', PARAMS)).status, 201);
  for (const keys of [ASCII, OTHER]) {
    const res = await w.request('POST', '/v1/filters/golden/add', { keys });
    assert.equal(res.status, 200);
    assert.equal(res.json.added.length, keys.length);
  }
  const snap = await w.request('GET', '/v1/filters/golden/snapshot');
  assert.equal(snap.status, 200);
  const stats = await w.request('GET', '/v1/filters/golden');
  assert.equal(stats.status, 200);
  const totals = {
    about:
      'The totals of GET /v1/filters/golden for service-4shards.snap, written by worker/test/sharded-golden.test.js (UPDATE_GOLDEN=1); read by snapshot/sharded_golden_test.go.',
    params: PARAMS,
    keys: ASCII.length + OTHER.length,
    total: stats.json.total,
  };
  if (process.env.UPDATE_GOLDEN === '1') {
    writeFileSync(SNAP, snap.bytes);
    writeFileSync(TOTALS, JSON.stringify(totals, null, 2) + '\n');
  }
  assert.ok(
    Buffer.from(snap.bytes).equals(readFileSync(SNAP)),
    'the snapshot differs from snapshot/testdata/service-4shards.snap; UPDATE_GOLDEN=1 writes it',
  );
  assert.deepEqual(totals, JSON.parse(readFileSync(TOTALS, 'utf8')));

  // The copy the npm module loads holds every key and totals its shards
  // as the service does.
  const copy = edgebloom.fromBytes(snap.bytes);
  try {
    assert.equal(copy.kind, 'sharded');
    assert.ok(copy.hasMany([...ASCII, ...OTHER]).every(Boolean));
    const s = copy.stats();
    const t = totals.total;
    for (const name of ['bits', 'hashes', 'count', 'setBits']) assert.equal(s[name], t[name], name);
    // The service's byteLength is its shards'; the copy's is the container's.
    assert.equal(s.byteLength, snap.bytes.length);
    for (const name of ['estimatedCount', 'fillRatio', 'estimatedErrorRate'])
      assert.ok(Math.abs(s[name] - t[name]) <= 1e-12 * t[name], `${name}: ${s[name]}, the service's ${t[name]}`);
  } finally {
    copy.free();
  }
});
