// A local copy kept in sync through GET /v1/filters/{name}/changes, with
// the npm module's applyDelta, against the Worker in workerd (Miniflare in
// a process group of its own, serve.js, so that it can be killed): after
// adds and syncs across a compaction, a restart after SIGKILL, a copy
// behind by 1 %, 5 % and 10 % of the filter's capacity (one shard and
// four), one shard past its history and a filter made again, the copy's
// bytes are /snapshot's byte for byte (counts included) and every
// acknowledged key is in the copy after the next sync.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildWorker, serveProcess as serve } from '../../testkit/worker.js';
import { routerBytes } from '../../js/test/helpers.js';

let dir;
let out;
let edgebloom;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edgebloom-sync-'));
  out = join(dir, 'bundle');
  buildWorker(out);
  edgebloom = await import('edgebloom');
  await edgebloom.init();
});

// The server the test started last: killed after the test even if it
// failed, so that its process group does not outlive the run.
let current;
const restart = async (state) => (current = await serve(out, state));

after(async () => {
  await current?.kill().catch(() => {});
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const urls = (prefix, n) => Array.from({ length: n }, (_, i) => `https://${prefix}.example/${i}`);

// A copy of filter name: its filter and cursor, and what each sync got.
class Copy {
  constructor(s, name) {
    this.s = s;
    this.name = name;
    this.filter = null;
    this.cursor = null;
  }
  async sync() {
    const q = this.cursor ? `?since=${this.cursor}` : '';
    const res = await this.s.request('GET', `/v1/filters/${this.name}/changes${q}`);
    assert.equal(res.status, 200, JSON.stringify(res.json));
    const format = res.headers.get('X-Edgebloom-Format');
    const cursor = res.headers.get('X-Edgebloom-Cursor');
    assert.ok(cursor, 'a cursor');
    if (format === 'delta') {
      assert.equal(edgebloom.applyDelta(this.filter, res.bytes, this.cursor), cursor, 'the cursor applyDelta gives');
    } else {
      this.filter?.free();
      this.filter = edgebloom.fromBytes(res.bytes);
    }
    this.cursor = cursor;
    return {
      format,
      resync: res.headers.get('X-Edgebloom-Resync'),
      whole: res.headers.get('X-Edgebloom-Whole-Shards'),
      bytes: res.bytes.length,
      entropy: format === 'delta' ? entropy(res.bytes) : undefined,
    };
  }
  async assertSnapshot(acked) {
    const snap = await this.s.request('GET', `/v1/filters/${this.name}/snapshot`);
    assert.equal(snap.status, 200);
    assert.deepEqual(this.filter.toBytes(), snap.bytes, "the copy's bytes are the snapshot's");
    const present = this.filter.hasMany(acked);
    const missing = acked.filter((k, i) => !present[i]);
    assert.deepEqual(missing.slice(0, 3), [], `${missing.length} of ${acked.length} acknowledged keys missing`);
  }
}

async function add(s, name, keys) {
  for (let at = 0; at < keys.length; at += 10_000) {
    const res = await s
      .request('POST', `/v1/filters/${name}/add`, { keys: keys.slice(at, at + 10_000) })
      .catch((err) => {
        // What the connection and the server said, for a failure of the request itself.
        throw new Error(
          `POST /add: ${err.message} (${err.cause?.message}); the server's log ends:\n${s.log?.().slice(-3000)}`,
        );
      });
    assert.equal(res.status, 200, JSON.stringify(res.json));
  }
}

// The entropy of the positions a delta sends, in bytes: for each record of
// positions, log2 of the ways to choose its n of the m bits (Stirling).
function entropy(delta) {
  const dv = new DataView(delta.buffer, delta.byteOffset, delta.byteLength);
  const m = Number(dv.getBigUint64(24, true));
  const lnFact = (x) => (x < 2 ? 0 : x * Math.log(x) - x + 0.5 * Math.log(2 * Math.PI * x));
  let bits = 0;
  for (let i = 0, off = 48; i < dv.getUint32(40, true); i++) {
    const n = dv.getUint32(off + 32, true);
    bits += (lnFact(m) - lnFact(n) - lnFact(m - n)) / Math.LN2;
    off += 40 + dv.getUint32(off + 36, true);
  }
  return bits / 8;
}

// compact folds every shard's log into its history, as the alarm does.
async function compact(s, name, shards) {
  for (let i = 0; i < shards; i++) {
    const done = await s.hook(`shard:${name}:${i}`, '/_test/compact', {});
    assert.equal(done.status, 200, JSON.stringify(done.json));
  }
}

test(
  'a copy follows the service across compaction, SIGKILL and restart, the tail and a new generation',
  { timeout: 300_000 },
  async () => {
    const state = join(dir, 'state');
    let s = await restart(state);
    const name = 'sync';
    assert.equal(
      (await s.request('PUT', `/v1/filters/${name}`, { capacity: 100_000, errorRate: 0.01, shards: 2 })).status,
      201,
    );
    const acked = urls('first', 300);
    await add(s, name, acked);
    const copy = new Copy(s, name);
    assert.equal((await copy.sync()).format, 'sharded', 'the first sync is the snapshot');
    await copy.assertSnapshot(acked);

    // Adds, then a delta.
    for (let round = 0; round < 3; round++) {
      const keys = urls(`r${round}`, 200);
      await add(s, name, keys);
      acked.push(...keys);
      assert.equal((await copy.sync()).format, 'delta');
      await copy.assertSnapshot(acked);
    }
    // Nothing new: a small delta.
    const idle = await copy.sync();
    assert.deepEqual([idle.format, idle.bytes], ['delta', 52]);

    // Compaction folds the log into the chunks and keeps a tail: a copy from
    // before it still gets a delta.
    const keys = urls('before-compaction', 200);
    await add(s, name, keys);
    acked.push(...keys);
    for (const i of [0, 1]) {
      const done = await s.hook(`shard:${name}:${i}`, '/_test/compact', {});
      assert.equal(done.status, 200);
      assert.equal(done.json.log.length, 0, 'the log is folded');
      assert.ok(done.json.history.length > 0, 'into its history');
    }
    assert.equal((await copy.sync()).format, 'delta', 'a delta across the compaction');
    await copy.assertSnapshot(acked);

    // SIGKILL while clients add; after the restart, the copy syncs by delta
    // and holds every acknowledged key.
    let killed = null;
    const start = acked.length;
    await Promise.all(
      Array.from({ length: 4 }, async (_, c) => {
        // Until the service is gone: the kill comes once 400 keys are
        // acknowledged, with adds in flight (at most 500 batches a client,
        // so that a kill that never came fails rather than hangs).
        for (let b = 0; b < 500; b++) {
          const batch = urls(`kill-${c}-${b}`, 20);
          let res;
          try {
            res = await s.request('POST', `/v1/filters/${name}/add`, { keys: batch });
          } catch {
            return;
          }
          if (res.status !== 200) return;
          acked.push(...batch);
          if (acked.length >= start + 400 && !killed) killed = s.kill();
        }
      }),
    );
    assert.ok(killed, 'the service was killed');
    await killed;
    s = await restart(state);
    copy.s = s;
    assert.equal((await copy.sync()).format, 'delta', 'a delta after the restart');
    await copy.assertSnapshot(acked);

    // More than half of every shard's payload: the snapshot again, saying why.
    const many = urls('many', 30_000);
    await add(s, name, many);
    acked.push(...many);
    for (const i of [0, 1]) assert.equal((await s.hook(`shard:${name}:${i}`, '/_test/compact', {})).status, 200);
    const far = await copy.sync();
    assert.deepEqual([far.format, far.resync], ['sharded', 'gone']);
    await copy.assertSnapshot(acked);

    // Another generation under the name: the snapshot, saying why.
    assert.equal((await s.request('DELETE', `/v1/filters/${name}`)).status, 204);
    assert.equal(
      (await s.request('PUT', `/v1/filters/${name}`, { capacity: 100_000, errorRate: 0.01, shards: 2 })).status,
      201,
    );
    const fresh = urls('new-generation', 50);
    await add(s, name, fresh);
    const gen = await copy.sync();
    assert.deepEqual([gen.format, gen.resync], ['sharded', 'generation']);
    await copy.assertSnapshot(fresh);
    assert.equal((await copy.sync()).format, 'delta');
    copy.filter.free();
    await s.kill();
    current = null;
  },
);

// A copy behind by 1 %, 5 % and 10 % of the filter's capacity (100,000
// keys, at 1 %, half full) gets a delta, on one shard and on four, each
// add of 1 % folded into the shards' history as the alarm does: at most
// half the snapshot's bytes up to 5 %, less than the snapshot at 10 %, and
// at most 1.3 times the entropy of the positions it sends.
for (const shards of [1, 4]) {
  test(
    `a copy behind by 1 %, 5 % and 10 % of the capacity gets a delta (${shards} shard(s))`,
    { timeout: 300_000 },
    async (t) => {
      const s = await restart(join(dir, `behind-${shards}`));
      const name = `behind-${shards}`;
      const capacity = 100_000;
      const put = await s.request('PUT', `/v1/filters/${name}`, { capacity, errorRate: 0.01, shards });
      assert.equal(put.status, 201);
      const acked = urls(`base-${shards}`, capacity / 2);
      await add(s, name, acked);
      await compact(s, name, shards);
      const copies = [1, 5, 10].map(() => new Copy(s, name));
      for (const c of copies) assert.equal((await c.sync()).format, shards === 1 ? 'filter' : 'sharded');
      const snapshot = (await s.request('GET', `/v1/filters/${name}/snapshot`)).bytes.length;
      let added = 0;
      for (const [i, percent] of [1, 5, 10].entries()) {
        for (; added < (percent / 100) * capacity; added += capacity / 100) {
          const keys = urls(`behind-${shards}-${added}`, capacity / 100);
          await add(s, name, keys);
          acked.push(...keys);
          await compact(s, name, shards);
        }
        const got = await copies[i].sync();
        t.diagnostic(
          `${percent} % behind: ${got.format} of ${got.bytes} B, snapshot ${snapshot} B, ` +
            `entropy of the positions ${Math.round(got.entropy ?? 0)} B`,
        );
        assert.deepEqual([got.format, got.whole], ['delta', null], `${percent} % behind`);
        assert.ok(got.bytes <= (percent <= 5 ? snapshot / 2 : snapshot), `${percent} %: ${got.bytes} B of ${snapshot}`);
        const framing = 48 + 4 + shards * (40 + 2);
        assert.ok(got.bytes <= 1.3 * got.entropy + framing, `${percent} %: ${got.bytes} B, entropy ${got.entropy}`);
        await copies[i].assertSnapshot(acked);
      }
      // What the history costs a shard: its bytes beside the payload's.
      const info = await s.hook(`shard:${name}:0`, '/_test/info', {});
      const history = info.json.history.reduce((n, g) => n + g.bytes, 0);
      const tail = info.json.tail.reduce((n, r) => n + r.bytes, 0);
      const payload = info.json.chunks.filter((c) => c.i >= 0).reduce((n, c) => n + c.bytes, 0);
      t.diagnostic(
        `shard 0 keeps ${history} B of history in ${info.json.history.length} segments ` +
          `and a tail of ${tail} B; its payload is ${payload} B`,
      );
      assert.ok(history <= payload, 'the history takes at most the payload');
      for (const c of copies) c.filter.free();
      await s.kill();
      current = null;
    },
  );
}

// One shard of four whose changes outgrow it (past its history, and more
// bytes than the shard) comes whole inside the delta, while the other
// three send their changes: less than the snapshot, and the copy is the
// snapshot after it.
test('one shard past its history comes whole while the others send deltas', { timeout: 300_000 }, async (t) => {
  const s = await restart(join(dir, 'one-past'));
  const name = 'one-past';
  const put = await s.request('PUT', `/v1/filters/${name}`, { capacity: 100_000, errorRate: 0.01, shards: 4 });
  assert.equal(put.status, 201);
  const acked = urls('one-past-base', 10_000);
  await add(s, name, acked);
  const copy = new Copy(s, name);
  assert.equal((await copy.sync()).format, 'sharded');
  const router = edgebloom.BloomFilter.fromBytes(routerBytes(4));
  const to = (shard, prefix, n) => {
    const out = [];
    for (let i = 0; out.length < n; i++) {
      const key = `https://${prefix}.example/${i}`;
      if (router.positions(key)[0] === shard) out.push(key);
    }
    return out;
  };

  // Shard 2 takes 12,000 keys (48 % of its capacity) in 12 compactions;
  // the others 100 keys each.
  for (let step = 0; step < 12; step++) {
    const keys = to(2, `far-${step}`, 1000);
    await add(s, name, keys);
    acked.push(...keys);
    await compact(s, name, 4);
  }
  for (const shard of [0, 1, 3]) {
    const keys = to(shard, `near-${shard}`, 100);
    await add(s, name, keys);
    acked.push(...keys);
  }
  const snapshot = (await s.request('GET', `/v1/filters/${name}/snapshot`)).bytes.length;
  const got = await copy.sync();
  t.diagnostic(`${got.format} of ${got.bytes} B, shards whole: ${got.whole}, snapshot ${snapshot} B`);
  assert.deepEqual([got.format, got.whole], ['delta', '2']);
  assert.ok(got.bytes < snapshot / 2, `${got.bytes} B of ${snapshot}`);
  await copy.assertSnapshot(acked);
  // And the next sync is a delta of shard 2 again.
  const more = to(2, 'after', 50);
  await add(s, name, more);
  acked.push(...more);
  assert.deepEqual(Object.values(await copy.sync()).slice(0, 2), ['delta', null]);
  await copy.assertSnapshot(acked);
  copy.filter.free();
  router.free();
  await s.kill();
  current = null;
});
