// When the Go program exits (a panic outside recover would do it), every
// later call throws ERR_ENGINE_EXITED rather than answer with garbage, and
// init() starts a fresh engine. Its own file: Node runs each test file in
// its own process, so the crash touches no other test.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init, BloomFilter, CountingBloomFilter, fromBytes } from 'edgebloom';
import { _crashEngine } from '../core.js';

test('after the engine exits, every call throws ERR_ENGINE_EXITED until init() starts a fresh one', async () => {
  await init();
  const f = new BloomFilter({ capacity: 1000, errorRate: 0.01 });
  const c = new CountingBloomFilter({ capacity: 1000, errorRate: 0.01 });
  f.add('kept');
  const bytes = f.toBytes();
  const freed = new BloomFilter({ capacity: 10, errorRate: 0.1 });
  freed.free();

  assert.throws(() => _crashEngine(), { code: 'ERR_ENGINE_EXITED' });
  const exited = { code: 'ERR_ENGINE_EXITED', message: /init\(\)/ };
  assert.throws(() => f.has('kept'), exited);
  assert.throws(() => f.add('x'), exited);
  assert.throws(() => f.addMany(['x', 'y']), exited);
  assert.throws(() => f.hasMany(['x', 'é']), exited);
  assert.throws(() => f.count, exited);
  assert.throws(() => f.toBytes(), exited);
  assert.throws(() => c.remove('x'), exited);
  assert.throws(() => new BloomFilter({ capacity: 10, errorRate: 0.1 }), exited);
  assert.throws(() => fromBytes(bytes), exited);
  assert.throws(() => freed.has('x'), { code: 'ERR_FREED' });
  f.free(); // free() of a dead engine's filter does nothing

  await init();
  const g = BloomFilter.fromBytes(bytes);
  assert.equal(g.has('kept'), true, 'bytes saved before the exit load into the fresh engine');
  assert.equal(g.add('new'), true);
  assert.deepEqual(g.addMany(['new', 'é😀']), [false, true]);
  assert.throws(() => c.has('x'), exited, 'filters of the dead engine stay dead');
  assert.throws(() => f.has('x'), { code: 'ERR_FREED' });
});
