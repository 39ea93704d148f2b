// Filters live on the Go heap in linear memory, which never shrinks: freeing
// must make the memory reusable, and dropped filters must be freed by GC.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { init, BloomFilter, CountingBloomFilter } from 'edgebloom';
import { liveFilters, memoryBytes } from './engine.js';

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
