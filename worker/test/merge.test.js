// POST /v1/filters/{name}/merge in workerd (Miniflare): a filter built
// offline (the npm module's ShardedBloomFilter, routed as the service
// routes) and sent as a delta of positions becomes the service's filter
// byte for byte, counts included; a copy that synced before the merge gets
// its bits through /changes; the same merge sent again changes nothing; and
// hostile bodies (no delta, a flipped bit, a lying length, too many
// positions, a whole shard, other parameters, another generation, over
// 1 MiB) are refused with the error that names them, the filter unchanged.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildWorker, startWorker } from '../../testkit/worker.js';
import { encodeRice } from '../../js/rice.js';
import { crc32 } from '../../js/crc32.js';

let dir;
let w;
let edgebloom;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edgebloom-merge-'));
  buildWorker(join(dir, 'bundle'));
  w = await startWorker(join(dir, 'bundle'), join(dir, 'state'));
  edgebloom = await import('edgebloom');
  await edgebloom.init();
});

after(async () => {
  await w?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const urls = (prefix, n) => Array.from({ length: n }, (_, i) => `https://${prefix}.example/${i}`);

const ok = (res, status = 200) => {
  assert.equal(res.status, status, JSON.stringify(res.json));
  return res.json;
};

// setPositions returns the positions of the bits set in a classic filter.
function setPositions(f) {
  const payload = f.readBytes(64, f.byteLength - 8);
  const out = [];
  for (let i = 0; i < payload.length; i++) for (let b = 0; b < 8; b++) if (payload[i] & (1 << b)) out.push(8 * i + b);
  return Uint32Array.from(out);
}

// delta encodes records [{shard, count, positions}] as docs/format.md's
// delta (version 2, Rice-coded records, CRC-32 trailer).
function delta({ generation = 0, seed = 0, m, k, shards }, records, { coding } = {}) {
  const bodies = records.map((r) => {
    const b = encodeRice(r.positions);
    if (coding !== undefined) b[0] = coding;
    return b;
  });
  const size = 48 + bodies.reduce((n, b) => n + 40 + b.length, 0) + 4;
  const out = new Uint8Array(size);
  const v = new DataView(out.buffer);
  out.set([0x45, 0x42, 0x44, 0x4c, 2, 1]);
  v.setBigUint64(8, BigInt(generation), true);
  v.setBigUint64(16, BigInt(seed), true);
  v.setBigUint64(24, BigInt(m), true);
  v.setUint32(32, k, true);
  v.setUint32(36, shards, true);
  v.setUint32(40, records.length, true);
  let at = 48;
  records.forEach((r, i) => {
    v.setUint32(at, r.shard, true);
    v.setBigUint64(at + 8, 0n, true);
    v.setBigUint64(at + 16, 1n, true);
    v.setBigUint64(at + 24, BigInt(r.count), true);
    v.setUint32(at + 32, r.n ?? r.positions.length, true);
    v.setUint32(at + 36, bodies[i].length, true);
    out.set(bodies[i], at + 40);
    at += 40 + bodies[i].length;
  });
  v.setUint32(at, crc32(out.subarray(0, at)), true);
  return out;
}

// built makes the filter's empty copy from the service's snapshot, adds
// keys to it offline and returns it with its merge body.
async function built(name, keys, opts = {}) {
  const snap = await w.request('GET', `/v1/filters/${name}/snapshot`);
  assert.equal(snap.status, 200);
  const copy = edgebloom.fromBytes(snap.bytes);
  copy.addMany(keys);
  const shards = copy.shards ? Array.from({ length: copy.shards }, (_, i) => copy.shard(i)) : [copy];
  const records = shards
    .map((f, shard) => ({ shard, count: f.count, positions: setPositions(f) }))
    .filter((r) => r.positions.length > 0);
  const params = { m: shards[0].bits, k: shards[0].hashes, shards: shards.length, ...opts };
  return { copy, params, records, body: delta(params, records) };
}

const merge = (name, body, headers) =>
  w.request('POST', `/v1/filters/${name}/merge`, undefined, {
    raw: body,
    headers: { 'Content-Type': 'application/octet-stream', ...headers },
  });

for (const shards of [1, 3]) {
  test(`a filter built offline (${shards} shard(s)) merged is the service's filter byte for byte`, async () => {
    const name = `built-${shards}`;
    ok(await w.request('PUT', `/v1/filters/${name}`, { capacity: 20000, errorRate: 0.01, shards }), 201);
    const keys = urls(`m${shards}`, 5000);
    const { copy, body } = await built(name, keys);
    const res = ok(await merge(name, body));
    assert.ok(res.generation > 0 && res.set > 0, JSON.stringify(res));
    assert.equal(res.shards.length, shards);
    const snap = await w.request('GET', `/v1/filters/${name}/snapshot`);
    assert.deepEqual(snap.bytes, copy.toBytes(), 'the snapshot after the merge is the offline build');
    const present = ok(await w.request('POST', `/v1/filters/${name}/check`, { keys })).present;
    assert.ok(present.every(Boolean));
    // A copy that syncs through /changes gets a later merge as a delta.
    const at = await w.request('GET', `/v1/filters/${name}/changes`);
    const follower = edgebloom.fromBytes(at.bytes);
    const more = await built(name, urls(`f${shards}`, 200));
    ok(await merge(name, more.body));
    const cursor = at.headers.get('X-Edgebloom-Cursor');
    const d = await w.request('GET', `/v1/filters/${name}/changes?since=${cursor}`);
    assert.equal(d.headers.get('X-Edgebloom-Format'), 'delta');
    edgebloom.applyDelta(follower, d.bytes, cursor);
    const now = await w.request('GET', `/v1/filters/${name}/snapshot`);
    assert.deepEqual(follower.toBytes(), now.bytes);
    more.copy.free();
    // Sent again (a retry after a lost answer): nothing set, count kept.
    assert.equal(ok(await merge(name, body)).set, 0);
    assert.deepEqual((await w.request('GET', `/v1/filters/${name}/snapshot`)).bytes, now.bytes);
    // Of the filter's generation: taken; of another: refused.
    const again = await built(name, urls(`g${shards}`, 10), { generation: res.generation });
    ok(await merge(name, again.body));
    const other = await built(name, urls(`g${shards}`, 10), { generation: res.generation - 1 });
    const refused = await merge(name, other.body);
    assert.equal(refused.status, 409);
    assert.match(refused.json.error.message, /generation/);
    for (const f of [copy, follower, again.copy, other.copy]) f.free();
  });
}

test('hostile merge bodies are refused with the error that names them, and change nothing', async () => {
  ok(await w.request('PUT', '/v1/filters/hostile', { capacity: 20000, errorRate: 0.01, shards: 2 }), 201);
  const { params, records, body, copy } = await built('hostile', urls('h', 500));
  copy.free();
  const flipped = body.slice();
  flipped[body.length >> 1] ^= 4;
  const lying = body.slice();
  new DataView(lying.buffer).setUint32(48 + 36, 1 << 30, true); // a record's length past the end
  const many = delta(params, [{ ...records[0], n: (1 << 20) + 1 }]);
  const cases = [
    ['JSON', new TextEncoder().encode('{"keys":["a"]}'), 400, 'invalid_delta'],
    ['nothing', new Uint8Array(0), 400, 'invalid_delta'],
    ['a flipped bit', flipped, 400, 'invalid_delta'],
    ['a lying length', lying, 400, 'invalid_delta'],
    ['truncated', body.subarray(0, body.length - 10), 400, 'invalid_delta'],
    ['too many positions', many, 413, 'too_many_positions'],
    ['a whole shard', delta(params, records, { coding: 2 }), 400, 'invalid_delta'],
    ['other shards', delta({ ...params, shards: 3 }, records), 409, 'conflict'],
    ['other bits', delta({ ...params, m: params.m + 64 }, records), 409, 'conflict'],
    ['other hashes', delta({ ...params, k: params.k + 1 }, records), 409, 'conflict'],
    ['another seed', delta({ ...params, seed: 1 }, records), 409, 'conflict'],
    ['over 1 MiB', new Uint8Array((1 << 20) + 1), 413, 'body_too_large'],
  ];
  for (const [what, bytes, status, code] of cases) {
    const res = await merge('hostile', bytes);
    assert.equal(res.status, status, `${what}: ${JSON.stringify(res.json)}`);
    assert.equal(res.json.error.code, code, what);
  }
  const stats = ok(await w.request('GET', '/v1/filters/hostile'));
  assert.equal(stats.total.setBits, 0);
  assert.equal(stats.total.count, 0);
  // And the filter still takes a good merge.
  assert.ok(ok(await merge('hostile', body)).set > 0);
});

test('a merge takes the secret or a write token of the filter, not a read token', async () => {
  ok(await w.request('PUT', '/v1/filters/tok', { capacity: 1000, errorRate: 0.01 }), 201);
  const { body, copy } = await built('tok', urls('t', 10));
  copy.free();
  const mint = async (scope, filter) =>
    ok(await w.request('POST', '/v1/tokens', { scope, filter, expiresIn: 600 })).token;
  const as = (token) => w.request('POST', '/v1/filters/tok/merge', undefined, { raw: body, token });
  assert.equal((await as(await mint('write', 'tok'))).status, 200);
  assert.equal((await as(await mint('write', 't*'))).status, 200);
  assert.equal((await as(await mint('read', 'tok'))).json.error.code, 'token_not_allowed');
  assert.equal((await as(await mint('write', 'other'))).json.error.code, 'token_other_filter');
  assert.equal((await as(null)).status, 401);
});
