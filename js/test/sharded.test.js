// Sharded containers, as the Worker publishes its snapshots: routing, bytes
// and bad input.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { init, BloomFilter, BlockedBloomFilter, CountingBloomFilter, ShardedBloomFilter, fromBytes } from 'edgebloom';
import { crawlerURLs, shardedContainer } from './helpers.js';

const container = (shards, keys) => shardedContainer({ BloomFilter, ShardedBloomFilter }, shards, keys);

before(() => init());

test('a container loads, routes every key to its shard, and re-encodes byte for byte', () => {
  const keys = crawlerURLs(4000);
  const bytes = container(4, keys);
  const f = fromBytes(bytes);
  assert.ok(f instanceof ShardedBloomFilter);
  assert.equal(f.shards, 4);
  assert.equal(f.kind, 'sharded');
  assert.deepEqual(
    f.hasMany(keys),
    keys.map(() => true),
  );
  const absent = crawlerURLs(20_000, 'https://absent.example');
  const fp = f.hasMany(absent).filter(Boolean).length / absent.length;
  assert.ok(fp < 0.02, `false positives ${fp}`);
  const s = f.stats();
  assert.equal(
    s.count,
    [0, 1, 2, 3].reduce((t, i) => t + f.shard(i).count, 0),
  );
  assert.ok(s.count >= 3950, `count ${s.count}`);
  assert.equal(s.byteLength, bytes.length);
  assert.deepEqual(f.toBytes(), bytes);
  assert.equal(f.add(keys[0]), false);
  assert.equal(f.add('https://new.example/'), true);
  f.free();
});

test('bad containers are refused with a code', () => {
  const good = container(3, ['a', 'b', 'c']);
  const bad = (at, v) => {
    const b = good.slice();
    b[at] = v;
    return b;
  };
  for (const [name, bytes, code] of [
    ['short', good.slice(0, 20), 'ERR_TRUNCATED'],
    ['cut', good.slice(0, good.length - 1), 'ERR_TRUNCATED'],
    ['trailing', Uint8Array.from([...good, 0]), 'ERR_CORRUPT'],
    ['version', bad(4, 2), 'ERR_VERSION'],
    ['one shard', bad(8, 1), 'ERR_CORRUPT'],
    ['shard count beyond the lengths', bad(8, 200), 'ERR_TRUNCATED'],
    ['damaged shard', bad(good.length - 12, good[good.length - 12] ^ 1), 'ERR_CHECKSUM'],
  ]) {
    assert.throws(() => ShardedBloomFilter.fromBytes(bytes), { code }, name);
  }
  // maxBits bounds each shard, as Go's snapshot.LoadSharded does: shards
  // under it load though together they pass it.
  const loaded = fromBytes(good);
  const bits = loaded.shard(0).bits;
  loaded.free();
  assert.throws(() => ShardedBloomFilter.fromBytes(good, { maxBits: bits - 1 }), { code: 'ERR_TOO_LARGE' });
  assert.equal(ShardedBloomFilter.fromBytes(good, { maxBits: bits }).has('a'), true);
  assert.throws(() => ShardedBloomFilter.fromBytes(new BloomFilter({ bits: 64, hashes: 1 }).toBytes()), {
    code: 'ERR_NOT_FILTER',
  });
  assert.equal(fromBytes(good).has('b'), true, 'the module keeps working');
});

test("a kind's fromBytes given a sharded snapshot says what the bytes hold and what loads them", () => {
  const snapshot = container(3, ['a', 'b', 'c']);
  for (const Kind of [BloomFilter, BlockedBloomFilter, CountingBloomFilter]) {
    assert.throws(
      () => Kind.fromBytes(snapshot),
      (err) =>
        err.code === 'ERR_NOT_FILTER' &&
        /sharded/.test(err.message) &&
        /3 shards/.test(err.message) &&
        /\bfromBytes\(bytes\)/.test(err.message) &&
        /ShardedBloomFilter\.fromBytes/.test(err.message),
      Kind.name,
    );
  }
  assert.equal(fromBytes(snapshot).has('c'), true, 'fromBytes loads it, as the message says');
});
