// A ShardedBloomFilter is a filter like the others: the getters of a
// BloomFilter, equal to its stats(); a constructor that makes the Worker's
// shards; batches routed in the engine that answer as its shards do, all or
// nothing.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { init, BloomFilter, ShardedBloomFilter, fromBytes } from 'edgebloom';
import { xxh64 } from '../../web-demo/xxh64.js';
import { crawlerURLs, routerBytes } from './helpers.js';
import { liveFilters } from './engine.js';

before(() => init());

const GETTERS = [
  'bits',
  'hashes',
  'count',
  'setBits',
  'estimatedCount',
  'fillRatio',
  'estimatedErrorRate',
  'capacity',
  'errorRate',
  'overCapacity',
  'byteLength',
];

// intl returns n keys of which about half hold non-ASCII characters.
const intl = (n) => crawlerURLs(n).map((k, i) => (i % 2 ? k.replace('example', 'exämple-日本') + '/😀' : k));

// shardOf returns the shard the router of s shards gives key, read from
// Go's router (snapshot/testdata/routers.json).
function shardOf(s) {
  const router = BloomFilter.fromBytes(routerBytes(s));
  return (key) => router.positions(key)[0];
}

for (const shards of [2, 4, 16]) {
  test(`${shards} shards: every getter of a BloomFilter, equal to stats()`, () => {
    const f = new ShardedBloomFilter({ capacity: 10_000, errorRate: 0.01, shards });
    const check = (when) => {
      const s = f.stats();
      assert.equal(f.kind, 'sharded');
      assert.equal(s.kind, 'sharded');
      for (const name of GETTERS) assert.equal(f[name], s[name], `${when}: ${name}`);
      assert.equal(s.layers, shards);
      assert.equal(f.shards, shards);
      assert.equal(f.byteLength, f.toBytes().length, `${when}: byteLength`);
    };
    check('empty');
    assert.equal(f.count, 0);
    assert.equal(f.capacity, shards * Math.ceil(10_000 / shards));
    assert.equal(f.errorRate, 0.01);
    const fresh = f.addMany(intl(8000)).filter(Boolean).length;
    check('after 8000 keys');
    // count is the keys that were new (a false positive is not).
    assert.equal(f.count, fresh);
    assert.ok(fresh > 7950, `${fresh} new`);
    assert.ok(Math.abs(f.estimatedCount - 8000) < 200, `estimatedCount ${f.estimatedCount}`);
    assert.ok(f.fillRatio > 0.3 && f.fillRatio < 0.6, `fillRatio ${f.fillRatio}`);
    assert.equal(f.overCapacity, false);
    // And the same of a copy loaded from its bytes.
    const g = fromBytes(f.toBytes());
    for (const name of GETTERS) assert.equal(g[name], f[name], `loaded: ${name}`);
    f.free();
    g.free();
  });
}

test("the constructor makes the Worker's shards: Go's router, shards of ceil(capacity / shards), keys in the router's shard", () => {
  const keys = intl(3000);
  for (const shards of [2, 3, 8]) {
    const f = new ShardedBloomFilter({ capacity: 10_001, errorRate: 0.02, shards });
    assert.deepEqual(f.addMany(keys).filter(Boolean).length, keys.length);
    const bytes = f.toBytes();
    // The router record right after the header, byte for byte Go's
    // snapshot.Router(shards).
    const router = routerBytes(shards);
    assert.deepEqual(bytes.subarray(24 + 8 * shards, 24 + 8 * shards + router.length), router);
    const route = shardOf(shards);
    const one = new BloomFilter({ capacity: Math.ceil(10_001 / shards), errorRate: 0.02 });
    for (let i = 0; i < shards; i++) {
      const shard = f.shard(i);
      assert.equal(shard.bits, one.bits);
      assert.equal(shard.hashes, one.hashes);
      const mine = keys.filter((k) => route(k) === i);
      assert.equal(shard.count, mine.length, `shard ${i}`);
      assert.ok(
        mine.every((k) => shard.has(k)),
        `shard ${i} holds its keys`,
      );
    }
    one.free();
    f.free();
  }
});

test('batches answer as single calls and as the shards do, for ASCII, non-ASCII, byte and long keys', () => {
  const enc = new TextEncoder();
  const long = 'https://long.example/' + 'ü'.repeat(300_000); // longer than a piece: hashed from JS
  const keys = [
    ...intl(5000),
    enc.encode('https://bytes.example/1'),
    long,
    'https://www.example0.com/path/0/page-0.html',
  ];
  const a = new ShardedBloomFilter({ capacity: 6000, errorRate: 0.01, shards: 4 });
  const b = new ShardedBloomFilter({ capacity: 6000, errorRate: 0.01, shards: 4 });
  const added = a.addMany(keys);
  // The last key repeats the first: new only the first time, as add says.
  assert.deepEqual(
    added,
    keys.map((k) => b.add(k)),
  );
  assert.equal(added.at(-1), false);
  assert.deepEqual(a.toBytes(), b.toBytes());
  const probe = [...keys, ...crawlerURLs(5000, 'https://absent.example')];
  const many = a.hasMany(probe);
  assert.deepEqual(
    many,
    probe.map((k) => b.has(k)),
  );
  assert.ok(many.slice(0, keys.length).every(Boolean), 'no false negatives');
  const fp = many.slice(keys.length).filter(Boolean).length / 5000;
  assert.ok(fp < 0.025, `false positives ${fp}`);
  const route = shardOf(4);
  assert.ok(keys.every((k) => a.shard(route(typeof k === 'string' ? k : new TextDecoder().decode(k))).has(k)));
  a.free();
  b.free();
});

test('a batch with a refused key refuses all, as one filter does, and the filter keeps working', () => {
  const f = new ShardedBloomFilter({ capacity: 1000, errorRate: 0.01, shards: 4 });
  const one = new BloomFilter({ capacity: 1000, errorRate: 0.01 });
  f.addMany(['https://a.example/']);
  const before = f.toBytes();
  for (const bad of [42, null, undefined, {}, ['x']]) {
    const keys = ['https://b.example/', 'https://c.example/', bad, 'https://d.example/'];
    for (const method of ['addMany', 'hasMany']) {
      const expected = (() => {
        try {
          one[method](keys);
        } catch (err) {
          return err;
        }
        assert.fail('one filter took the batch');
      })();
      assert.throws(
        () => f[method](keys),
        (err) => err instanceof TypeError && err.message === expected.message && /keys\[2\]/.test(err.message),
      );
    }
  }
  assert.throws(() => f.addMany('https://a.example/'), TypeError);
  assert.deepEqual(f.toBytes(), before, 'nothing was added');
  assert.equal(f.count, 1);
  assert.deepEqual(f.addMany(['https://b.example/', 'https://a.example/']), [true, false]);
  f.free();
  one.free();
});

test('bad constructor arguments are refused with the argument and the rule', () => {
  for (const [opts, Err, re] of [
    [undefined, TypeError, /options object/],
    [{ capacity: 100, errorRate: 0.01 }, TypeError, /"shards"/],
    [
      { capacity: 100, errorRate: 0.01, shards: 1 },
      RangeError,
      /"shards" must be an integer from 2 to 65536.*BloomFilter/,
    ],
    [{ capacity: 100, errorRate: 0.01, shards: 65537 }, RangeError, /"shards"/],
    [{ capacity: 100, errorRate: 0.01, shards: 2.5 }, RangeError, /"shards"/],
    [{ capacity: 0, errorRate: 0.01, shards: 4 }, RangeError, /"capacity"/],
    [{ capacity: 100, errorRate: 1, shards: 4 }, RangeError, /"errorRate"/],
  ]) {
    assert.throws(
      () => new ShardedBloomFilter(opts),
      (err) => err instanceof Err && re.test(err.message),
      JSON.stringify(opts),
    );
  }
  const router = new BloomFilter({ bits: 4, hashes: 1 }); // seed 0: not the router
  const shards = [1, 2, 3, 4].map(() => new BloomFilter({ capacity: 10, errorRate: 0.1 }));
  assert.throws(() => new ShardedBloomFilter(router, shards), /router/);
  const f = new ShardedBloomFilter({ capacity: 100, errorRate: 0.01, shards: 2 });
  assert.equal(f.add('ok'), true, 'the module keeps working');
  for (const g of [router, ...shards, f]) g.free();
});

test('after free(), or once a shard is freed, every call says ERR_FREED', () => {
  const f = new ShardedBloomFilter({ capacity: 100, errorRate: 0.01, shards: 3 });
  f.add('a');
  f.shard(1).free();
  assert.throws(() => f.hasMany(['a', 'b']), { code: 'ERR_FREED' });
  assert.throws(() => f.has('a'), { code: 'ERR_FREED' });
  f.free();
  for (const call of [() => f.has('a'), () => f.addMany(['a']), () => f.count, () => f.stats(), () => f.toBytes()]) {
    assert.throws(call, { code: 'ERR_FREED' });
  }
  f.free(); // again: nothing
  const g = new ShardedBloomFilter({ capacity: 100, errorRate: 0.01, shards: 3 });
  assert.deepEqual(g.addMany(['a', 'a']), [true, false], 'a new filter works');
  g.free();
});

// withSeed returns the record of f with its seed set to seed and its
// checksum made again (docs/format.md: XXH64, seed 0, of all before it).
function withSeed(f, seed) {
  const b = f.toBytes();
  const dv = new DataView(b.buffer);
  dv.setBigUint64(8, seed, true);
  dv.setBigUint64(b.length - 8, xxh64(b.subarray(0, b.length - 8)), true);
  return b;
}

test('shards of different seeds, which the engine does not route, answer alike from JS', () => {
  const keys = intl(2000);
  const shards = [0n, 7n].map((seed) =>
    BloomFilter.fromBytes(withSeed(new BloomFilter({ capacity: 2000, errorRate: 0.01 }), seed)),
  );
  const f = new ShardedBloomFilter(BloomFilter.fromBytes(routerBytes(2)), shards);
  assert.ok(f.addMany(keys).every(Boolean));
  assert.ok(f.hasMany(keys).every(Boolean));
  assert.equal(f.has(keys[5]), true);
  const route = shardOf(2);
  assert.equal(shards[1].count, keys.filter((k) => route(k) === 1).length);
  assert.equal(fromBytes(f.toBytes()).count, 2000);
  f.free();
});

test('a filter past the memory budget is ERR_TOO_LARGE and leaves no shard behind', () => {
  const before = liveFilters();
  // Shards of about 20 MiB each: the first ones fit the 64 MiB budget, not all four.
  assert.throws(() => new ShardedBloomFilter({ capacity: 66_000_000, errorRate: 0.01, shards: 4 }), {
    code: 'ERR_TOO_LARGE',
  });
  assert.equal(liveFilters(), before, 'the router and the shards made before the refusal are freed');
  const f = new ShardedBloomFilter({ capacity: 1000, errorRate: 0.01, shards: 4 });
  assert.equal(f.add('ok'), true, 'the module keeps working');
  f.free();
  assert.equal(liveFilters(), before);
});
