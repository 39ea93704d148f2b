// Filters live on the Go heap in linear memory, which never shrinks: freeing
// must make the memory reusable, and dropped filters must be freed by GC.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { init, BloomFilter, BlockedBloomFilter, CountingBloomFilter, ShardedBloomFilter } from 'edgebloom';
import { liveFilters, memoryBytes } from './engine.js';
import { runScript } from './helpers.js';

before(() => init());

test('10 000 create/add/free cycles leave linear memory where it was after the first hundred', () => {
  const cycle = (i) => {
    const f =
      i % 2
        ? new BloomFilter({ capacity: 60_000, errorRate: 0.01 })
        : new CountingBloomFilter({ capacity: 20_000, errorRate: 0.01 });
    f.add(`key-${i}`);
    f.toBytes();
    f.free();
  };
  const live = liveFilters();
  for (let i = 0; i < 100; i++) cycle(i);
  const after100 = memoryBytes();
  for (let i = 100; i < 10_000; i++) cycle(i);
  assert.equal(memoryBytes(), after100);
  assert.equal(liveFilters(), live);
});

test('filters dropped without free() are freed after garbage collection', () => {
  const script = `
    import { init, BloomFilter } from 'edgebloom';
    import { liveFilters } from ${JSON.stringify(new URL('./engine.js', import.meta.url).href)};
    await init();
    (() => { for (let i = 0; i < 50; i++) new BloomFilter({ capacity: 1000, errorRate: 0.01 }).add('x'); })();
    const made = liveFilters();
    for (let i = 0; i < 100 && liveFilters() > 0; i++) {
      globalThis.gc();
      await new Promise((r) => setImmediate(r));
    }
    console.log(JSON.stringify({ made, left: liveFilters() }));
  `;
  const r = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], {
    encoding: 'utf8',
    cwd: new URL('..', import.meta.url),
  });
  assert.equal(r.status, 0, r.stderr);
  const { made, left } = JSON.parse(r.stdout);
  assert.equal(made, 50);
  assert.equal(left, 0);
});

// A load copies the input straight into the filter's words: linear memory,
// which never shrinks, grows by the filter's size and at most LOAD_MARGIN
// more (Go's heap takes memory in pages and keeps a little for itself;
// docs/npm.md, "Memory"). Each load runs in a fresh engine, as an extension
// or a Worker's first load does; the bytes are made here and sent to it.
const LOAD_MARGIN = 1024 * 1024;

function loadGrowth(bytes) {
  const script = `
    import { readFileSync } from 'node:fs';
    import { init, fromBytes } from 'edgebloom';
    import { memoryBytes } from ${JSON.stringify(new URL('./engine.js', import.meta.url).href)};
    await init();
    const bytes = new Uint8Array(readFileSync(0));
    const before = memoryBytes();
    const f = fromBytes(bytes);
    const grew = memoryBytes() - before;
    console.log(JSON.stringify({ grew, size: f.byteLength, has: f.has('key-7'), absent: f.has('no such key') }));
  `;
  return runScript(script, bytes);
}

for (const [name, make] of [
  ['a classic filter of 8 MB', () => new BloomFilter({ capacity: 6_700_000, errorRate: 0.01 })],
  ['a counting filter of 8 MB', () => new CountingBloomFilter({ capacity: 1_670_000, errorRate: 0.01 })],
  ['a split-block filter of 8 MB', () => new BlockedBloomFilter({ capacity: 6_000_000, errorRate: 0.01 })],
  [
    'a sharded container of 8 MB (4 shards)',
    () => new ShardedBloomFilter({ capacity: 6_700_000, errorRate: 0.01, shards: 4 }),
  ],
]) {
  test(`fromBytes of ${name} grows linear memory by its size and at most 1 MiB more`, () => {
    const f = make();
    for (let i = 0; i < 1000; i++) f.add(`key-${i}`);
    const bytes = f.toBytes();
    f.free();
    assert.ok(bytes.length > 7_500_000, `${bytes.length} bytes`);
    const { grew, size, has, absent } = loadGrowth(bytes);
    assert.equal(size, bytes.length);
    assert.equal(has, true);
    assert.equal(absent, false);
    assert.ok(grew <= size + LOAD_MARGIN, `linear memory grew by ${grew} bytes loading ${size}`);
  });
}
