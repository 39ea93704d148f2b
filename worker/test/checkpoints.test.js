// Sync through checkpoints (DESIGN.md, "Checkpoints")
// against the Worker in workerd (Miniflare, whose Cache API is a real
// cache): copies that follow a filter only through /checkpoints end byte
// for byte as /snapshot with every acknowledged key, and the requests the
// Durable Objects serve for each published checkpoint do not grow with the
// number of readers (10, 100, 1,000 readers syncing at random times).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { buildWorker, startWorker } from '../../testkit/worker.js';

// Short, so that a test sees several checkpoints; "latest" is then cached
// for the same second.
const INTERVAL_S = 1;
const SHARDS = 4;

let dir;
let mf;
let edgebloom;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edgebloom-ckpt-'));
  buildWorker(join(dir, 'bundle'));
  edgebloom = await import('edgebloom');
  await edgebloom.init();
  mf = await startWorker(join(dir, 'bundle'), join(dir, 'state'), {
    bindings: { EDGEBLOOM_CHECKPOINT_SECONDS: String(INTERVAL_S) },
  });
});

after(async () => {
  await mf?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const urls = (prefix, n) => Array.from({ length: n }, (_, i) => `https://${prefix}.example/${i}`);

async function create(name, capacity = 200_000) {
  const res = await mf.request('PUT', `/v1/filters/${name}`, {
    capacity,
    errorRate: 0.01,
    shards: SHARDS,
    canonicalize: false,
  });
  assert.equal(res.status, 201, JSON.stringify(res.json));
}

async function add(name, keys) {
  const res = await mf.request('POST', `/v1/filters/${name}/add`, { keys });
  assert.equal(res.status, 200, JSON.stringify(res.json));
}

// The requests the objects of the isolate served so far, by "METHOD /path".
async function served() {
  const res = await mf.hook('shard:_count:0', '/_test/requests');
  assert.equal(res.status, 200);
  return res.json;
}
const objectRequests = (before, now) => {
  const out = {};
  for (const [k, v] of Object.entries(now)) {
    // The writer's adds and the front's parameter reads are not the readers'.
    if (k === 'POST /add' || k.endsWith(' /meta')) continue;
    if (v - (before[k] ?? 0) > 0) out[k] = v - (before[k] ?? 0);
  }
  return out;
};
const total = (counts) => Object.values(counts).reduce((a, b) => a + b, 0);

// A reader that keeps a copy only through the checkpoint endpoints, as a
// page or an extension would.
class Reader {
  constructor(name) {
    this.name = name;
    this.filter = null;
    this.generation = 0;
    this.n = 0;
    this.cursor = null;
    this.deltaBytes = 0;
    this.last = null; // the last delta: {from cursor, bytes}
  }
  async sync() {
    const latest = await mf.request('GET', `/v1/filters/${this.name}/checkpoints/latest`);
    if (latest.status === 503) return;
    assert.equal(latest.status, 200, new TextDecoder().decode(latest.bytes));
    const { generation, checkpoint, cursor } = latest.json;
    if (generation === this.generation && checkpoint === this.n) return;
    const base = `/v1/filters/${this.name}/checkpoints/${generation}/${checkpoint}`;
    if (generation === this.generation && this.n > 0) {
      const d = await mf.request('GET', `${base}/delta?from=${this.n}`);
      if (d.status === 200) {
        assert.equal(edgebloom.applyDelta(this.filter, d.bytes, this.cursor), cursor, 'the cursor applyDelta gives');
        this.last = { from: this.cursor, bytes: d.bytes };
        this.deltaBytes += d.bytes.length;
        this.n = checkpoint;
        this.cursor = cursor;
        return;
      }
      assert.equal(d.status, 410, JSON.stringify(d.json));
    }
    const snap = await mf.request('GET', `${base}/snapshot`);
    assert.equal(snap.status, 200, new TextDecoder().decode(snap.bytes).slice(0, 300));
    assert.equal(snap.headers.get('X-Edgebloom-Cursor'), cursor);
    this.filter?.free();
    this.filter = edgebloom.fromBytes(snap.bytes);
    this.generation = generation;
    this.n = checkpoint;
    this.cursor = cursor;
  }
}

test(
  'a copy synced through checkpoints is the snapshot, with every acknowledged key',
  { timeout: 120_000 },
  async () => {
    const name = 'ckpt-copy';
    await create(name);
    const reader = new Reader(name);
    const acked = [];
    for (let round = 0; round < 4; round++) {
      const keys = urls(`r${round}`, 500);
      await add(name, keys);
      acked.push(...keys);
      // Every key acknowledged before a checkpoint is in it: sync until a
      // checkpoint published after the adds arrives.
      const deadline = Date.now() + 30_000;
      const start = reader.n;
      for (;;) {
        await reader.sync();
        if (reader.n > start && reader.filter.hasMany(keys).every(Boolean)) break;
        assert.ok(Date.now() < deadline, `no checkpoint with round ${round}'s keys within 30 s`);
        await delay(50);
      }
      const snap = await mf.request('GET', `/v1/filters/${name}/snapshot`);
      assert.deepEqual(reader.filter.toBytes(), snap.bytes, "the copy's bytes are the snapshot's");
      const present = reader.filter.hasMany(acked);
      assert.equal(present.filter((p) => !p).length, 0, 'acknowledged keys missing');
    }
    // A delta between checkpoints never changes: asked again, the same
    // bytes, from the edge cache, immutable for the client's cache too.
    const g = reader.generation;
    const d1 = await mf.request('GET', `/v1/filters/${name}/checkpoints/${g}/${reader.n}/delta?from=1`);
    await add(name, urls('later', 200));
    const d2 = await mf.request('GET', `/v1/filters/${name}/checkpoints/${g}/${reader.n}/delta?from=1`);
    assert.equal(d1.status, 200);
    assert.deepEqual(d2.bytes, d1.bytes);
    assert.equal(d2.headers.get('X-Edgebloom-Cache'), 'hit');
    assert.match(d2.headers.get('Cache-Control'), /immutable/);
    assert.equal(d2.headers.get('ETag'), d1.headers.get('ETag'));
    const notModified = await mf.request(
      'GET',
      `/v1/filters/${name}/checkpoints/${g}/${reader.n}/delta?from=1`,
      undefined,
      {
        headers: { 'If-None-Match': d1.headers.get('ETag') },
      },
    );
    assert.equal(notModified.status, 304);
    // A checkpoint that was never published is not found; bad numbers are
    // refused, naming the rule.
    const unknown = await mf.request('GET', `/v1/filters/${name}/checkpoints/${g}/${reader.n + 1000}/delta?from=1`);
    assert.equal(unknown.status, 404);
    assert.equal(unknown.json.error.code, 'checkpoint_unknown');
    const bad = await mf.request('GET', `/v1/filters/${name}/checkpoints/${g}/2/delta?from=2`);
    assert.equal(bad.status, 400);
    assert.match(bad.json.error.message, /from must be/);
    const wrongGeneration = await mf.request('GET', `/v1/filters/${name}/checkpoints/${g - 1}/2/delta?from=1`);
    assert.equal(wrongGeneration.status, 410);
    assert.equal(wrongGeneration.json.error.code, 'checkpoint_gone');

    // The filter deleted and made again: the copy's generation is gone, its
    // next sync loads the new filter's snapshot, and follows it from there.
    assert.equal((await mf.request('DELETE', `/v1/filters/${name}`)).status, 204);
    await create(name);
    const fresh = urls('fresh', 300);
    await add(name, fresh);
    const oldDelta = await mf.request(
      'GET',
      `/v1/filters/${name}/checkpoints/${g}/${reader.n + 1}/delta?from=${reader.n}`,
    );
    assert.equal(oldDelta.status, 410);
    const deadline = Date.now() + 30_000;
    for (;;) {
      await reader.sync();
      if (reader.generation !== g && reader.filter.hasMany(fresh).every(Boolean)) break;
      assert.ok(Date.now() < deadline, 'the copy never followed the new filter');
      await delay(50);
    }
    const snap = await mf.request('GET', `/v1/filters/${name}/snapshot`);
    assert.deepEqual(reader.filter.toBytes(), snap.bytes, "the copy's bytes are the new filter's snapshot");
  },
);

// A reader behind by three checkpoints, each of 6,000 keys (3 % of the
// capacity, more than half a shard's payload at 4 bytes a position) that
// no reader asked for while the log held them, folded by the shards into
// their history since, as the alarm does, still gets a delta from the
// checkpoints' own bits: less than half the snapshot, with every
// acknowledged key.
test('a reader behind by several checkpoints past the log gets a delta', { timeout: 180_000 }, async () => {
  const name = 'ckpt-behind';
  await create(name);
  const acked = urls('behind-base', 1000);
  await add(name, acked);
  const lagging = new Reader(name);
  // Syncs r until it holds a checkpoint with keys.
  const until = async (r, keys) => {
    const deadline = Date.now() + 30_000;
    const start = r.n;
    for (;;) {
      await r.sync();
      if (r.n > start && r.filter.hasMany(keys).every(Boolean)) return;
      assert.ok(Date.now() < deadline, 'no checkpoint with the keys within 30 s');
      await delay(50);
    }
  };
  await until(lagging, acked);
  // Reads "latest" (which publishes checkpoints) until one published after
  // the adds acknowledged so far.
  const publish = async () => {
    const done = Date.now();
    const deadline = done + 30_000;
    for (;;) {
      const l = await mf.request('GET', `/v1/filters/${name}/checkpoints/latest`);
      if (l.status === 200 && Date.parse(l.json.published) > done) return;
      assert.ok(Date.now() < deadline, 'no checkpoint within 30 s');
      await delay(50);
    }
  };
  for (let round = 0; round < 3; round++) {
    const keys = urls(`behind-${round}`, 6000);
    await add(name, keys);
    acked.push(...keys);
    await publish();
    for (let i = 0; i < SHARDS; i++) {
      assert.equal((await mf.hook(`shard:${name}:${i}`, '/_test/compact', {})).status, 200);
    }
  }
  const before = { n: lagging.n, last: lagging.last, deltaBytes: lagging.deltaBytes };
  await lagging.sync();
  const snap = await mf.request('GET', `/v1/filters/${name}/snapshot`);
  assert.ok(lagging.n >= before.n + 3, `behind by ${lagging.n - before.n} checkpoints`);
  assert.notEqual(lagging.last, before.last, 'the reader got a delta, not the snapshot');
  const bytes = lagging.deltaBytes - before.deltaBytes;
  assert.ok(bytes < snap.bytes.length / 2, `a delta of ${bytes} B; the snapshot is ${snap.bytes.length} B`);
  assert.equal(lagging.filter.hasMany(acked).filter((p) => !p).length, 0, 'acknowledged keys missing');
});

// Readers that miss a snapshot another reader is making poll the edge
// cache for it; a reader whose client leaves stops polling then (its
// request.signal aborts; the tests' entry makes it, Miniflare does not),
// and makes nothing: the shards are read once, by the reader that makes it.
test('readers polling for a snapshot another reader makes stop when their clients leave, and read no shard', async () => {
  const name = 'ckpt-pollers';
  await create(name, 20_000);
  await add(name, urls(name, 50));
  let latest;
  for (const deadline = Date.now() + 30_000; ;) {
    latest = await mf.request('GET', `/v1/filters/${name}/checkpoints/latest`);
    if (latest.status === 200) break;
    assert.equal(latest.status, 503, JSON.stringify(latest.json));
    assert.ok(Date.now() < deadline, 'no checkpoint published in 30 s');
    await delay(200);
  }
  const path = `/v1/filters/${name}/checkpoints/${latest.json.generation}/${latest.json.checkpoint}/snapshot`;
  const shard0 = `shard:${name}:0`;
  assert.equal((await mf.hook(shard0, '/_test/hold', { request: 'GET /snapshot' })).status, 204);
  const before = await served();
  const maker = mf.request('GET', path);
  assert.equal((await mf.hook(shard0, '/_test/held')).status, 204);
  // The maker is held at shard 0: ten more readers of the snapshot poll,
  // and leave after 50 ms.
  const leaving = await Promise.all(
    Array.from({ length: 10 }, () =>
      mf.request('GET', path, undefined, { headers: { 'X-Edgebloom-Test-Abort-After': '50' } }),
    ),
  );
  for (const res of leaving) assert.equal(res.status, 499, new TextDecoder().decode(res.bytes));
  assert.equal((await mf.hook(shard0, '/_test/release')).status, 204);
  const made = await maker;
  assert.equal(made.status, 200, new TextDecoder().decode(made.bytes).slice(0, 300));
  const reads = (await served())['GET /snapshot'] - (before['GET /snapshot'] ?? 0);
  assert.equal(reads, SHARDS, 'each shard read once, by the reader that made the snapshot');
});

// inFlight runs fn with at most 64 syncs under way in this process: the
// readers are at random times, but a thousand requests at once on the
// loopback connection Miniflare listens on fail in the test's own HTTP
// client on a loaded machine, not in the Worker.
let running = 0;
const waiting = [];
async function inFlight(fn) {
  while (running >= 64) await new Promise((resolve) => waiting.push(resolve));
  running++;
  try {
    return await fn();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

// One run: n readers of a fresh filter, rounds of adds; in each round every
// reader syncs once at a random time in the round's window, then until it
// holds a checkpoint with the round's keys.
async function run(n, rounds, windowMs) {
  const name = `ckpt-n${n}`;
  // Small, so that a thousand copies fit in this process's engine.
  await create(name, 20_000);
  await add(name, urls(`${name}-seed`, 100));
  const readers = Array.from({ length: n }, () => new Reader(name));
  const before = await served();
  const first = (await mf.request('GET', `/v1/filters/${name}/checkpoints/latest`)).json?.checkpoint ?? 0;
  const started = Date.now();
  let lastKeys = [];
  for (let round = 0; round < rounds; round++) {
    lastKeys = urls(`${name}-${round}`, 60);
    await add(name, lastKeys);
    await Promise.all(
      readers.map(async (r) => {
        await delay(Math.random() * windowMs);
        await inFlight(() => r.sync());
      }),
    );
    // Then each reader until it holds the round's keys (a checkpoint is
    // published at most every INTERVAL_S).
    const deadline = Date.now() + 60_000;
    for (;;) {
      const behind = readers.filter((r) => !r.filter || !r.filter.has(lastKeys[0]));
      if (behind.length === 0) break;
      assert.ok(Date.now() < deadline, `${behind.length} readers lack round ${round}'s keys after 60 s`);
      await delay(100);
      for (let i = 0; i < behind.length; i += 50) await Promise.all(behind.slice(i, i + 50).map((r) => r.sync()));
    }
  }
  const elapsed = (Date.now() - started) / 1000;
  const now = await served();
  const last = (await mf.request('GET', `/v1/filters/${name}/checkpoints/latest`)).json.checkpoint;
  const counts = objectRequests(before, now);
  const checkpoints = last - first;
  // Today's delta for the same keys: /changes from the cursor a reader
  // held before its last delta, now that the service is at its checkpoint.
  const sample = readers.find((r) => r.last);
  const today = await mf.request('GET', `/v1/filters/${name}/changes?since=${sample.last.from}`);
  const latest = await mf.request('GET', `/v1/filters/${name}/checkpoints/latest`);
  assert.equal(today.headers.get('X-Edgebloom-Format'), 'delta');
  const snap = await mf.request('GET', `/v1/filters/${name}/snapshot`);
  for (const r of readers.slice(0, 20)) assert.deepEqual(r.filter.toBytes(), snap.bytes);
  for (const r of readers) r.filter.free();
  return {
    n,
    checkpoints,
    elapsed,
    counts,
    total: total(counts),
    perCheckpoint: total(counts) / checkpoints,
    deltaBytes: sample.last.bytes.length,
    latestBytes: latest.bytes.length,
    todayBytes: today.bytes.length,
  };
}

test('the objects serve as many requests per checkpoint at 1,000 readers as at 10', { timeout: 600_000 }, async () => {
  const results = [];
  for (const n of [10, 100, 1000]) {
    const r = await run(n, 3, 3000);
    const c = (k) => r.counts[k] ?? 0;
    console.log(
      `checkpoints: ${n} readers, ${r.checkpoints} checkpoints in ${r.elapsed.toFixed(1)} s: ` +
        `${r.total} object requests (${r.perCheckpoint.toFixed(1)} a checkpoint, ` +
        `${(r.total / r.elapsed).toFixed(1)} a second) ${JSON.stringify(r.counts)}; ` +
        `a reader's last sync: latest ${r.latestBytes} B + delta ${r.deltaBytes} B; ` +
        `/changes for the same keys ${r.todayBytes} B`,
    );
    assert.ok(r.checkpoints >= 3, `${r.checkpoints} checkpoints published`);
    // The delta is /changes' for the same cursors byte for byte; a sync
    // also reads "latest".
    assert.ok(
      r.deltaBytes + r.latestBytes <= 1.25 * r.todayBytes,
      `a reader's sync ${r.latestBytes} + ${r.deltaBytes} B vs ${r.todayBytes} B today`,
    );
    // What the readers cost the objects, whatever their number: each
    // delta between consecutive checkpoints once (a record of each
    // shard), each checkpoint's snapshot once (the readers that join),
    // and, as a rate in time, the checks for a new checkpoint (the
    // positions of the shards at most once an interval) and a read of the
    // checkpoint list each time "latest" expires or an answer is made.
    assert.ok(c('GET /changes') <= SHARDS * r.checkpoints, `${n} readers: ${c('GET /changes')} shard changes`);
    assert.ok(
      c('GET /snapshot') <= SHARDS * (r.checkpoints + 1),
      `${n} readers: ${c('GET /snapshot')} shard snapshots`,
    );
    const intervals = r.elapsed / INTERVAL_S + 1;
    assert.ok(c('GET /position') <= SHARDS * intervals, `${n} readers: ${c('GET /position')} position reads`);
    assert.ok(c('POST /checkpoints') <= intervals, `${n} readers: ${c('POST /checkpoints')} checks`);
    assert.ok(
      c('GET /checkpoints') <= intervals + 2 * r.checkpoints + 1,
      `${n} readers: ${c('GET /checkpoints')} list reads in ${r.elapsed.toFixed(1)} s`,
    );
    results.push(r);
  }
});
