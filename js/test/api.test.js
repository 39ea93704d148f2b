// The npm module's API: answers, stats, bad input and recovery.
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
  MAX_BITS,
} from 'edgebloom';
import { crawlerURLs } from './helpers.js';

before(() => init());

test('add is test-and-add; has never forgets', () => {
  const f = new BloomFilter({ capacity: 10_000, errorRate: 0.01 });
  const urls = crawlerURLs(10_000);
  // A new key is reported as seen only when it is a false positive: at 1 %
  // when full, and less while filling.
  const fresh = urls.filter((u) => f.add(u)).length;
  assert.ok(fresh >= 9_950 && fresh <= 10_000, `${fresh} of 10 000 reported new`);
  for (const u of urls) assert.equal(f.add(u), false, `add(${u}) again`);
  for (const u of urls) assert.equal(f.has(u), true);
  assert.equal(f.count, fresh);
  assert.ok(Math.abs(f.estimatedCount - 10_000) < 200, `estimatedCount ${f.estimatedCount}`);
  assert.ok(!f.overCapacity);
  f.free();
});

test('measured false-positive rate is within 10% of the target', () => {
  for (const p of [0.01, 0.001]) {
    const n = 100_000;
    const f = new BloomFilter({ capacity: n, errorRate: p });
    f.addMany(crawlerURLs(n));
    const probes = crawlerURLs(1_000_000, 'https://absent.example');
    const fp = f.hasMany(probes).filter(Boolean).length / probes.length;
    assert.ok(Math.abs(fp - p) / p < 0.1, `p=${p}: measured ${fp}`);
    assert.ok(Math.abs(f.estimatedErrorRate - p) / p < 0.1, `estimatedErrorRate ${f.estimatedErrorRate}`);
    f.free();
  }
});

test('string keys hash as their UTF-8 bytes', () => {
  const f = new BloomFilter({ bits: 4096, hashes: 5 });
  for (const key of ['https://例子.测试/路径', 'https://example.com/😀?q=é', '', 'a'.repeat(70_000)]) {
    const bytes = new TextEncoder().encode(key);
    assert.deepEqual(f.positions(key), f.positions(bytes));
    f.add(bytes);
    assert.equal(f.has(key), true);
  }
  // A lone surrogate is encoded as U+FFFD, as TextEncoder does.
  assert.deepEqual(f.positions('\ud800'), f.positions(new TextEncoder().encode('\ufffd')));
});

test('addMany and hasMany agree with add and has across batch boundaries', () => {
  const keys = crawlerURLs(30_000).map((k, i) => (i % 3 === 0 ? new TextEncoder().encode(k) : k));
  keys.push('x'.repeat(2 << 20)); // one key larger than a batch
  const a = new BloomFilter({ capacity: 40_000, errorRate: 0.01 });
  const b = new BloomFilter({ capacity: 40_000, errorRate: 0.01 });
  const many = a.addMany(keys.concat(keys.slice(0, 10)));
  const one = keys.concat(keys.slice(0, 10)).map((k) => b.add(k));
  assert.deepEqual(many, one);
  assert.equal(many.slice(-10).some(Boolean), false, 'repeats are not new');
  assert.deepEqual(a.toBytes(), b.toBytes());
  assert.deepEqual(a.hasMany(['nope', keys[5]]), [b.has('nope'), true]);
  assert.deepEqual(a.addMany([]), []);
});

test('addMany takes the same bits for ASCII and non-ASCII string batches', () => {
  const ascii = crawlerURLs(5000);
  const mixed = ascii.map((k, i) => (i % 50 === 7 ? `${k}/é/例子/😀` : k));
  for (const keys of [ascii, mixed, ['é'], ['a', 'é'], ['é', 'a']]) {
    const a = new BloomFilter({ capacity: 6000, errorRate: 0.01 });
    const b = new BloomFilter({ capacity: 6000, errorRate: 0.01 });
    assert.deepEqual(
      a.addMany(keys),
      keys.map((k) => b.add(k)),
    );
    assert.deepEqual(a.toBytes(), b.toBytes());
    assert.deepEqual(
      a.hasMany(keys.map((k) => new TextEncoder().encode(k))),
      keys.map(() => true),
    );
  }
});

test('string batches, joined or a slot a key: surrogates, emoji, lone surrogates at key edges', () => {
  const keys = [
    '😀',
    'a😀b',
    '\ud83d', // a lone high surrogate: U+FFFD
    '\ude00', // a lone low surrogate; joined to the key before it, the two would make 😀
    'x\ud83d',
    '\ude00y',
    '例子/路径'.repeat(3),
    'ascii-only-key-that-is-long-enough-for-the-8-byte-loop',
    'é',
    '',
    'https://xn--fsqu00a.xn--0zwm56d/😀/例子?q=é',
    '\ud800\udfff\udbff\udc00',
  ];
  const enc = new TextEncoder();
  for (const batch of [keys, keys.slice().reverse(), keys.filter((k, i) => i % 2), ['\ud83d', '\ude00']]) {
    const a = new BloomFilter({ bits: 1 << 16, hashes: 7 });
    const b = new BloomFilter({ bits: 1 << 16, hashes: 7 });
    const many = a.addMany(batch);
    assert.deepEqual(
      many,
      batch.map((k) => b.add(enc.encode(k))),
    );
    assert.deepEqual(a.toBytes(), b.toBytes(), JSON.stringify(batch));
    assert.deepEqual(
      a.hasMany(batch),
      batch.map(() => true),
    );
    const c = new BloomFilter({ bits: 1 << 16, hashes: 7 });
    c.addMany(batch.map((k) => enc.encode(k)));
    assert.deepEqual(c.toBytes(), a.toBytes());
  }
});

test('batches of random mixed-script keys set the same bits as key-by-key adds', () => {
  const pool = [
    'a',
    'Z',
    '/',
    'é',
    'ß',
    '例',
    '路',
    'ф',
    '😀',
    '🎉',
    '\ud800',
    '\udc00',
    '\ufffd',
    '\u0000',
    '\u07ff',
    '\u0800',
  ];
  let seed = 12345;
  const rand = (n) => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    return (seed >>> 8) % n;
  };
  const keys = [];
  for (let i = 0; i < 3000; i++) {
    let k = '';
    const n = rand(i % 10 === 0 ? 60 : 25);
    for (let c = 0; c < n; c++) k += pool[rand(pool.length)];
    keys.push(k);
  }
  const a = new BloomFilter({ bits: 1 << 16, hashes: 5 });
  const b = new BloomFilter({ bits: 1 << 16, hashes: 5 });
  const enc = new TextEncoder();
  assert.deepEqual(
    a.addMany(keys),
    keys.map((k) => b.add(enc.encode(k))),
  );
  assert.deepEqual(a.toBytes(), b.toBytes());
  assert.ok(a.hasMany(keys).every(Boolean));
});

test('every kind: batches answer as single calls in order and set the same bytes, on every layout of a group', () => {
  const ascii = crawlerURLs(3000);
  // Groups of 32: all ASCII (joined), one non-ASCII key (joined, then again
  // key by key), back to ASCII; keys near a slot's size (512 bytes: 170
  // units of 3 bytes) and past the largest slot (5461 units), which go key
  // by key; repeats within a group and across groups.
  const keys = ascii.slice(0, 100);
  keys.push(...ascii.slice(100, 131), 'https://例子.example/é');
  keys.push(...ascii.slice(131, 200).map((k, i) => (i % 3 ? k : `${k}/😀`)));
  keys.push(
    '例'.repeat(170),
    '例'.repeat(171),
    'a'.repeat(600),
    '例'.repeat(2000),
    'é'.repeat(5462),
    '\ud83d'.repeat(6000),
  );
  keys.push(...ascii.slice(200, 300), ...ascii.slice(0, 40), '', '😀', ...keys.slice(-6));
  const enc = new TextEncoder();
  const makers = {
    classic: () => new BloomFilter({ capacity: 2000, errorRate: 0.01 }),
    counting: () => new CountingBloomFilter({ capacity: 2000, errorRate: 0.01 }),
    scalable: () => new ScalableBloomFilter({ initialCapacity: 100, errorRate: 0.01 }),
    window: () => new WindowBloomFilter({ capacityPerGeneration: 2000, errorRate: 0.01, generations: 2 }),
    blocked: () => new BlockedBloomFilter({ capacity: 2000, errorRate: 0.01 }),
  };
  for (const [kind, make] of Object.entries(makers)) {
    for (const batch of [keys, keys.slice(37), keys.map((k, i) => (i % 5 === 0 ? enc.encode(k) : k))]) {
      const a = make();
      const b = make();
      const probes = [...batch.slice(0, 50), 'never-added', ...crawlerURLs(50, 'https://absent.example')];
      assert.deepEqual(
        a.addMany(batch),
        batch.map((k) => b.add(k)),
        `${kind}: addMany`,
      );
      assert.deepEqual(a.toBytes(), b.toBytes(), `${kind}: bytes`);
      assert.deepEqual(
        a.hasMany(probes),
        probes.map((k) => b.has(k)),
        `${kind}: hasMany`,
      );
      a.free();
      b.free();
    }
  }
});

test('counting filter: remove', () => {
  const f = new CountingBloomFilter({ capacity: 1000, errorRate: 0.01 });
  assert.equal(f.remove('absent'), false);
  const empty = f.toBytes();
  f.add('a');
  f.add('b');
  assert.equal(f.remove('a'), true);
  assert.equal(f.has('b'), true, 'removing a keeps b');
  assert.equal(f.remove('b'), true);
  assert.deepEqual(f.toBytes(), empty, 'back to empty');
  assert.equal(f.count, 0);
});

test('scalable filter grows and keeps its error rate', () => {
  const f = new ScalableBloomFilter({ initialCapacity: 1000, errorRate: 0.01 });
  const keys = crawlerURLs(100_000);
  f.addMany(keys);
  assert.ok(f.layers >= 7, `layers ${f.layers}`);
  assert.equal(f.hasMany(keys).every(Boolean), true);
  const probes = crawlerURLs(200_000, 'https://absent.example');
  const fp = f.hasMany(probes).filter(Boolean).length / probes.length;
  assert.ok(fp <= 0.01, `measured ${fp}`);
  const g = ScalableBloomFilter.fromBytes(f.toBytes());
  assert.equal(g.layers, f.layers);
  assert.deepEqual(g.hasMany(probes.slice(0, 1000)), f.hasMany(probes.slice(0, 1000)));
});

test('union, intersect and equals', () => {
  const a = new BloomFilter({ capacity: 1000, errorRate: 0.01 });
  const b = new BloomFilter({ capacity: 1000, errorRate: 0.01 });
  a.add('only-a');
  a.add('both');
  b.add('only-b');
  b.add('both');
  const c = BloomFilter.fromBytes(a.toBytes());
  assert.equal(c.equals(a), true);
  c.union(b);
  assert.deepEqual(c.hasMany(['only-a', 'only-b', 'both']), [true, true, true]);
  a.intersect(b);
  assert.equal(a.has('both'), true);
  assert.equal(c.equals(a), false);
  const other = new BloomFilter({ capacity: 2000, errorRate: 0.01 });
  assert.throws(() => a.union(other), { code: 'ERR_INCOMPATIBLE' });
  assert.throws(() => a.union(new CountingBloomFilter({ capacity: 1000, errorRate: 0.01 })), TypeError);
  assert.equal(a.has('both'), true, 'a rejected union leaves the filter as it was');
});

test('bad keys are TypeErrors and change nothing', () => {
  const f = new BloomFilter({ capacity: 100, errorRate: 0.01 });
  f.add('kept');
  const bytes = f.toBytes();
  for (const key of [1, null, undefined, {}, ['a'], new Uint16Array(2), Symbol('s'), 10n]) {
    assert.throws(() => f.add(key), TypeError);
    assert.throws(() => f.has(key), TypeError);
    assert.throws(() => f.addMany([key]), TypeError);
  }
  assert.throws(() => f.addMany('abc'), TypeError);
  assert.throws(() => f.addMany(['ok', 5]), TypeError);
  assert.deepEqual(f.toBytes(), bytes);
  assert.equal(f.has('kept'), true);
});

test('bad sizes are RangeErrors or TypeErrors naming the option', () => {
  for (const capacity of [0, -1, 1.5, NaN, Infinity, 2 ** 53]) {
    assert.throws(() => new BloomFilter({ capacity, errorRate: 0.01 }), { name: 'RangeError', message: /"capacity"/ });
  }
  for (const errorRate of [0, 1, -0.1, 2, NaN, Infinity]) {
    assert.throws(() => new BloomFilter({ capacity: 10, errorRate }), { name: 'RangeError', message: /"errorRate"/ });
    assert.throws(() => new ScalableBloomFilter({ initialCapacity: 10, errorRate }), {
      name: 'RangeError',
      message: /"errorRate"/,
    });
  }
  assert.throws(() => new BloomFilter({ capacity: '10', errorRate: 0.01 }), {
    name: 'TypeError',
    message: /"capacity"/,
  });
  assert.throws(() => new BloomFilter(), TypeError);
  assert.throws(() => new BloomFilter({ bits: MAX_BITS + 1, hashes: 3 }), { name: 'RangeError', message: /"bits"/ });
  assert.throws(() => new BloomFilter({ bits: 100, hashes: 65 }), { name: 'RangeError', message: /"hashes"/ });
  assert.throws(() => new BloomFilter({ capacity: 1e9, errorRate: 0.01 }), { name: 'RangeError', message: /2\^32/ });
  assert.throws(() => new CountingBloomFilter({ capacity: 3e8, errorRate: 0.01 }), RangeError);
  assert.throws(() => new BloomFilter({ capacity: 10, errorRate: 1e-30 }), {
    name: 'RangeError',
    message: /fpRate|hash/,
  });
  const f = new BloomFilter({ capacity: 10, errorRate: 0.1 });
  assert.equal(f.add('still works'), true);
});

test('fromBytes refuses bad input with a code, and the module keeps working', () => {
  const f = new BloomFilter({ capacity: 100, errorRate: 0.01 });
  f.add('a');
  const good = f.toBytes();
  const mutate = (at, value) => {
    const b = good.slice();
    b[at] = value;
    return b;
  };
  const cases = [
    ['empty', new Uint8Array(0), 'ERR_TRUNCATED'],
    ['bad magic', mutate(0, 0x58), 'ERR_NOT_FILTER'],
    ['future version', mutate(4, 9), 'ERR_VERSION'],
    ['unknown hash', mutate(6, 9), 'ERR_VERSION'],
    ['flipped payload bit', mutate(70, good[70] ^ 1), 'ERR_CHECKSUM'],
    ['flipped checksum', mutate(good.length - 1, good[good.length - 1] ^ 1), 'ERR_CHECKSUM'],
    ['trailing byte', Uint8Array.from([...good, 0]), 'ERR_CORRUPT'],
  ];
  for (let n = 0; n < good.length; n += 7) cases.push([`truncated to ${n}`, good.slice(0, n), 'ERR_TRUNCATED']);
  for (const [name, bytes, code] of cases) {
    assert.throws(() => fromBytes(bytes), { code }, name);
  }
  assert.throws(() => BloomFilter.fromBytes(good, { maxBits: 100 }), { code: 'ERR_TOO_LARGE' });
  assert.throws(() => BloomFilter.fromBytes(good, { maxBits: 0 }), RangeError);
  assert.throws(() => CountingBloomFilter.fromBytes(good), { code: 'ERR_KIND' });
  assert.throws(() => fromBytes('not bytes'), TypeError);
  assert.equal(BloomFilter.fromBytes(good.buffer).has('a'), true, 'an ArrayBuffer works');
  assert.equal(f.has('a'), true);
});

test('a hostile header is refused before linear memory grows', async () => {
  const { memoryBytes } = await import('./engine.js');
  const f = new BloomFilter({ capacity: 100, errorRate: 0.01 });
  const header = f.toBytes().slice(0, 64);
  const view = new DataView(header.buffer);
  view.setBigUint64(16, 2n ** 40n, true); // m: 2^40 bits
  view.setBigUint64(56, 2n ** 37n, true); // payload: 128 GiB
  const claim = new Uint8Array(32 << 20); // 32 MiB of input that claims far more
  claim.set(header);
  const before = memoryBytes();
  assert.throws(() => fromBytes(claim), { code: /ERR_TOO_LARGE|ERR_CORRUPT/ });
  view.setBigUint64(16, 2n ** 31n, true); // within maxBits, but past what the memory budget can load
  view.setBigUint64(56, 2n ** 28n, true);
  claim.set(header);
  assert.throws(() => fromBytes(claim), { code: 'ERR_TOO_LARGE', message: /memory budget/ });
  view.setBigUint64(16, 2n ** 27n, true); // within both, but not what the input holds
  view.setBigUint64(56, 2n ** 24n, true);
  claim.set(header);
  assert.throws(() => fromBytes(claim.subarray(0, 8 << 20)), { code: 'ERR_TRUNCATED' });
  const grew = memoryBytes() - before;
  assert.ok(grew < 1 << 20, `linear memory grew by ${grew} bytes for inputs claiming more than they hold`);
});

test('use after free throws; free is idempotent; using disposes', () => {
  const f = new BloomFilter({ capacity: 100, errorRate: 0.01 });
  f.free();
  f.free();
  assert.throws(() => f.add('a'), { code: 'ERR_FREED' });
  assert.throws(() => f.bits, { code: 'ERR_FREED' });
  assert.throws(() => f.toBytes(), { code: 'ERR_FREED' });
  const g = new BloomFilter({ capacity: 100, errorRate: 0.01 });
  g[Symbol.dispose]();
  assert.throws(() => g.has('a'), { code: 'ERR_FREED' });
});

test('stats', () => {
  const f = new BloomFilter({ capacity: 1000, errorRate: 0.01 });
  f.addMany(crawlerURLs(500));
  const s = f.stats();
  assert.equal(s.kind, 'classic');
  assert.equal(s.bits, 9586);
  assert.equal(s.hashes, 7);
  assert.equal(s.count, 500);
  assert.equal(s.capacity, 1000);
  assert.equal(s.errorRate, 0.01);
  assert.equal(s.fillRatio, s.setBits / s.bits);
  assert.equal(s.byteLength, f.toBytes().length);
  assert.equal(s.overCapacity, false);
  f.addMany(crawlerURLs(1000, 'https://more.example'));
  assert.equal(f.overCapacity, true);
  assert.ok(f.estimatedErrorRate > 0.01);
  f.clear();
  assert.equal(f.count, 0);
  assert.equal(f.setBits, 0);
});
