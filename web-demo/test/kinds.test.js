// The two kinds of false positive (theory.js falsePositiveKinds): the
// ordinary kind, whose bits different keys set, and the kind one added key
// set every bit of; and how many keys make the ordinary kind 19 in 20 of
// them (keysForOrdinary), which "Find a false positive" offers to add on a
// filter where it is not.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import * as eb from 'edgebloom';
import { coveringKey, exactRate, falsePositiveKinds, keysForOrdinary, patternOf } from '../theory.js';

before(() => eb.init());

// The default page's filter (100 keys at 5 %: 624 bits, k = 4).
function defaultFilter(keys) {
  const f = new eb.BloomFilter({ capacity: 100, errorRate: 0.05 });
  const bitKeys = new Map();
  for (const key of keys) {
    f.add(key);
    for (const p of new Set(f.positions(key))) {
      if (!bitKeys.has(p)) bitKeys.set(p, []);
      bitKeys.get(p).push(key);
    }
  }
  return { f, bitKeys, m: f.stats().bits, k: f.stats().hashes };
}

// Counted the long way: every start pair's pattern, and whether one added key holds it.
function bruteKinds(f, keys, m, k) {
  const added = keys.map((key) => [key, f.positions(key)]);
  const bitsSet = new Set(added.flatMap(([, pos]) => pos));
  const isSet = (i) => bitsSet.has(i);
  let ordinary = 0;
  let single = 0;
  for (let x = 0; x < m; x++) {
    for (let y = 0; y < m; y++) {
      const pos = patternOf(x, y, m, k);
      if (!pos.every(isSet)) continue;
      if (coveringKey(pos, added)) single++;
      else ordinary++;
    }
  }
  return { ordinary: ordinary / (m * m), single: single / (m * m) };
}

test('on the default filter with three keys no false positive is the ordinary kind: each repeats one key', () => {
  const keys = ['apple', 'banana', 'cherry'];
  const { f, bitKeys, m, k } = defaultFilter(keys);
  try {
    assert.deepEqual([m, k], [624, 4]);
    const kinds = falsePositiveKinds((i) => bitKeys.get(i), m, k);
    assert.deepEqual(kinds, bruteKinds(f, keys, m, k));
    assert.equal(kinds.ordinary, 0);
    // Each key's own start pair at least: about n/m².
    assert.ok(kinds.single >= 3 / (m * m), `single ${kinds.single}`);
    const exact = exactRate((i) => bitKeys.has(i), m, k);
    assert.ok(Math.abs(kinds.ordinary + kinds.single - exact.rate) < 1e-15, 'the two kinds are every false positive');
  } finally {
    f.free();
  }
});

test('keysForOrdinary adds the fewest keys that make the ordinary kind 19 in 20, and the module agrees', () => {
  const keys = ['apple', 'banana', 'cherry'];
  const { f, bitKeys, m, k } = defaultFilter(keys);
  const made = (function* () {
    for (let i = 0; ; i++) yield `made-${i}`;
  })();
  try {
    const before = JSON.stringify([...bitKeys]);
    const more = keysForOrdinary(bitKeys, (key) => f.positions(key), made, { m, k, times: 19 });
    assert.equal(JSON.stringify([...bitKeys]), before, 'the map given is left as it was');
    assert.ok(more && more.keys.length > 10 && more.keys.length < 97, `${more?.keys.length} keys`);
    assert.ok(more.kinds.ordinary >= 19 * more.kinds.single);
    // One key fewer is not enough.
    const fewer = defaultFilter([...keys, ...more.keys.slice(0, -1)]);
    const k1 = falsePositiveKinds((i) => fewer.bitKeys.get(i), m, k);
    fewer.f.free();
    assert.ok(k1.ordinary < 19 * k1.single, 'one key fewer leaves the ordinary kind under 19 in 20');
    // The filter with them, asked by the module: of its false positives
    // among fresh words, the ordinary kind is at least 19 in 20 (the exact
    // share; 2,000 false positives counted, their share within 3 % of it).
    const all = defaultFilter([...keys, ...more.keys]);
    assert.deepEqual(
      falsePositiveKinds((i) => all.bitKeys.get(i), m, k),
      more.kinds,
    );
    const added = [...keys, ...more.keys].map((key) => [key, all.f.positions(key)]);
    let fps = 0;
    let ordinary = 0;
    for (let i = 0; fps < 2000; i++) {
      const w = `fresh-${i}`;
      if (!all.f.has(w)) continue;
      fps++;
      if (!coveringKey(all.f.positions(w), added)) ordinary++;
    }
    all.f.free();
    const want = more.kinds.ordinary / (more.kinds.ordinary + more.kinds.single);
    assert.ok(want >= 0.95);
    assert.ok(Math.abs(ordinary / fps - want) < 0.03, `measured ${ordinary / fps}, exact ${want}`);
  } finally {
    f.free();
  }
});
