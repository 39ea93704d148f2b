// A shard's snapshot is streamed a piece at a time from the filter in the
// engine (snapshot-stream.js), in workerd (Miniflare): snapshots of a
// 28.6 MiB shard taken while clients add are each a filter as it was at
// one moment: its checksum (read when the snapshot began) holds, its count
// is between the counts before and after, and every key acknowledged
// before it began is in it. (workerd reads a response ahead as it likes;
// test/snapshot-stream.test.js puts adds between pieces deterministically.)
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildWorker, startWorker } from '../../testkit/worker.js';

let dir;
let w;
let BloomFilter; // the npm module's, imported by name once the build has linked it

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edgebloom-snapshot-'));
  buildWorker(join(dir, 'bundle'));
  w = await startWorker(join(dir, 'bundle'), join(dir, 'state'));
  const edgebloom = await import('edgebloom');
  await edgebloom.init(undefined, { memoryLimit: 512 * 2 ** 20 });
  BloomFilter = edgebloom.BloomFilter;
});

after(async () => {
  await w?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const urls = (prefix, n) => Array.from({ length: n }, (_, i) => `https://${prefix}.example/${i}`);

// A 28.6 MiB shard (25 M keys at 1%): 29 pieces.
const NAME = 'big';

const count = async () => (await w.request('GET', `/v1/filters/${NAME}`)).json.total.count;

test('snapshots taken while clients add are each the filter at one moment', { timeout: 300_000 }, async () => {
  assert.equal((await w.request('PUT', `/v1/filters/${NAME}`, { capacity: 25_000_000, errorRate: 0.01 })).status, 201);
  const acknowledged = [];
  for (let round = 0; round < 4; round++) {
    const keys = urls(`round${round}`, 5_000);
    assert.equal((await w.request('POST', `/v1/filters/${NAME}/add`, { keys })).status, 200);
    acknowledged.push(...keys);
    const from = await count();
    // A snapshot and eight clients' adds at once.
    const adds = Array.from({ length: 8 }, (_, c) =>
      w.request('POST', `/v1/filters/${NAME}/add`, { keys: urls(`round${round}-client${c}`, 2_000) }),
    );
    const snap = await w.request('GET', `/v1/filters/${NAME}/snapshot`);
    for (const res of await Promise.all(adds)) assert.equal(res.status, 200);
    const to = await count();
    assert.equal(snap.status, 200);
    const copy = BloomFilter.fromBytes(snap.bytes); // throws if the checksum does not hold
    assert.ok(copy.count >= from && copy.count <= to, `count ${copy.count} not in [${from}, ${to}]`);
    assert.ok(
      copy.hasMany(acknowledged).every(Boolean),
      `round ${round}: a key acknowledged before the snapshot is missing`,
    );
    copy.free();
  }
  // With nothing added meanwhile, two snapshots are the same bytes.
  const [a, b] = [
    await w.request('GET', `/v1/filters/${NAME}/snapshot`),
    await w.request('GET', `/v1/filters/${NAME}/snapshot`),
  ];
  assert.ok(Buffer.from(a.bytes).equals(Buffer.from(b.bytes)));
});
