// WindowBloomFilter: the same bytes as Go's golden vector, rotation, bad input.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { init, WindowBloomFilter, BloomFilter, fromBytes } from 'edgebloom';
import { vectors, fromBase64 } from './vectors.js';
import { crawlerURLs } from './helpers.js';
// The engine's rotate, which only WindowBloomFilter offers; here on another kind.
import { rotate } from '../filter.js';

before(() => init());

const golden = vectors.filters.find((v) => v.kind === 'window');

test('the golden window loads, answers and re-encodes as in Go', () => {
  assert.ok(golden, 'bloom/testdata/vectors.json has a window case');
  const bytes = fromBase64(golden.base64);
  const w = WindowBloomFilter.fromBytes(bytes);
  assert.equal(w.generations, golden.params.generations);
  assert.deepEqual(w.hasMany(golden.probes), golden.has);
  assert.deepEqual(w.toBytes(), bytes);
  // One more rotation in Go's order drops the second generation too.
  w.rotate();
  const g = fromBytes(bytes);
  assert.ok(g instanceof WindowBloomFilter);
  g.rotate();
  assert.deepEqual(w.toBytes(), g.toBytes());
  w.free();
  g.free();
});

test('rotate forgets a key generations rotations after its last add', () => {
  const w = new WindowBloomFilter({ capacityPerGeneration: 1000, errorRate: 0.001, generations: 3 });
  const day0 = crawlerURLs(500, 'https://day0.example');
  const day1 = crawlerURLs(500, 'https://day1.example');
  assert.ok(w.addMany(day0).every(Boolean));
  w.rotate();
  assert.ok(w.addMany(day1).every(Boolean));
  assert.equal(w.add(day0[0]), false, 'a key of an older generation is not new');
  w.rotate();
  w.rotate(); // day0 leaves, but day0[0] was added again on day 1
  assert.equal(w.has(day0[0]), true);
  assert.ok(w.hasMany(day0.slice(1)).filter(Boolean).length < 10, 'day0 keys are forgotten');
  assert.ok(w.hasMany(day1).every(Boolean), 'day1 keys stay');
  const s = w.stats();
  assert.equal(s.kind, 'window');
  assert.equal(s.layers, 3);
  assert.ok(s.hashes > 0);
  assert.equal(s.capacity, 1000);
  assert.equal(s.errorRate, 0.001);
  assert.equal(s.bits, 3 * new BloomFilter({ capacity: 1000, errorRate: 0.001 }).bits);
  w.rotate();
  w.rotate();
  assert.equal(w.has(day0[0]), false);
  assert.equal(w.setBits, 0);
  assert.equal(w.count, 0);
  w.free();
});

test('bad options and bad bytes', () => {
  for (const opts of [
    { capacityPerGeneration: 0, errorRate: 0.01, generations: 2 },
    { capacityPerGeneration: 10, errorRate: 1, generations: 2 },
    { capacityPerGeneration: 10, errorRate: 0.01, generations: 0 },
    { capacityPerGeneration: 10, errorRate: 0.01, generations: 1.5 },
    { capacityPerGeneration: 2 ** 32, errorRate: 0.01, generations: 8 },
    // Tiny generations fit every bit bound, but 3e7 of them ran for minutes.
    { capacityPerGeneration: 1, errorRate: 0.5, generations: 4097 },
    { capacityPerGeneration: 1, errorRate: 0.5, generations: 3e7 },
  ]) {
    assert.throws(() => new WindowBloomFilter(opts), RangeError, JSON.stringify(opts));
  }
  const widest = new WindowBloomFilter({ capacityPerGeneration: 1, errorRate: 0.5, generations: 4096 });
  assert.equal(widest.generations, 4096);
  widest.free();
  assert.throws(() => new WindowBloomFilter({ capacityPerGeneration: 10, errorRate: 0.01 }), TypeError);
  assert.throws(() => new WindowBloomFilter(), TypeError);

  const bytes = fromBase64(golden.base64);
  assert.throws(() => BloomFilter.fromBytes(bytes), { code: 'ERR_KIND' });
  const classic = new BloomFilter({ capacity: 10, errorRate: 0.01 });
  assert.throws(() => WindowBloomFilter.fromBytes(classic.toBytes()), { code: 'ERR_KIND' });
  assert.throws(() => rotate(classic), { code: 'ERR_UNSUPPORTED' });
  classic.free();
  const flipped = bytes.slice();
  flipped[200] ^= 1;
  assert.throws(() => WindowBloomFilter.fromBytes(flipped), { code: 'ERR_CHECKSUM' });
  assert.throws(() => WindowBloomFilter.fromBytes(bytes.subarray(0, bytes.length - 1)), { code: 'ERR_TRUNCATED' });
  assert.throws(() => WindowBloomFilter.fromBytes(bytes, { maxBits: 100 }), { code: 'ERR_TOO_LARGE' });

  const w = new WindowBloomFilter({ capacityPerGeneration: 10, errorRate: 0.01, generations: 2 });
  w.free();
  assert.throws(() => w.rotate(), { code: 'ERR_FREED' });
});
