// The clock the glue hands Go (runtime.nanotime1 in js/wasm_exec.js, made
// by tools/glue.mjs) is strictly increasing and never 0, whatever the host's
// performance.now() does: stand still (workerd outside I/O), read 0
// (workerd inside FinalizationRegistry callbacks), go back, jump, or move
// in coarse steps (browsers). Go's runtime aborts on a clock that reads 0.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { makeGo } from '../wasm_exec.js';

// nanotimes returns what Go would read from a fresh glue whose host clock
// gives the readings in turn.
function nanotimes(readings) {
  let i = 0;
  let started = false; // the glue reads the clock once when made, for timeOrigin
  const own = { performance: { now: () => (started ? readings[i++] : 0) } };
  const host = new Proxy(globalThis, {
    get: (target, prop) => (prop in own ? own[prop] : Reflect.get(target, prop)),
    set: (target, prop, value) => {
      own[prop] = value;
      return true;
    },
  });
  const go = new (makeGo(host))();
  started = true;
  go.mem = new DataView(new ArrayBuffer(16));
  const read = go.importObject.gojs['runtime.nanotime1'];
  return readings.map(() => {
    read(0);
    return go.mem.getUint32(8, true) + go.mem.getUint32(12, true) * 2 ** 32;
  });
}

function assertStrictlyIncreasing(ns) {
  assert.ok(ns[0] >= 1e9, `first reading ${ns[0]}`);
  for (let k = 1; k < ns.length; k++) {
    assert.ok(Number.isSafeInteger(ns[k]) && ns[k] > ns[k - 1], `reading ${k}: ${ns[k]} after ${ns[k - 1]}`);
  }
}

test('a host clock that stands still, reads 0, goes back, jumps or is not a number: Go still sees strictly increasing time', () => {
  const epoch = 1.76e12; // workerd: performance.now() is the time since the epoch
  const readings = [epoch, epoch, epoch, 0, 0, epoch, epoch + 5, 3, NaN, undefined, epoch + 5, epoch + 1005];
  const ns = nanotimes(readings);
  assertStrictlyIncreasing(ns);
  // Real advances count: 5 ms, then 1000 ms after the detours.
  assert.equal(ns[6] - ns[5], 5e6);
  assert.equal(ns[11] - ns[10], 1000e6);
  assert.ok(ns[11] - ns[0] < 1006e6, 'the detours added nanoseconds, not time');
});

test('a coarse browser timer (100 µs steps, many calls a step) still moves Go time forward every call', () => {
  const readings = Array.from({ length: 1000 }, (_, i) => Math.floor(i / 50) * 0.1);
  assertStrictlyIncreasing(nanotimes(readings));
});

test("workerd's clock in Node: a dropped filter's free() runs Go inside a finalizer while the host clock reads 0; the kept filter answers", () => {
  // As in workerd: performance.now() is Date.now() (the glue's timeOrigin
  // is 0) and reads 0 while garbage is collected and finalizers run. With
  // Go's own glue this aborts the engine ("stopTheWorld: broken CPU time
  // accounting"); e2e/workerd-idle.test.js runs the same in workerd.
  const script = `
    let collecting = false;
    performance.now = () => (collecting ? 0 : Date.now());
    const { init, BloomFilter } = await import('edgebloom');
    await init();
    const keys = Array.from({ length: 1000 }, (_, i) => 'https://example.com/' + i);
    const kept = new BloomFilter({ capacity: 10000, errorRate: 0.01 });
    kept.addMany(keys);
    let dropped = new BloomFilter({ capacity: 1000000, errorRate: 0.01 });
    dropped.add('x');
    const weak = new WeakRef(dropped);
    dropped = null;
    collecting = true;
    for (let i = 0; i < 100 && weak.deref(); i++) {
      await new Promise((r) => setImmediate(r));
      globalThis.gc();
    }
    for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
    collecting = false;
    let answer;
    try {
      answer = kept.hasMany(keys).filter(Boolean).length;
    } catch (err) {
      answer = err.code ?? String(err);
    }
    console.log(JSON.stringify({ collected: !weak.deref(), answer }));
  `;
  const r = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], {
    encoding: 'utf8',
    cwd: new URL('..', import.meta.url),
  });
  assert.equal(r.status, 0, r.stderr);
  assert.doesNotMatch(r.stderr, /fatal error/);
  assert.deepEqual(JSON.parse(r.stdout.trim().split('\n').pop()), { collected: true, answer: 1000 });
});
