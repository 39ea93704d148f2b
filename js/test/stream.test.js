// fromStream: what fromBytes loads from the same bytes, from a Blob, a
// Response or a ReadableStream in chunks of any size, with the same
// refusals, and nothing left in the engine after one.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as edgebloom from 'edgebloom';
import { liveFilters, memoryBudget } from './engine.js';
import { runScript } from './helpers.js';
import { fromBase64 } from './vectors.js';

const {
  init,
  fromBytes,
  fromStream,
  BloomFilter,
  CountingBloomFilter,
  ScalableBloomFilter,
  WindowBloomFilter,
  BlockedBloomFilter,
  ShardedBloomFilter,
} = edgebloom;

const corpus = JSON.parse(readFileSync(new URL('../../bloom/testdata/malformed.json', import.meta.url), 'utf8'));

before(() => init());

// chunks is a ReadableStream of bytes in chunks of size bytes (the last
// shorter), each its own buffer, as a network stream gives them.
function chunks(bytes, size) {
  let at = 0;
  return new ReadableStream({
    pull(c) {
      if (at >= bytes.length) return c.close();
      c.enqueue(bytes.slice(at, at + size));
      at += size;
    },
  });
}

// failing gives bytes, then errors with err.
function failing(bytes, err) {
  return new ReadableStream({
    start(c) {
      if (bytes.length) c.enqueue(bytes.slice());
      c.error(err);
    },
  });
}

const codeOf = (fn) => {
  try {
    fn();
  } catch (err) {
    return err.code ?? err.name;
  }
  return 'loaded';
};

const codeOfAsync = async (promise) => {
  try {
    await promise;
  } catch (err) {
    return err.code ?? err.name;
  }
  return 'loaded';
};

// Run first, in an engine with nothing live: some cases were given their
// code for a fresh engine's room for loads.
test('every input of the malformed corpus is refused through fromStream with the code fromBytes gives it', async () => {
  for (const room of new Set(corpus.cases.map((c) => c.room).filter((r) => r !== undefined))) {
    assert.equal(memoryBudget().loadRoom, room, 'the corpus was written for another room for loads');
  }
  const live = liveFilters();
  const failures = [];
  for (const c of corpus.cases) {
    const bytes = fromBase64(c.base64);
    const opts = { maxBits: c.maxBits };
    const want = codeOf(() => fromBytes(bytes, opts).free());
    assert.equal(want, c.code, `fromBytes of "${c.name}"`);
    for (const [how, source] of [
      ['a Blob', () => new Blob([bytes])],
      ['a Response', () => new Response(bytes)],
      ['1-byte chunks', () => chunks(bytes, 1)],
      ['7-byte chunks', () => chunks(bytes, 7)],
      ['one chunk', () => chunks(bytes, bytes.length || 1)],
    ]) {
      const got = await codeOfAsync(fromStream(source(), opts).then((f) => f.free()));
      if (got !== want) failures.push(`"${c.name}" (${c.about}) from ${how}: got ${got}; want ${want}`);
    }
  }
  assert.deepEqual(failures, []);
  assert.equal(liveFilters(), live, 'a refused stream left a filter in the engine');
  const f = new BloomFilter({ capacity: 100, errorRate: 0.01 });
  f.add('after');
  assert.equal(f.has('after'), true);
  f.free();
});

const KEYS = Array.from({ length: 300 }, (_, i) => `key-${i}`);
const ABSENT = Array.from({ length: 300 }, (_, i) => `absent-${i}`);

const KINDS = {
  classic: () => new BloomFilter({ capacity: 2000, errorRate: 0.01 }),
  counting: () => new CountingBloomFilter({ capacity: 500, errorRate: 0.01 }),
  scalable: () => new ScalableBloomFilter({ initialCapacity: 100, errorRate: 0.01 }),
  window: () => new WindowBloomFilter({ capacityPerGeneration: 500, errorRate: 0.01, generations: 2 }),
  blocked: () => new BlockedBloomFilter({ capacity: 2000, errorRate: 0.01 }),
  'sharded (4 shards)': () => new ShardedBloomFilter({ capacity: 2000, errorRate: 0.01, shards: 4 }),
};

for (const [kind, make] of Object.entries(KINDS)) {
  test(`fromStream of a ${kind} filter equals fromBytes of its bytes, in chunks of any size`, async () => {
    const f = make();
    for (const k of KEYS) f.add(k);
    const bytes = f.toBytes();
    f.free();
    const want = fromBytes(bytes);
    const answers = (g) => [...KEYS, ...ABSENT].map((k) => g.has(k));
    const live = liveFilters();
    for (const [how, source] of [
      ['1-byte chunks', () => chunks(bytes, 1)],
      ['7-byte chunks', () => chunks(bytes, 7)],
      ['4093-byte chunks', () => chunks(bytes, 4093)],
      ['one chunk', () => chunks(bytes, bytes.length)],
      ['a Blob', () => new Blob([bytes])],
      ['a Blob of parts', () => new Blob([bytes.subarray(0, 100), bytes.subarray(100)])],
      ['a Response', () => new Response(bytes)],
    ]) {
      const g = await fromStream(source());
      assert.equal(g.constructor, want.constructor, how);
      assert.deepEqual(g.toBytes(), bytes, `${how}: the bytes`);
      assert.deepEqual(answers(g), answers(want), `${how}: the answers`);
      g.free();
    }
    assert.equal(liveFilters(), live);
    want.free();
  });
}

// bytesOf returns the bytes of a filter make makes, with KEYS in it.
function bytesOf(make) {
  const f = make();
  for (const k of KEYS) f.add(k);
  const bytes = f.toBytes();
  f.free();
  return bytes;
}

function containerBytes() {
  const f = new ShardedBloomFilter({ capacity: 2000, errorRate: 0.01, shards: 4 });
  f.addMany(KEYS);
  const bytes = f.toBytes();
  f.free();
  return bytes;
}

test('a stream cut short is ERR_TRUNCATED wherever it ends, as fromBytes says of the bytes it gave', async () => {
  const classic = new BloomFilter({ capacity: 2000, errorRate: 0.01 });
  classic.add('x');
  const live = liveFilters();
  for (const bytes of [classic.toBytes(), containerBytes()]) {
    for (const end of [0, 1, 3, 23, 64, 65, 100, 200, bytes.length - 9, bytes.length - 8, bytes.length - 1]) {
      const cut = bytes.subarray(0, end);
      assert.equal(
        codeOf(() => fromBytes(cut)),
        'ERR_TRUNCATED',
        `fromBytes of ${end} bytes`,
      );
      for (const source of [chunks(cut, 5), new Blob([cut])]) {
        await assert.rejects(fromStream(source), { code: 'ERR_TRUNCATED' }, `${end} of ${bytes.length} bytes`);
      }
    }
  }
  assert.equal(liveFilters(), live);
  classic.free();
});

test('a stream that errors rejects with its error, wherever it fails, and leaves nothing behind', async () => {
  const live = liveFilters();
  for (const bytes of [bytesOf(KINDS.classic), bytesOf(KINDS.scalable), containerBytes()]) {
    for (const end of [0, 10, 64, 100, bytes.length - 4, bytes.length]) {
      const cause = new Error(`network down after ${end} bytes`);
      await assert.rejects(fromStream(failing(bytes.subarray(0, end), cause)), (err) => err === cause);
    }
  }
  assert.equal(liveFilters(), live);
  // And the engine loads the next one.
  const f = await fromStream(new Blob([containerBytes()]));
  assert.equal(f.has('key-1'), true);
  f.free();
});

test('a fromBytes while a stream load waits for bytes leaves both filters right', async () => {
  const big = new BloomFilter({ capacity: 20_000, errorRate: 0.01 });
  big.addMany(KEYS);
  const bytes = big.toBytes();
  big.free();
  // The stream gives half its bytes, then waits until the other loads ran.
  let go;
  const gate = new Promise((r) => (go = r));
  const half = Math.floor(bytes.length / 2);
  const stream = new ReadableStream({
    async start(c) {
      c.enqueue(bytes.slice(0, half));
      await gate;
      c.enqueue(bytes.slice(half));
      c.close();
    },
  });
  const pending = fromStream(stream);
  await new Promise((r) => setTimeout(r, 0));
  const other = containerBytes();
  const loaded = [fromBytes(other), fromBytes(bytesOf(KINDS.blocked)), fromBytes(bytes)];
  go();
  const f = await pending;
  assert.deepEqual(f.toBytes(), bytes);
  assert.deepEqual(loaded[0].toBytes(), other);
  assert.deepEqual(loaded[2].toBytes(), bytes);
  for (const g of [f, ...loaded]) g.free();
});

test('two stream loads at once both load', async () => {
  const a = containerBytes();
  const b = bytesOf(KINDS.counting);
  const [fa, fb] = await Promise.all([fromStream(chunks(a, 333)), fromStream(chunks(b, 17))]);
  assert.deepEqual(fa.toBytes(), a);
  assert.deepEqual(fb.toBytes(), b);
  fa.free();
  fb.free();
});

test('fromStream refuses what is not a stream, a Blob or a Response, and chunks that are not bytes', async () => {
  for (const bad of [undefined, null, 42, 'bytes', new Uint8Array(80), {}]) {
    await assert.rejects(fromStream(bad), { name: 'TypeError', message: /fromStream takes a ReadableStream/ });
  }
  const strings = new ReadableStream({
    start(c) {
      c.enqueue('not bytes');
      c.close();
    },
  });
  await assert.rejects(fromStream(strings), { name: 'TypeError', message: /Uint8Array chunks/ });
  await assert.rejects(fromStream(new Blob([containerBytes()]), { maxBits: 0 }), { name: 'RangeError' });
});

// The engine's linear memory, in a fresh engine, after refused stream
// loads of a filter of 8 MB and then a load of it: the refused loads'
// payloads were let go, so the whole grows by the filter and at most 1 MiB.
function afterRefusals(bytes) {
  const script = `
    import { readFileSync } from 'node:fs';
    import { init, fromBytes, fromStream } from 'edgebloom';
    import { memoryBytes, liveFilters } from ${JSON.stringify(new URL('./engine.js', import.meta.url).href)};
    await init();
    const bytes = new Uint8Array(readFileSync(0));
    const before = memoryBytes();
    const codes = [];
    const failing = (n) => new ReadableStream({ start(c) { c.enqueue(bytes.slice(0, n)); c.error(new Error('down')); } });
    const damaged = bytes.slice(); damaged[damaged.length - 1] ^= 1;
    for (const source of [failing(bytes.length - 4), new Blob([bytes.subarray(0, bytes.length - 1)]), new Blob([damaged])]) {
      try { await fromStream(source); codes.push('loaded'); } catch (err) { codes.push(err.code ?? err.message); }
    }
    const [refused, live] = [memoryBytes() - before, liveFilters()];
    const f = fromBytes(bytes);
    console.log(JSON.stringify({ codes, refused, grew: memoryBytes() - before, live, size: f.byteLength, has: f.has('key-7') }));
  `;
  return runScript(script, bytes);
}

for (const [name, make] of [
  ['a classic filter of 8 MB', () => new BloomFilter({ capacity: 6_700_000, errorRate: 0.01 })],
  [
    'a sharded container of 8 MB (4 shards)',
    () => new ShardedBloomFilter({ capacity: 6_700_000, errorRate: 0.01, shards: 4 }),
  ],
]) {
  test(`refused stream loads of ${name} leave the engine's memory where a load of it takes it`, () => {
    const f = make();
    f.add('key-7');
    const bytes = f.toBytes();
    f.free();
    const { codes, refused, grew, live, size, has } = afterRefusals(bytes);
    assert.deepEqual(codes, ['down', 'ERR_TRUNCATED', 'ERR_CHECKSUM']);
    assert.equal(live, 0, 'a refused load left a filter in the engine');
    assert.equal(has, true);
    assert.ok(refused <= size + 1024 * 1024, `three refused loads grew linear memory by ${refused} bytes`);
    assert.ok(grew <= size + 1024 * 1024, `linear memory grew by ${grew} bytes, the filter is ${size}`);
  });
}
