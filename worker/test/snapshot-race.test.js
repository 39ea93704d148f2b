// A snapshot streams a shard a chunk at a time while the shard goes on
// taking adds, in workerd (Miniflare), through the Go front: a reader that
// pauses in the middle of the body while adds are acknowledged, the shard
// gives its filter back and its engine stops, still gets the filter as it
// was when the snapshot began, byte for byte; a shard deleted in the middle
// fails the response, never completes it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildWorker, readToEnd, startWorker, TOKEN } from '../../testkit/worker.js';

let dir;
let w;
let edgebloom;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edgebloom-snapshot-race-'));
  buildWorker(join(dir, 'bundle'));
  edgebloom = await import('edgebloom');
  await edgebloom.init();
  w = await startWorker(join(dir, 'bundle'), join(dir, 'state'));
});

after(async () => {
  await w?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const urls = (prefix, n) => Array.from({ length: n }, (_, i) => `https://${prefix}.example/${i}`);
// An 8 MiB shard: eight pieces of a megabyte.
const PARAMS = { capacity: 7_000_000, errorRate: 0.01 };

// openSnapshot starts GET /snapshot with the shard's first read of a
// piece held (POST /_test/hold "PULL /snapshot"), and returns once it is
// held: the shard has answered, so the snapshot's moment has passed, and
// nothing of it is read yet. release() lets it go on and reads the body to
// its end: the status, the bytes, and the error that ended it, if any.
async function openSnapshot(name) {
  const object = `shard:${name}:0`;
  assert.equal((await w.hook(object, '/_test/hold', { request: 'PULL /snapshot' })).status, 204);
  const response = w.fetch(`http://edgebloom.test/v1/filters/${name}/snapshot`, {
    headers: { Authorization: `Bearer ${TOKEN}` },
  });
  assert.equal((await w.hook(object, '/_test/held', {})).status, 204);
  return {
    async release() {
      assert.equal((await w.hook(object, '/_test/release', {})).status, 204);
      return readToEnd(await response);
    },
  };
}

test('a snapshot is the filter as it was when it began, whatever races the stream', async () => {
  const name = 'race';
  const object = `shard:${name}:0`;
  assert.equal((await w.request('PUT', `/v1/filters/${name}`, PARAMS)).status, 201);
  const local = new edgebloom.BloomFilter(PARAMS);
  const before = urls('before', 3000);
  for (let i = 0; i < before.length; i += 500) {
    const keys = before.slice(i, i + 500);
    assert.equal((await w.request('POST', `/v1/filters/${name}/add`, { keys })).status, 200);
    local.addMany(keys);
  }
  const want = local.toBytes();
  const races = async () => (await w.hook(object, '/_test/counters')).json.snapshotRaces;
  const racedBefore = await races();

  const snap = await openSnapshot(name);
  // While the reader waits: adds acknowledged, the shard gives its filter
  // back (the next piece loads it from storage), more adds, the engine
  // stops (the next piece starts a fresh one and loads again), more adds.
  const during = [];
  const add = async (prefix) => {
    const keys = urls(prefix, 2000);
    for (let i = 0; i < keys.length; i += 500) {
      const res = await w.request('POST', `/v1/filters/${name}/add`, { keys: keys.slice(i, i + 500) });
      assert.equal(res.status, 200, JSON.stringify(res.json));
    }
    during.push(...keys);
  };
  await add('during-a');
  assert.equal((await w.hook(object, '/_test/evict', {})).status, 204);
  await add('during-b');
  assert.equal((await w.hook(object, '/_test/crash', {})).status, 204);
  await add('during-c');
  const { status, bytes, length, error } = await snap.release();
  assert.equal(status, 200);
  assert.equal(error, null);
  assert.equal(length, want.length);
  assert.equal(bytes.length, want.length);
  assert.ok(
    bytes.every((b, i) => b === want[i]),
    'the snapshot is the filter of the keys acknowledged before it began, count and checksum included',
  );
  // The adds did race the stream: the shard cleared bits they set from
  // the pieces it had not sent yet.
  assert.ok((await races()) > racedBefore, 'adds set bits while the snapshot was streamed');

  // And the next snapshot has every key.
  local.addMany(during);
  const next = await w.request('GET', `/v1/filters/${name}/snapshot`);
  assert.deepEqual(next.bytes, local.toBytes());
  local.free();
});

test('a shard deleted while its snapshot streams fails the response, never completes it', async () => {
  const name = 'gone';
  assert.equal((await w.request('PUT', `/v1/filters/${name}`, PARAMS)).status, 201);
  assert.equal((await w.request('POST', `/v1/filters/${name}/add`, { keys: urls('gone', 100) })).status, 200);
  const snap = await openSnapshot(name);
  assert.equal((await w.request('DELETE', `/v1/filters/${name}`)).status, 204);
  // The front may have sent its status before the shard failed (then the
  // body ends short of its length) or not (then it answers an error).
  const { status, bytes, length, error } = await snap.release();
  assert.ok(
    status !== 200 || error !== null || bytes.length < length,
    `status ${status}, ${bytes.length} of ${length} bytes, no error`,
  );
  assert.match(w.log(), /a snapshot ended at byte \d+ of \d+/);
});
