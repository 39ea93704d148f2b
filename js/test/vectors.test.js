// The npm module against the golden vectors written by Go: same positions,
// same answers, same bytes.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import {
  init,
  BloomFilter,
  CountingBloomFilter,
  ScalableBloomFilter,
  WindowBloomFilter,
  BlockedBloomFilter,
  fromBytes,
  optimal,
  MAX_BITS,
} from 'edgebloom';
import { vectors, fromBase64 } from './vectors.js';

before(() => init());

const classes = {
  classic: BloomFilter,
  counting: CountingBloomFilter,
  scalable: ScalableBloomFilter,
  window: WindowBloomFilter,
  blocked: BlockedBloomFilter,
};

function build(v) {
  const f = new classes[v.kind](v.params);
  // A window rotates after as many adds as each number of v.rotations says.
  const rotate = (j) => (v.rotations ?? []).filter((r) => r === j).forEach(() => f.rotate());
  const added = v.added.map((i, j) => {
    rotate(j);
    return f.add(vectors.keys[i]);
  });
  rotate(v.added.length);
  const removed = (v.removed ?? []).map((i) => f.remove(vectors.keys[i]));
  return { f, added, removed };
}

test('positions equal Go Locations for every key', () => {
  let checked = 0;
  for (const { m, k, positions } of vectors.locations) {
    if (m > MAX_BITS) continue; // beyond what WebAssembly can allocate; Go checks these
    const f = new BloomFilter({ bits: m, hashes: k });
    vectors.keys.forEach((key, i) => {
      assert.deepEqual(f.positions(key), positions[i], `positions(${JSON.stringify(key.slice(0, 40))}) m=${m} k=${k}`);
      assert.deepEqual(f.positions(new TextEncoder().encode(key)), positions[i], 'bytes and string keys agree');
    });
    f.free();
    checked++;
  }
  assert.ok(checked >= 3, `checked ${checked} (m, k) pairs`);
});

test('split-block positions equal Go for every key', () => {
  let checked = 0;
  for (const { blocks, positions } of vectors.blockedLocations) {
    if (256 * blocks > MAX_BITS) continue; // 2^32 blocks: Go checks these
    const f = new BlockedBloomFilter({ blocks });
    vectors.keys.forEach((key, i) => {
      assert.deepEqual(
        f.positions(key),
        positions[i],
        `positions(${JSON.stringify(key.slice(0, 40))}) blocks=${blocks}`,
      );
      assert.deepEqual(f.positions(new TextEncoder().encode(key)), positions[i], 'bytes and string keys agree');
    });
    f.free();
    checked++;
  }
  assert.ok(checked >= 3, `checked ${checked} block counts`);
});

for (const v of vectors.blocked) {
  test(`${v.name}: the payload is Parquet's bitset, in and out`, () => {
    const bytes = fromBase64(v.base64);
    const bitset = bytes.slice(64, bytes.length - 8); // docs/format.md: header, payload, checksum
    const built = build(v).f;
    assert.deepEqual(built.parquetBitset(), bitset, "parquetBitset equals the payload of Go's bytes");
    const f = BlockedBloomFilter.fromParquet(bitset);
    assert.deepEqual(f.hasMany(v.probes), v.has);
    assert.ok(f.equals(built));
    assert.equal(f.count, Math.round(f.estimatedCount), 'count is the rounded estimate, as in Go');
    assert.equal(f.capacity, 0);
    assert.equal(f.errorRate, 0);
    f.free();
    built.free();
  });
}

for (const v of [...vectors.filters, ...vectors.blocked]) {
  test(`${v.name}: built in JS, same answers and bytes as Go`, () => {
    const { f, added, removed } = build(v);
    assert.deepEqual(added, v.addResults, 'add results');
    if (v.removeResults) assert.deepEqual(removed, v.removeResults, 'remove results');
    assert.deepEqual(f.hasMany(v.probes), v.has, 'hasMany answers');
    assert.deepEqual(
      v.probes.map((p) => f.has(p)),
      v.has,
      'has answers',
    );
    assert.equal(f.bits, v.bits);
    assert.equal(f.hashes, v.hashes);
    assert.equal(f.count, v.count);
    assert.equal(f.setBits, v.setBits);
    assert.equal(Buffer.from(f.toBytes()).toString('base64'), v.base64, 'toBytes equals MarshalBinary');
    f.free();
  });

  test(`${v.name}: Go bytes load in JS`, () => {
    const bytes = fromBase64(v.base64);
    for (const f of [fromBytes(bytes), classes[v.kind].fromBytes(bytes)]) {
      assert.ok(f instanceof classes[v.kind]);
      assert.equal(f.kind, v.kind);
      assert.deepEqual(f.hasMany(v.probes), v.has);
      assert.equal(f.count, v.count);
      assert.deepEqual(f.toBytes(), bytes, 're-encodes byte for byte');
      f.free();
    }
  });
}

// Where ln²2 decides the rounding: Go folds math.Ln2 * math.Ln2 exactly
// before rounding it to a float64, one ulp above JavaScript's product of
// the two rounded logarithms, so m = ceil(-n·ln p / ln²2) differs for a p
// whose quotient lands on an integer (here p = e^-ln²2: 17 keys, 17 bits).
test('optimal gives the bits and hashes the engine makes for the same capacity and rate', () => {
  const p = Math.exp(-0.48045301391820144);
  for (const [capacity, errorRate] of [
    [17, p],
    [21, p],
    [34, p],
    [1, 0.5],
    [1_000_000, 0.01],
    [123_457, 1e-9],
    [10, 0.999],
  ]) {
    const f = new BloomFilter({ capacity, errorRate });
    assert.deepEqual(optimal(capacity, errorRate), { bits: f.bits, hashes: f.hashes }, `${capacity} at ${errorRate}`);
    f.free();
  }
  assert.deepEqual(optimal(17, p), { bits: 17, hashes: 1 });
});

test('optimal matches the Go sizing', () => {
  assert.deepEqual(optimal(1_000_000, 0.0001), { bits: 19_170_117, hashes: 13 });
  assert.deepEqual(optimal(1_000_000, 0.01), { bits: 9_585_059, hashes: 7 });
  for (const v of vectors.filters) {
    if (v.params.capacity === undefined) continue;
    const { bits, hashes } = optimal(v.params.capacity, v.params.errorRate);
    assert.equal(bits, v.bits);
    assert.equal(hashes, v.hashes);
  }
});
