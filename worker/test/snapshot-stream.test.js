// snapshot-stream.js on its own, in Node with the npm module: a shard's
// snapshot read a piece at a time, with adds, an eviction and a flood of
// adds landing between pieces, deterministically (Node's stream asks for a
// piece only when the reader reads; workerd reads ahead as it likes, which
// snapshot.test.js covers).
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { snapshotResponse, PIECE_BYTES, MAX_POSITIONS } from '../shard/snapshot-stream.js';

let edgebloom;
before(async () => {
  edgebloom = await import('edgebloom');
  await edgebloom.init(undefined, { memoryLimit: 512 * 2 ** 20 });
});

const urls = (prefix, n) => Array.from({ length: n }, (_, i) => `https://${prefix}.example/${i}`);

// shardOf is what snapshotResponse needs of a shard: its streams, its
// engine and its filter (open), which reload() swaps for the filter
// loaded again from its bytes, as an eviction and the next request would.
function shardOf(filter) {
  const shard = {
    filter,
    streams: new Set(),
    withEngine: async (what, fn) => fn(),
    open: () => shard.filter,
    add(keys) {
      const changes = shard.filter.addManyChanges(keys);
      for (const s of shard.streams) s.note(changes.changed);
    },
    reload() {
      const bytes = shard.filter.toBytes();
      shard.filter.free();
      shard.filter = edgebloom.BloomFilter.fromBytes(bytes);
    },
  };
  return shard;
}

async function reader(shard) {
  const res = snapshotResponse(shard, {}, shard.filter);
  const r = res.body.getReader();
  const chunks = [];
  return {
    async read(pieces = Infinity) {
      for (let i = 0; i < pieces; i++) {
        const { done, value } = await r.read();
        if (done) return true;
        chunks.push(value);
      }
      return false;
    },
    bytes: () => Buffer.concat(chunks),
  };
}

test('adds between pieces are not in the snapshot; an eviction changes nothing', async () => {
  // 5 M keys at 1%: 5.7 MiB, 6 pieces.
  const shard = shardOf(new edgebloom.BloomFilter({ capacity: 5_000_000, errorRate: 0.01 }));
  shard.add(urls('first', 20_000));
  const before = Buffer.from(shard.filter.toBytes());
  assert.ok(before.length > 5 * PIECE_BYTES);

  const s = await reader(shard);
  await s.read(2); // the header and a piece
  shard.add(urls('later', 20_000));
  await s.read(2);
  shard.reload();
  shard.add(urls('after-reload', 20_000));
  assert.equal(await s.read(), true);
  assert.equal(shard.streams.size, 0, 'the stream let go of its positions');
  assert.ok(s.bytes().equals(before), 'the snapshot is the filter as it was');

  const now = Buffer.from(shard.filter.toBytes());
  assert.ok(!now.equals(before));
  const s2 = await reader(shard);
  await s2.read();
  assert.ok(s2.bytes().equals(now), 'a snapshot with nothing added meanwhile is the filter');
});

test('a snapshot that outlives more than MAX_POSITIONS set bits fails rather than lies', async () => {
  const shard = shardOf(new edgebloom.BloomFilter({ capacity: 5_000_000, errorRate: 0.01 }));
  const s = await reader(shard);
  await s.read(2);
  // 7 bits a key: 160 000 keys set more than 2^20.
  for (let i = 0; i < 16; i++) shard.add(urls(`flood-${i}`, 10_000));
  assert.ok(MAX_POSITIONS < 16 * 10_000 * 7);
  await assert.rejects(s.read(), /bits were set while the snapshot was sent/);
  assert.equal(shard.streams.size, 0);
});

test('a snapshot cancelled by its reader lets go of its positions', async () => {
  const shard = shardOf(new edgebloom.BloomFilter({ capacity: 1_000_000, errorRate: 0.01 }));
  const res = snapshotResponse(shard, {}, shard.filter);
  const r = res.body.getReader();
  await r.read();
  assert.equal(shard.streams.size, 1);
  await r.cancel();
  assert.equal(shard.streams.size, 0);
});
