// What happens before and around init(). Node runs each test file in its own
// process, so the engine starts here from nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init, BloomFilter, fromBytes, optimal, estimateFPR } from 'edgebloom';

test('using the API before init() throws an Error saying so', () => {
  assert.throws(() => new BloomFilter({ capacity: 10, errorRate: 0.1 }), {
    code: 'ERR_NOT_INITIALIZED',
    message: /init\(\)/,
  });
  assert.throws(() => fromBytes(new Uint8Array(100)), { code: 'ERR_NOT_INITIALIZED' });
});

test('optimal and estimateFPR work before init()', () => {
  assert.deepEqual(optimal(1_000_000, 0.01), { bits: 9_585_059, hashes: 7 });
  assert.ok(Math.abs(estimateFPR(20_000, 10, 1000) - 0.0000889) < 5e-8);
});

test('a failed init() can be retried', async () => {
  await assert.rejects(init(new Uint8Array([0, 1, 2, 3])), WebAssembly.CompileError);
  await assert.rejects(init(42), TypeError);
  assert.throws(() => new BloomFilter({ capacity: 10, errorRate: 0.1 }), { code: 'ERR_NOT_INITIALIZED' });
  await init();
  const f = new BloomFilter({ capacity: 10, errorRate: 0.1 });
  assert.equal(f.add('a'), true);
});

test('init() is idempotent, also when called concurrently', async () => {
  await Promise.all([init(), init(), init()]);
  const f = new BloomFilter({ capacity: 10, errorRate: 0.1 });
  f.add('x');
  await init();
  assert.equal(f.has('x'), true, 'a second init() keeps existing filters');
});

test('init() leaves the globals Go would set as they were', async () => {
  const names = ['Go', 'fs', 'path'];
  const before = Object.fromEntries(names.map((n) => [n, globalThis[n]]));
  const proc = globalThis.process;
  const keys = Object.keys(globalThis).sort();
  await init();
  new BloomFilter({ capacity: 10, errorRate: 0.1 }).add('x');
  for (const n of names) assert.equal(globalThis[n], before[n], `globalThis.${n}`);
  assert.equal(globalThis.process, proc);
  assert.deepEqual(Object.keys(globalThis).sort(), keys);
});
