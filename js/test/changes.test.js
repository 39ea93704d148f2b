// Storing a classic filter by what changes: constant-time parameters,
// batch adds that report the bits they set, replaying them, and byte ranges
// of the encoding read and written without encoding the filter.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { init, BloomFilter, ScalableBloomFilter, WindowBloomFilter, CountingBloomFilter } from 'edgebloom';
import { crawlerURLs } from './helpers.js';

before(() => init());

test('addManyChanges: the same answers as addMany, and exactly the bits that turned on', () => {
  const a = new BloomFilter({ capacity: 5_000, errorRate: 0.01 });
  const b = new BloomFilter({ capacity: 5_000, errorRate: 0.01 });
  const copy = new BloomFilter({ capacity: 5_000, errorRate: 0.01 });
  a.addMany(crawlerURLs(1_000, 'https://before.example'));
  b.addMany(crawlerURLs(1_000, 'https://before.example'));
  copy.addMany(crawlerURLs(1_000, 'https://before.example'));
  const keys = [...crawlerURLs(2_000), 'ü', new Uint8Array([1, 2, 3]), ...crawlerURLs(100)]; // 100 repeats
  const setBefore = b.setBits;
  const r = b.addManyChanges(keys);
  assert.deepEqual(r.added, a.addMany(keys));
  assert.equal(r.count, a.count);
  assert.ok(r.changed instanceof Uint32Array);
  assert.equal(new Set(r.changed).size, r.changed.length, 'each position once');
  assert.equal(b.setBits - setBefore, r.changed.length, 'every reported bit turned on');
  assert.ok(b.equals(a));
  // Replayed on a copy from before, and replayed twice: the same bytes.
  copy.applyChanges(r);
  assert.deepEqual(copy.toBytes(), b.toBytes());
  copy.applyChanges(r);
  assert.deepEqual(copy.toBytes(), b.toBytes());
  // Keys already present change nothing.
  const again = b.addManyChanges(keys.slice(0, 50));
  assert.equal(again.changed.length, 0);
  assert.deepEqual(again.added, new Array(50).fill(false));
  for (const f of [a, b, copy]) f.free();
});

test('addManyChanges over several scratch batches, and a bad key adds nothing', () => {
  const f = new BloomFilter({ capacity: 50_000, errorRate: 0.01 });
  const g = new BloomFilter({ capacity: 50_000, errorRate: 0.01 });
  const big = crawlerURLs(20_000).map((u) => u + 'x'.repeat(60)); // > 1 MiB of scratch
  const r = f.addManyChanges(big);
  g.applyChanges(r);
  assert.deepEqual(g.toBytes(), f.toBytes());
  const before = f.toBytes();
  assert.throws(() => f.addManyChanges(['https://new.example/', 42]), TypeError);
  assert.deepEqual(f.toBytes(), before);
  assert.throws(() => f.addManyChanges('x'), TypeError);
  f.free();
  g.free();
});

test('applyChanges refuses a bad position or count and changes nothing', () => {
  const f = new BloomFilter({ bits: 1000, hashes: 3 });
  f.add('a');
  const before = f.toBytes();
  assert.throws(() => f.applyChanges({ changed: [1, 1000], count: 2 }), { name: 'RangeError', code: 'ERR_ARG' });
  assert.throws(() => f.applyChanges({ changed: [1, -1], count: 2 }), RangeError);
  assert.throws(() => f.applyChanges({ changed: [1], count: -1 }), RangeError);
  assert.throws(() => f.applyChanges({ changed: 'x', count: 1 }), TypeError);
  assert.throws(() => f.applyChanges(null), TypeError);
  assert.deepEqual(f.toBytes(), before);
  f.applyChanges({ changed: new Uint32Array([5, 999]), count: 7 });
  assert.equal(f.count, 7);
  assert.equal(f.setBits, 5);
  f.free();
});

test('readBytes gives toBytes() ranges; writeBytes rebuilds the payload', () => {
  for (const bits of [100, 4099, 3 * 2 ** 20 * 8 + 64]) {
    const f = new BloomFilter({ bits, hashes: 4 });
    f.addMany(crawlerURLs(Math.min(Math.floor(bits / 8), 100_000)));
    const all = f.toBytes();
    assert.equal(f.byteLength, all.length);
    assert.deepEqual(f.readBytes(0), all);
    for (const [a, b] of [
      [0, 64],
      [0, 1],
      [63, 65],
      [64, 72],
      [all.length - 8, all.length],
      [all.length - 9, all.length - 3],
      [5, 5],
      [1000 % all.length, all.length],
    ]) {
      if (a > b) continue;
      assert.deepEqual(f.readBytes(a, b), all.subarray(a, b), `[${a}, ${b})`);
    }
    const g = new BloomFilter({ bits, hashes: 4 });
    g.writeBytes(64, all.subarray(64, all.length - 8));
    g.applyChanges({ changed: [], count: f.count });
    assert.deepEqual(g.toBytes(), all);
    f.free();
    g.free();
  }
  const f = new BloomFilter({ bits: 100, hashes: 2 });
  const before = f.toBytes();
  assert.throws(() => f.readBytes(-1, 3), { code: 'ERR_ARG' });
  assert.throws(() => f.readBytes(0, before.length + 1), RangeError);
  assert.throws(() => f.readBytes(5, 4), RangeError);
  assert.throws(() => f.writeBytes(0, new Uint8Array(4)), { code: 'ERR_ARG' }); // the header
  assert.throws(() => f.writeBytes(before.length - 8, new Uint8Array(1)), RangeError); // the checksum
  assert.throws(() => f.writeBytes(64, [1]), TypeError);
  // Bit 100 and above are padding: refused, nothing written.
  const bad = new Uint8Array(16).fill(0xff);
  assert.throws(() => f.writeBytes(64, bad), { code: 'ERR_CORRUPT' });
  assert.deepEqual(f.toBytes(), before);
  f.free();
});

test('the changes and byte ranges are for classic filters', () => {
  const c = new CountingBloomFilter({ capacity: 100, errorRate: 0.01 });
  assert.equal(c.addManyChanges, undefined);
  assert.equal(c.readBytes, undefined);
  c.free();
});

test('parameter getters read no bits; stats() agrees with them all', () => {
  const f = new BloomFilter({ capacity: 1_000, errorRate: 0.01 });
  f.addMany(crawlerURLs(600));
  const s = f.stats();
  for (const k of [
    'kind',
    'bits',
    'hashes',
    'count',
    'capacity',
    'errorRate',
    'byteLength',
    'setBits',
    'estimatedCount',
    'fillRatio',
    'estimatedErrorRate',
    'overCapacity',
  ]) {
    assert.equal(f[k], s[k], k);
  }
  f.add('one more');
  assert.equal(f.count, s.count + 1, 'count is read afresh');
  f.clear();
  assert.equal(f.count, 0);
  assert.equal(f.bits, s.bits);
  f.free();
  assert.throws(() => f.bits, { code: 'ERR_FREED' });
  // A scalable filter grows: its size is read afresh.
  const g = new ScalableBloomFilter({ initialCapacity: 100, errorRate: 0.01 });
  const bits0 = g.bits;
  g.addMany(crawlerURLs(1_000));
  assert.ok(g.bits > bits0 && g.layers > 1 && g.capacity > 100);
  assert.equal(g.bits, g.stats().bits);
  assert.equal(g.byteLength, g.toBytes().length);
  g.clear();
  assert.equal(g.layers, 1);
  assert.equal(g.bits, bits0);
  g.free();
  const w = new WindowBloomFilter({ capacityPerGeneration: 100, errorRate: 0.01, generations: 3 });
  w.addMany(crawlerURLs(50));
  assert.equal(w.generations, 3);
  assert.equal(w.count, 50);
  w.free();
});
