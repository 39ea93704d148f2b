// The npm module's new ShardedBloomFilter({ capacity, errorRate, shards })
// against the Worker, in workerd (Miniflare): a filter made on the service
// with the same parameters and given the same keys snapshots to the very
// bytes of the module's toBytes(), and both answer every key alike.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildWorker, startWorker } from '../../testkit/worker.js';

let dir;
let w;
let edgebloom; // the npm module, imported by name once the build has linked it

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edgebloom-sharded-js-'));
  buildWorker(join(dir, 'bundle'));
  w = await startWorker(join(dir, 'bundle'), join(dir, 'state'));
  edgebloom = await import('edgebloom');
  await edgebloom.init();
});

after(async () => {
  await w?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

// keys returns n URLs, every third of them with non-ASCII characters.
const keys = (prefix, n) =>
  Array.from({ length: n }, (_, i) =>
    i % 3 ? `https://${prefix}.example/${i}` : `https://${prefix}-bücher.example/日本/${i}/😀`,
  );

async function ok(res, status = 200) {
  assert.equal(res.status, status, JSON.stringify(res.json));
  return res;
}

for (const [shards, capacity, errorRate] of [
  [2, 20_000, 0.01],
  [4, 30_001, 0.02],
  [5, 12_345, 0.001],
]) {
  test(`${shards} shards of ${capacity} keys at ${errorRate}: the snapshot is the module's bytes, and the answers agree`, async () => {
    const { ShardedBloomFilter, fromBytes } = edgebloom;
    const name = `js-${shards}`;
    await ok(await w.request('PUT', `/v1/filters/${name}`, { capacity, errorRate, shards }), 201);
    const local = new ShardedBloomFilter({ capacity, errorRate, shards });
    const added = keys(name, 9000);
    const fresh = [];
    for (let i = 0; i < added.length; i += 3000) {
      const batch = added.slice(i, i + 3000);
      const res = await ok(await w.request('POST', `/v1/filters/${name}/add`, { keys: batch }));
      fresh.push(...res.json.added);
    }
    assert.deepEqual(local.addMany(added), fresh, 'the same keys are new on both');
    const snap = await ok(await w.request('GET', `/v1/filters/${name}/snapshot`));
    const mine = local.toBytes();
    assert.equal(snap.bytes.length, mine.length);
    assert.ok(Buffer.from(snap.bytes).equals(Buffer.from(mine)), 'the snapshot and toBytes() differ');
    const probe = [...added.slice(0, 2000), ...keys(`absent-${name}`, 3000)];
    const checked = await ok(await w.request('POST', `/v1/filters/${name}/check`, { keys: probe }));
    assert.deepEqual(local.hasMany(probe), checked.json.present);
    const copy = fromBytes(snap.bytes);
    assert.equal(copy.count, local.count);
    assert.deepEqual(copy.hasMany(probe), checked.json.present);
    const stats = (await ok(await w.request('GET', `/v1/filters/${name}`))).json.total;
    assert.equal(local.count, stats.count);
    assert.equal(local.bits, stats.bits);
    copy.free();
    local.free();
  });
}
