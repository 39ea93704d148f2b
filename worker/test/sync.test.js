// A local copy kept in sync through GET /v1/filters/{name}/changes, with
// the npm module's applyDelta, against the Worker in workerd (Miniflare in
// a process group of its own, serve.js, so that it can be killed): after
// adds and syncs across a compaction, a restart after SIGKILL, a log
// folded past its tail and a filter made again, the copy's bytes are
// /snapshot's byte for byte (counts included) and every acknowledged key
// is in the copy after the next sync.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildWorker, serveProcess as serve } from '../../testkit/worker.js';

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
    return { format, resync: res.headers.get('X-Edgebloom-Resync'), bytes: res.bytes.length };
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
  const res = await s.request('POST', `/v1/filters/${name}/add`, { keys });
  assert.equal(res.status, 200, JSON.stringify(res.json));
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
      assert.ok(done.json.tail.length > 0, 'and its tail kept');
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

    // More than the tail and half a shard's payload: the snapshot again, saying why.
    const many = urls('many', 10_000);
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
