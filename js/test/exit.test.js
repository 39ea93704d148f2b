// When the Go program exits (a panic outside recover would do it), every
// later call throws ERR_ENGINE_EXITED rather than answer with garbage, and
// init() starts a fresh engine. Its own file: Node runs each test file in
// its own process, so the crash touches no other test.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { init, BloomFilter, CountingBloomFilter, fromBytes } from 'edgebloom';
import { crashEngine } from './engine.js';

test('after the engine exits, every call throws ERR_ENGINE_EXITED until init() starts a fresh one', async () => {
  await init();
  const f = new BloomFilter({ capacity: 1000, errorRate: 0.01 });
  const c = new CountingBloomFilter({ capacity: 1000, errorRate: 0.01 });
  f.add('kept');
  const bytes = f.toBytes();
  const freed = new BloomFilter({ capacity: 10, errorRate: 0.1 });
  freed.free();

  assert.throws(() => crashEngine(), { code: 'ERR_ENGINE_EXITED' });
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

test('an engine that dies where no call is checked (a finalizer) is seen by the next call, which throws ERR_ENGINE_EXITED', () => {
  // In its own process: the finalizer needs --expose-gc. The engine stops
  // inside a FinalizationRegistry callback, as it did in workerd when a
  // dropped filter's free() ran Go with a clock that went backwards; the
  // kept filter must then throw ERR_ENGINE_EXITED (not a TypeError from
  // the dead instance), and init() must start a fresh engine.
  const script = `
    import { init, BloomFilter } from 'edgebloom';
    import { crashEngineInFinalizer } from ${JSON.stringify(new URL('./engine.js', import.meta.url).href)};
    await init();
    const kept = new BloomFilter({ capacity: 1000, errorRate: 0.01 });
    kept.add('kept');
    const saved = kept.toBytes();
    let token = crashEngineInFinalizer();
    const weak = new WeakRef(token);
    token = null;
    for (let i = 0; i < 100 && weak.deref(); i++) {
      await new Promise((r) => setImmediate(r));
      globalThis.gc();
    }
    // The finalizer runs in a later task than the collection.
    for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
    const codes = [];
    for (const f of [() => kept.has('kept'), () => kept.add('x'), () => kept.addMany(['a', 'b']), () => kept.hasMany(['é']),
      () => kept.count, () => kept.toBytes(), () => new BloomFilter({ capacity: 10, errorRate: 0.1 }), () => BloomFilter.fromBytes(saved)]) {
      try { f(); codes.push('no error'); } catch (err) { codes.push(err.code ?? err.name + ': ' + err.message); }
    }
    kept.free();
    await init();
    const fresh = BloomFilter.fromBytes(saved);
    console.log(JSON.stringify({ codes, collected: !weak.deref(), fresh: fresh.has('kept') }));
  `;
  const r = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], {
    encoding: 'utf8',
    cwd: new URL('..', import.meta.url),
  });
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout.trim().split('\n').pop());
  assert.equal(out.collected, true, 'the token was collected');
  assert.deepEqual(out.codes, Array(8).fill('ERR_ENGINE_EXITED'));
  assert.equal(out.fresh, true);
});

test('an exception thrown out of a dying engine (its glue failing mid-call) becomes ERR_ENGINE_EXITED, and init() recovers', async () => {
  await init();
  const kept = new BloomFilter({ capacity: 100, errorRate: 0.01 });
  kept.add('kept');
  const saved = kept.toBytes();
  // Go's glue prints the panic through console.log here (Node, no global
  // fs); a host that refuses the write makes the glue throw out of the
  // export while the Go program dies.
  const log = console.log;
  console.log = () => {
    throw new TypeError('the host refused the write');
  };
  try {
    assert.throws(
      () => crashEngine(),
      (err) => err.code === 'ERR_ENGINE_EXITED' && err.cause instanceof TypeError,
    );
  } finally {
    console.log = log;
  }
  assert.throws(() => kept.has('kept'), { code: 'ERR_ENGINE_EXITED' });
  assert.throws(() => new BloomFilter({ capacity: 10, errorRate: 0.1 }), { code: 'ERR_ENGINE_EXITED' });
  kept.free();
  await init();
  const fresh = BloomFilter.fromBytes(saved);
  assert.equal(fresh.has('kept'), true);
  fresh.free();
});
