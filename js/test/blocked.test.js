// BlockedBloomFilter, the split-block kind: sizing, answers, Parquet's bitset
// in and out, bad input and recovery. The golden vectors are in
// vectors.test.js.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import {
  init,
  BloomFilter,
  BlockedBloomFilter,
  fromBytes,
  optimalBlocks,
  estimateBlockedFPR,
  MAX_BITS,
} from 'edgebloom';
import { crawlerURLs } from './helpers.js';

before(() => init());

test('sized as Go sizes it, with the rate on target at capacity', () => {
  const f = new BlockedBloomFilter({ capacity: 1_000_000, errorRate: 0.01 });
  // docs/format.md: 42 081 blocks for 1 000 000 keys at 1 %.
  assert.equal(f.blocks, 42_081);
  assert.equal(f.bits, 42_081 * 256);
  assert.equal(f.hashes, 8);
  assert.equal(f.kind, 'blocked');
  assert.equal(f.byteLength, 32 * 42_081 + 72);
  f.free();
  for (const p of [0.01, 0.001]) {
    const n = 100_000;
    const g = new BlockedBloomFilter({ capacity: n, errorRate: p });
    const fresh = g.addMany(crawlerURLs(n)).filter(Boolean).length;
    assert.equal(g.count, fresh);
    assert.ok(!g.overCapacity);
    const probes = crawlerURLs(1_000_000, 'https://absent.example');
    const fp = g.hasMany(probes).filter(Boolean).length / probes.length;
    // Go aims at 0.9·p, so that a real filter stays under p.
    assert.ok(fp > 0.7 * p && fp < p, `p=${p}: measured ${fp}`);
    assert.ok(
      Math.abs(g.estimatedErrorRate - fp) / fp < 0.15,
      `estimatedErrorRate ${g.estimatedErrorRate}, measured ${fp}`,
    );
    assert.ok(Math.abs(g.estimatedCount - n) / n < 0.02, `estimatedCount ${g.estimatedCount}`);
    g.free();
  }
});

test('optimalBlocks and estimateBlockedFPR size as the engine does, without making a filter', () => {
  // docs/format.md: 42 081 blocks for 1 000 000 keys at 1 %, 67 356 at 0.1 %.
  assert.equal(optimalBlocks(1_000_000, 0.01), 42_081);
  assert.equal(optimalBlocks(1_000_000, 0.001), 67_356);
  for (const [n, p] of [
    [1, 0.5],
    [20, 0.05],
    [10_000, 0.01],
    [123_457, 0.0001],
  ]) {
    const f = new BlockedBloomFilter({ capacity: n, errorRate: p });
    const b = optimalBlocks(n, p);
    assert.equal(b, f.blocks, `optimalBlocks(${n}, ${p})`);
    f.free();
    // The fewest blocks whose rate at capacity is at most 0.9 p.
    assert.ok(estimateBlockedFPR(b, n) <= 0.9 * p, `rate of ${b} blocks`);
    if (b > 1) assert.ok(estimateBlockedFPR(b - 1, n) > 0.9 * p, `rate of ${b - 1} blocks`);
  }
  assert.equal(estimateBlockedFPR(100, 0), 0);
  assert.throws(() => optimalBlocks(0, 0.01), RangeError);
  assert.throws(() => optimalBlocks(10, 1), RangeError);
  assert.throws(() => optimalBlocks('10', 0.1), TypeError);
  assert.throws(() => estimateBlockedFPR(0, 10), RangeError);
  assert.throws(() => estimateBlockedFPR(10, -1), RangeError);
  assert.equal(optimalBlocks(1_000_000, 0.01), 42_081, 'the module keeps working');
});

test('add is test-and-add; batches agree with single calls for any keys', () => {
  const keys = crawlerURLs(20_000).map((k, i) =>
    i % 3 === 0 ? new TextEncoder().encode(k) : i % 7 === 0 ? `${k}/é/例子/😀` : k,
  );
  const a = new BlockedBloomFilter({ capacity: 20_000, errorRate: 0.01 });
  const b = new BlockedBloomFilter({ capacity: 20_000, errorRate: 0.01 });
  assert.deepEqual(
    a.addMany(keys),
    keys.map((k) => b.add(k)),
  );
  assert.deepEqual(a.toBytes(), b.toBytes());
  assert.equal(a.addMany(keys).some(Boolean), false, 'repeats are not new');
  assert.deepEqual(
    a.hasMany(keys),
    keys.map(() => true),
  );
  assert.deepEqual(a.hasMany(['absent', keys[1]]), [b.has('absent'), true]);
  // A string key hashes as its UTF-8 bytes; a lone surrogate as U+FFFD.
  assert.deepEqual(a.positions('https://例子.测试/😀'), a.positions(new TextEncoder().encode('https://例子.测试/😀')));
  assert.deepEqual(a.positions('\ud800'), a.positions(new TextEncoder().encode('\ufffd')));
});

test('positions are one bit in each 32-bit word of one block, the bits add sets', () => {
  const f = new BlockedBloomFilter({ blocks: 7 });
  for (const key of crawlerURLs(50)) {
    const pos = f.positions(key);
    const block = Math.floor(pos[0] / 256);
    assert.deepEqual(
      pos.map((p) => Math.floor((p - 256 * block) / 32)),
      [0, 1, 2, 3, 4, 5, 6, 7],
    );
    f.clear();
    f.add(key);
    const bitset = f.parquetBitset();
    const set = [];
    bitset.forEach((byte, i) => {
      for (let j = 0; j < 8; j++) if ((byte >> j) & 1) set.push(8 * i + j);
    });
    assert.deepEqual(set, pos, `bits of ${key}`);
  }
});

test('union, intersect, equals, clear', () => {
  const a = new BlockedBloomFilter({ blocks: 100 });
  const b = new BlockedBloomFilter({ blocks: 100 });
  a.addMany(['a', 'both']);
  b.addMany(['b', 'both']);
  assert.equal(a.equals(b), false);
  const u = BlockedBloomFilter.fromBytes(a.toBytes());
  u.union(b);
  assert.deepEqual(u.hasMany(['a', 'b', 'both']), [true, true, true]);
  assert.equal(u.count, Math.round(u.estimatedCount));
  const i = BlockedBloomFilter.fromBytes(a.toBytes());
  i.intersect(b);
  assert.equal(i.has('both'), true);
  assert.ok(i.setBits < a.setBits);
  assert.equal(u.equals(u), true);
  assert.throws(() => a.union(new BlockedBloomFilter({ blocks: 99 })), { code: 'ERR_INCOMPATIBLE' });
  assert.throws(() => a.union(new BloomFilter({ bits: 25_600, hashes: 8 })), TypeError);
  assert.throws(() => new BloomFilter({ bits: 25_600, hashes: 8 }).union(a), TypeError);
  assert.equal(a.has('a'), true, 'a failed union changes nothing');
  a.clear();
  assert.equal(a.count, 0);
  assert.equal(a.setBits, 0);
  assert.equal(a.has('a'), false);
});

test('toBytes and fromBytes: the generic loader knows kind 5', () => {
  const f = new BlockedBloomFilter({ capacity: 1000, errorRate: 0.01 });
  f.addMany(crawlerURLs(300));
  const bytes = f.toBytes();
  assert.equal(bytes[5], 5, 'kind 5');
  assert.equal(bytes[6], 2, 'hash scheme 2');
  const g = fromBytes(bytes);
  assert.ok(g instanceof BlockedBloomFilter);
  assert.deepEqual(g.stats(), f.stats());
  assert.deepEqual(g.toBytes(), bytes);
  assert.deepEqual(BlockedBloomFilter.fromBytes(bytes.buffer).toBytes(), bytes, 'an ArrayBuffer works');
  assert.throws(() => BloomFilter.fromBytes(bytes), { code: 'ERR_KIND', message: /found blocked/ });
  assert.throws(() => BlockedBloomFilter.fromBytes(new BloomFilter({ bits: 256, hashes: 8 }).toBytes()), {
    code: 'ERR_KIND',
  });
  assert.throws(() => BlockedBloomFilter.fromBytes(bytes, { maxBits: f.bits - 1 }), { code: 'ERR_TOO_LARGE' });
  const flipped = bytes.slice();
  flipped[100] ^= 1;
  assert.throws(() => fromBytes(flipped), { code: 'ERR_CHECKSUM' });
  const k7 = bytes.slice();
  k7[24] = 7; // k must be 8
  assert.throws(() => fromBytes(k7), { code: 'ERR_CORRUPT' });
  assert.throws(() => fromBytes(bytes.slice(0, 100)), { code: 'ERR_TRUNCATED' });
});

// A filter every Parquet reader accepts: Go's ParquetBlocks, a power of two.
test('forParquet rounds the blocks up to a power of two, as Go does', () => {
  for (const [capacity, errorRate, blocks] of [
    [1_000_000, 0.01, 65_536],
    [10_000_000, 0.01, 524_288],
    [1, 0.5, 1],
  ]) {
    const f = new BlockedBloomFilter({ capacity, errorRate, forParquet: true });
    assert.equal(f.blocks, blocks, `${capacity} keys at ${errorRate}`);
    assert.equal(f.parquetBitset().length, 32 * blocks);
    f.free();
  }
  const f = new BlockedBloomFilter({ capacity: 1000, errorRate: 0.01, forParquet: false });
  assert.equal(f.blocks, 43);
  f.free();
  // 100 million keys at 1% need more than Arrow's 128 MiB.
  assert.throws(() => new BlockedBloomFilter({ capacity: 100_000_000, errorRate: 0.01, forParquet: true }), {
    name: 'RangeError',
    message: /capacity.*MaxParquetBytes \(128 MiB/,
  });
  assert.throws(() => new BlockedBloomFilter({ capacity: 10, errorRate: 0.01, forParquet: 'yes' }), {
    name: 'TypeError',
    message: /"forParquet" must be a boolean/,
  });
  const g = new BlockedBloomFilter({ capacity: 10, errorRate: 0.01, forParquet: true });
  assert.equal(g.add('still works'), true);
  g.free();
});

test('fromParquet and parquetBitset', () => {
  const f = new BlockedBloomFilter({ capacity: 1000, errorRate: 0.01 });
  f.addMany(crawlerURLs(1000));
  const bitset = f.parquetBitset();
  assert.equal(bitset.length, 32 * f.blocks);
  assert.deepEqual(bitset, f.toBytes().slice(64, -8), 'the payload of the format');
  for (const input of [bitset, bitset.buffer, new Uint32Array(bitset.buffer)]) {
    const g = BlockedBloomFilter.fromParquet(input);
    assert.ok(g.equals(f));
    assert.deepEqual(
      g.hasMany(crawlerURLs(1000)),
      crawlerURLs(1000).map(() => true),
    );
    assert.equal(g.capacity, 0);
    assert.equal(g.errorRate, 0);
    assert.ok(Math.abs(g.count - 1000) < 30, `count ${g.count} estimated from the bits`);
    g.free();
  }
});

test('bad options, bitsets and bytes: TypeError, RangeError or a code; the module keeps working', async () => {
  const { memoryBytes } = await import('./engine.js');
  assert.throws(() => new BlockedBloomFilter({ bits: 1024, hashes: 8 }), { name: 'TypeError', message: /blocks/ });
  assert.throws(() => new BlockedBloomFilter(), TypeError);
  assert.throws(() => new BlockedBloomFilter({ blocks: '4' }), { name: 'TypeError', message: /"blocks"/ });
  for (const blocks of [0, -1, 1.5, NaN, MAX_BITS / 256 + 1]) {
    assert.throws(() => new BlockedBloomFilter({ blocks }), { name: 'RangeError', message: /"blocks"/ });
  }
  for (const errorRate of [0, 1, NaN]) {
    assert.throws(() => new BlockedBloomFilter({ capacity: 10, errorRate }), {
      name: 'RangeError',
      message: /"errorRate"/,
    });
  }
  assert.throws(() => new BlockedBloomFilter({ capacity: 1e9, errorRate: 0.01 }), {
    name: 'RangeError',
    message: /2\^32/,
  });
  for (const length of [0, 31, 33, 100]) {
    assert.throws(() => BlockedBloomFilter.fromParquet(new Uint8Array(length)), {
      name: 'RangeError',
      code: 'ERR_ARG',
      message: /multiple of 32/,
    });
  }
  assert.throws(() => BlockedBloomFilter.fromParquet('bits'), TypeError);
  assert.throws(() => BlockedBloomFilter.fromParquet(new Uint8Array(64), { maxBits: 0 }), RangeError);
  // An oversized bitset is refused before it is copied into linear memory.
  const before = memoryBytes();
  assert.throws(() => BlockedBloomFilter.fromParquet(new Uint8Array(16 << 20), { maxBits: 1 << 20 }), {
    code: 'ERR_TOO_LARGE',
  });
  assert.equal(memoryBytes(), before);
  const f = new BlockedBloomFilter({ blocks: 1 });
  assert.throws(() => f.add(42), TypeError);
  assert.throws(() => f.addMany(['ok', null]), TypeError);
  assert.equal(f.add('still works'), true);
  assert.equal(f.has('still works'), true);
});

test('use after free throws; free is idempotent; using disposes', () => {
  const f = new BlockedBloomFilter({ blocks: 4 });
  f.free();
  f.free();
  assert.throws(() => f.add('a'), { code: 'ERR_FREED' });
  assert.throws(() => f.parquetBitset(), { code: 'ERR_FREED' });
  assert.throws(() => f.blocks, { code: 'ERR_FREED' });
  const g = new BlockedBloomFilter({ blocks: 4 });
  g[Symbol.dispose]();
  assert.throws(() => g.positions('a'), { code: 'ERR_FREED' });
  assert.throws(() => new BlockedBloomFilter({ blocks: 4 }).union(f), { code: 'ERR_FREED' });
});
