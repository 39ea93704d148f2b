// The edge cache of the checkpoint endpoints in workerd (Miniflare, whose
// Cache API is a real cache), with two fronts on one set of Durable
// Objects: a deleted filter's cached answers are gone at once from the
// front that deleted it and within 5 s from a front with its parameters
// cached, and a filter made again under the name never answers with the
// old one's bytes; a client that varies Host reads the same entries; a
// checkpoint snapshot cut short is not kept; and where the cache keeps
// nothing (*.workers.dev), a checkpoint snapshot reads each shard once.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { buildWorker, readToEnd, startWorker, TOKEN } from '../../testkit/worker.js';

const SHARDS = 2;
const PARAMS = { capacity: 20_000, errorRate: 0.01, shards: SHARDS, canonicalize: false };

let dir;
let w;
let a;
let b;
let edgebloom;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edgebloom-edge-cache-'));
  buildWorker(join(dir, 'bundle'));
  edgebloom = await import('edgebloom');
  await edgebloom.init();
  w = await startWorker(join(dir, 'bundle'), join(dir, 'state'), {
    fronts: 2,
    bindings: { EDGEBLOOM_CHECKPOINT_SECONDS: '1' },
  });
  [a, b] = w.fronts;
});

after(async () => {
  await w?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const urls = (prefix, n) => Array.from({ length: n }, (_, i) => `https://${prefix}.example/${i}`);
const shown = (res) => (res.json ? JSON.stringify(res.json) : new TextDecoder().decode(res.bytes.slice(0, 200)));

function ok(res, status = 200) {
  assert.equal(res.status, status, shown(res));
  return res;
}

async function create(front, name) {
  ok(await front('PUT', `/v1/filters/${name}`, PARAMS), 201);
}

async function add(front, name, keys) {
  ok(await front('POST', `/v1/filters/${name}/add`, { keys }));
}

// checkpoint waits until the filter's latest checkpoint is past n (a
// checkpoint is published at most once a second here) and returns it.
async function checkpoint(front, name, n = 0) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await front('GET', `/v1/filters/${name}/checkpoints/latest`);
    if (res.status === 200 && res.json.checkpoint > n) return res.json;
    assert.ok([200, 503].includes(res.status), shown(res));
    assert.ok(Date.now() < deadline, `no checkpoint of ${name} past ${n} within 30 s`);
    await delay(100);
  }
}

async function readToken(name) {
  return ok(await a('POST', '/v1/tokens', { scope: 'read', filter: name, expiresIn: 3600 })).json.token;
}

// A filter with two checkpoints, and the paths of its latest, the delta
// between the two and the second one's snapshot.
async function published(front, name) {
  await create(front, name);
  await add(front, name, urls(`${name}-1`, 100));
  const first = await checkpoint(front, name);
  await add(front, name, urls(`${name}-2`, 100));
  const second = await checkpoint(front, name, first.checkpoint);
  const at = `/v1/filters/${name}/checkpoints/${second.generation}/${second.checkpoint}`;
  return {
    generation: second.generation,
    cursor: second.cursor,
    paths: {
      latest: `/v1/filters/${name}/checkpoints/latest`,
      delta: `${at}/delta?from=${first.checkpoint}`,
      snapshot: `${at}/snapshot`,
    },
  };
}

// The requests the objects served so far, by "METHOD /path".
async function served(worker = w) {
  const res = await worker.hook('shard:_count:0', '/_test/requests');
  assert.equal(res.status, 200);
  return res.json;
}
const grew = (before, now, what) => (now[what] ?? 0) - (before[what] ?? 0);

// read sends GET path to the first front with the secret under host, and
// reads the body to its end (readToEnd).
async function read(path, { host = 'edgebloom.test', worker = w } = {}) {
  return readToEnd(await worker.fetch(`http://${host}${path}`, { headers: { Authorization: `Bearer ${TOKEN}` } }));
}

// whole asserts that a checkpoint snapshot's answer is whole: 200, every
// byte its length gives, and a filter that loads with the cursor.
function whole(res, cursor, what) {
  assert.equal(res.status, 200, what);
  assert.equal(
    res.error,
    null,
    `${what}: the body failed (${res.headers.get('X-Edgebloom-Cache')}, ${res.bytes.length} of ${res.length} bytes)`,
  );
  assert.equal(res.bytes.length, res.length, `${what}: ${res.bytes.length} of ${res.length} bytes`);
  assert.equal(res.headers.get('X-Edgebloom-Cursor'), cursor, what);
  edgebloom.fromBytes(res.bytes).free();
}

test(
  "a deleted filter's cached answers are gone: at once where it was deleted, within 5 s on a front with its parameters cached",
  { timeout: 120_000 },
  async () => {
    const name = 'deleted';
    const { generation: g, paths } = await published(a, name);
    const read = await readToken(name);
    const credentials = { secret: TOKEN, 'read token': read };
    // Both fronts read each answer twice, the second time from the cache,
    // with either credential; front A last, so that it holds the filter's
    // parameters when B deletes it.
    for (const [fname, front] of [
      ['B', b],
      ['A', a],
    ]) {
      for (const [cname, token] of Object.entries(credentials)) {
        for (const [what, path] of Object.entries(paths)) {
          ok(await front('GET', path, undefined, { token }));
          const again = ok(await front('GET', path, undefined, { token }));
          if (what !== 'latest')
            assert.equal(again.headers.get('X-Edgebloom-Cache'), 'hit', `${fname} ${what} ${cname}`);
        }
      }
    }
    // An answer of the deleted filter: any 200 of the delta or the
    // snapshot (their paths name its generation), a "latest" that names it.
    const old = (what, res) => res.status === 200 && (what !== 'latest' || res.json.generation === g);
    const answers = async (front) => {
      const out = [];
      for (const [cname, token] of Object.entries(credentials))
        for (const [what, path] of Object.entries(paths))
          out.push({ what: `${what} (${cname})`, old: old(what, await front('GET', path, undefined, { token })) });
      return out;
    };

    ok(await b('DELETE', `/v1/filters/${name}`), 204);
    const deleted = Date.now();
    // The front that deleted it answers 404 at once, to either credential.
    for (const [cname, token] of Object.entries(credentials)) {
      for (const [what, path] of Object.entries(paths)) {
        const res = await b('GET', path, undefined, { token });
        assert.equal(res.status, 404, `front B, ${what} (${cname}) after its DELETE: ${shown(res)}`);
        assert.equal(res.json.error.code, 'not_found');
      }
    }
    // Front A, whose cached parameters name the deleted generation, stops
    // within 5 s (the bound of its cache of parameters; 1 s more for the
    // test's own requests).
    let last = null;
    for (;;) {
      const stale = (await answers(a)).filter((x) => x.old).map((x) => x.what);
      if (stale.length === 0) break;
      last = Date.now();
      assert.ok(
        last - deleted < 30_000,
        `front A still answers with the deleted filter 30 s after the DELETE: ${stale.join(', ')}`,
      );
      await delay(100);
    }
    console.log(
      `edge cache: front A answered with the deleted filter until ${last === null ? 0 : last - deleted} ms after`,
    );
    assert.ok(
      last === null || last - deleted <= 6000,
      `front A answered with the deleted filter ${last - deleted} ms after`,
    );

    // Made again: "latest" names the new generation (or is pending) on
    // both fronts, the old generation's answers are 410, and the new
    // snapshot is the new filter.
    await create(b, name);
    const fresh = urls('fresh', 100);
    await add(b, name, fresh);
    const deadline = Date.now() + 30_000;
    let now;
    for (;;) {
      const [la, lb] = [await a('GET', paths.latest), await b('GET', paths.latest)];
      for (const res of [la, lb]) {
        assert.ok([200, 503].includes(res.status), shown(res));
        if (res.status === 200) assert.notEqual(res.json.generation, g, '"latest" names the deleted generation');
      }
      if (la.status === 200 && lb.status === 200 && la.json.checkpoint > 0) {
        now = lb.json;
        const snap = ok(await b('GET', `/v1/filters/${name}/checkpoints/${now.generation}/${now.checkpoint}/snapshot`));
        const copy = edgebloom.fromBytes(snap.bytes);
        const has = copy.hasMany(fresh).every(Boolean);
        copy.free();
        if (has) {
          assert.deepEqual(snap.bytes, ok(await b('GET', `/v1/filters/${name}/snapshot`)).bytes, 'the new filter');
          break;
        }
      }
      assert.ok(Date.now() < deadline, 'no checkpoint of the new filter within 30 s');
      await delay(100);
    }
    for (const front of [a, b]) {
      for (const token of Object.values(credentials)) {
        for (const what of ['delta', 'snapshot']) {
          const res = await front('GET', paths[what], undefined, { token });
          assert.equal(res.status, 410, `${what} of the deleted generation: ${shown(res)}`);
          assert.equal(res.json.error.code, 'checkpoint_gone');
        }
      }
    }
  },
);

test('a client that varies Host reads the same cached answers', async () => {
  const { paths } = await published(a, 'hosts');
  for (const path of Object.values(paths)) assert.equal((await read(path)).status, 200);
  const before = await served();
  for (let i = 0; i < 5; i++) {
    for (const what of ['delta', 'snapshot']) {
      const res = await read(paths[what], { host: `host-${i}.example` });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('X-Edgebloom-Cache'), 'hit', `${what} under Host host-${i}.example`);
    }
  }
  const now = await served();
  assert.deepEqual(
    { snapshots: grew(before, now, 'GET /snapshot'), changes: grew(before, now, 'GET /changes') },
    { snapshots: 0, changes: 0 },
    'shard reads for answers the cache holds',
  );
});

// Each way a shard can fail a checkpoint snapshot part way: cut is called
// with the snapshot's path and reads it once, failing shard 1 meanwhile.
const cuts = {
  // The shard cannot be reached once shard 0 is sent.
  async unreachable(path, name) {
    assert.equal((await w.hook(`shard:${name}:1`, '/_test/unreachable', { on: true })).status, 204);
    const res = await read(path);
    assert.equal((await w.hook(`shard:${name}:1`, '/_test/unreachable', { on: false })).status, 204);
    assert.ok(res.status !== 200 || res.error !== null || res.bytes.length < res.length, 'the read failed');
  },
  // The shard gives its filter back in the middle of its snapshot.
  async evicted(path, name) {
    const object = `shard:${name}:1`;
    assert.equal((await w.hook(object, '/_test/hold', { request: 'PULL /snapshot' })).status, 204);
    const reading = read(path);
    assert.equal((await w.hook(object, '/_test/held', {})).status, 204);
    assert.equal((await w.hook(object, '/_test/evict', {})).status, 204);
    assert.equal((await w.hook(object, '/_test/release', {})).status, 204);
    await reading;
  },
};

for (const [mode, cut] of Object.entries(cuts)) {
  test(`a checkpoint snapshot with a shard ${mode} part way is kept only whole`, async () => {
    const name = `whole-${mode}`;
    const { cursor, paths } = await published(a, name);
    await cut(paths.snapshot, name);
    const first = await read(paths.snapshot);
    whole(first, cursor, 'the next read');
    const again = await read(paths.snapshot);
    whole(again, cursor, 'the read after');
    assert.equal(again.headers.get('X-Edgebloom-Cache'), 'hit');
    assert.deepEqual(again.bytes, first.bytes);
  });
}

test('where the cache keeps nothing, a checkpoint snapshot reads each shard once', async () => {
  const nc = await startWorker(join(dir, 'bundle'), join(dir, 'state-nocache'), {
    cache: false,
    bindings: { EDGEBLOOM_CHECKPOINT_SECONDS: '1' },
  });
  try {
    const { cursor, paths } = await published(nc.request, 'nocache');
    for (let i = 0; i < 3; i++) {
      const before = await served(nc);
      const res = await read(paths.snapshot, { worker: nc });
      assert.equal(grew(before, await served(nc), 'GET /snapshot'), SHARDS, 'shard snapshots read for one answer');
      whole(res, cursor, `read ${i}`);
      assert.equal(res.headers.get('X-Edgebloom-Cache'), 'miss');
    }
  } finally {
    await nc.dispose();
  }
});
