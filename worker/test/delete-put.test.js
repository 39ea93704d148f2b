// Two fronts on one set of Durable Objects, in workerd (Miniflare): front A
// has a filter's parameters cached; front B deletes the filter and makes it
// again while the DELETE's clean-up of the shards is still on its way, or
// after it failed part way (a shard unreachable); then A adds. Every add A
// acknowledges is in the new filter (a stale cache costs a retry, never
// data), whether the new filter has as many shards as the old one, more or
// fewer, and no shard of the old filter acknowledges its generation once the
// PUT is answered.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildWorker, startWorker } from '../../testkit/worker.js';

let dir;
let w;
let a;
let b;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edgebloom-delete-put-'));
  buildWorker(join(dir, 'bundle'));
  w = await startWorker(join(dir, 'bundle'), join(dir, 'state'), { fronts: 2 });
  [a, b] = w.fronts;
});

after(async () => {
  await w?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

// within fails if promise has not settled in ms: the tests wait on events,
// never on time, but never for ever either.
function within(promise, ms, what) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing after ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

const hook = async (object, path, body) => {
  const res = await w.hook(object, path, body);
  assert.equal(res.status, 204, `${object} ${path}: ${JSON.stringify(res.json)}`);
};

const ok = (res, status = 200) => {
  assert.equal(res.status, status, JSON.stringify(res.json));
  return res.json;
};

test('the two fronts are two Go instances, each with its own cache', async () => {
  const [ia, ib] = await Promise.all([a('GET', '/_test/instance'), b('GET', '/_test/instance')]);
  assert.notEqual(ok(ia).instance, ok(ib).instance);
});

for (const mode of ['held', 'unreachable']) {
  for (const shards of [2, 3, 1]) {
    test(`DELETE (clean-up ${mode}) and PUT of 2 to ${shards} shards: a stale front's acknowledged adds stay`, async () => {
      const name = `dp-${mode}-${shards}`;
      ok(await a('PUT', `/v1/filters/${name}`, { capacity: 10_000, errorRate: 0.01, shards: 2 }), 201);
      ok(await a('POST', `/v1/filters/${name}/add`, { keys: ['old-1', 'old-2', 'old-3'] }));
      const old = ok(await w.object(`meta:${name}`, 'GET', '/meta'));

      let deleting;
      if (mode === 'held') {
        // B's DELETE forgets the parameters and its clean-up of both shards
        // is on its way, held before it reaches them.
        for (const sh of [0, 1]) await hook(`shard:${name}:${sh}`, '/_test/hold', { request: 'DELETE /shard' });
        deleting = b('DELETE', `/v1/filters/${name}`);
        for (const sh of [0, 1])
          await within(hook(`shard:${name}:${sh}`, '/_test/held', {}), 30_000, `the DELETE reaching shard ${sh}`);
      } else {
        await hook(`shard:${name}:1`, '/_test/unreachable', { on: true });
        const res = await b('DELETE', `/v1/filters/${name}`);
        assert.equal(res.status, 502, JSON.stringify(res.json));
        assert.equal(res.json.error.code, 'shard_unavailable');
        await hook(`shard:${name}:1`, '/_test/unreachable', { on: false });
      }
      ok(await b('PUT', `/v1/filters/${name}`, { capacity: 10_000, errorRate: 0.01, shards }), 201);

      // A adds one key a request, as a crawler adds what it finds: a
      // request whose keys all go to a shard that still holds the old
      // filter is the one that could be lost.
      const keys = Array.from({ length: 50 }, (_, i) => `https://late.example/${i}`);
      for (const key of keys)
        assert.deepEqual(ok(await a('POST', `/v1/filters/${name}/add`, { keys: [key] })), { added: [true] });
      const wantAll = async (when) => {
        const present = ok(await b('POST', `/v1/filters/${name}/check`, { keys })).present.filter(Boolean).length;
        const stats = ok(await b('GET', `/v1/filters/${name}`));
        assert.deepEqual(
          { present, count: stats.total.count, shards: stats.shards },
          { present: keys.length, count: keys.length, shards },
          `${when}: acknowledged keys present, total.count, shards`,
        );
      };
      await wantAll('after the stale front added');
      if (mode === 'held') {
        for (const sh of [0, 1]) await hook(`shard:${name}:${sh}`, '/_test/release', {});
        assert.equal((await within(deleting, 30_000, 'the held DELETE')).status, 204);
        await wantAll('once the held clean-up reached the shards');
      }
      // No shard, of the old filter or the new, acknowledges the old
      // generation now.
      for (let index = 0; index < Math.max(2, shards); index++) {
        const shard = { filter: name, index, capacity: 5_000, errorRate: 0.01, generation: old.generation };
        const late = await w.object(`shard:${name}:${index}`, 'POST', '/add', {
          headers: { 'X-Edgebloom-Shard': JSON.stringify(shard) },
          body: JSON.stringify({ keys: ['https://late.example/old'] }),
        });
        assert.equal(late.status, 409, `shard ${index}: ${late.text}`);
        assert.equal(late.json.error.code, 'stale_generation');
      }
      await wantAll('after late requests of the old generation');
    });
  }
}

test('adds racing a DELETE (clean-up held) and a PUT: every add sent after the PUT was answered is kept', async () => {
  const name = 'dp-race';
  ok(await a('PUT', `/v1/filters/${name}`, { capacity: 100_000, errorRate: 0.01, shards: 2 }), 201);
  ok(await a('POST', `/v1/filters/${name}/add`, { keys: ['warm'] }));
  for (const sh of [0, 1]) await hook(`shard:${name}:${sh}`, '/_test/hold', { request: 'DELETE /shard' });

  let putDone = false;
  let stop = false;
  const after = []; // acknowledged adds sent after the PUT was answered
  let enough;
  const reached = new Promise((resolve) => (enough = resolve));
  const clients = Array.from({ length: 4 }, async (_, c) => {
    for (let n = 0; !stop; n++) {
      const sentAfter = putDone;
      const key = `https://race-${c}.example/${n}`;
      const res = await a('POST', `/v1/filters/${name}/add`, { keys: [key] });
      if (res.status === 200 && sentAfter) {
        assert.deepEqual(res.json, { added: [true] }, key);
        if (after.push(key) === 200) enough();
      }
    }
  });
  const deleting = b('DELETE', `/v1/filters/${name}`);
  for (const sh of [0, 1])
    await within(hook(`shard:${name}:${sh}`, '/_test/held', {}), 30_000, `the DELETE reaching shard ${sh}`);
  ok(await b('PUT', `/v1/filters/${name}`, { capacity: 100_000, errorRate: 0.01, shards: 3 }), 201);
  putDone = true;
  await within(reached, 60_000, '200 adds acknowledged after the PUT');
  for (const sh of [0, 1]) await hook(`shard:${name}:${sh}`, '/_test/release', {});
  assert.equal((await within(deleting, 30_000, 'the held DELETE')).status, 204);
  stop = true;
  await Promise.all(clients);
  const present = ok(await b('POST', `/v1/filters/${name}/check`, { keys: after })).present;
  const lost = present.filter((p) => !p).length;
  assert.equal(
    lost,
    0,
    `${lost} of ${after.length} adds acknowledged after the PUT was answered are not in the filter`,
  );
});

test('a DELETE that failed part way, sent again, finishes (204); a PUT waits for the clean-up', async () => {
  const name = 'dp-retry';
  const params = { capacity: 10_000, errorRate: 0.01, shards: 2 };
  ok(await a('PUT', `/v1/filters/${name}`, params), 201);
  ok(await a('POST', `/v1/filters/${name}/add`, { keys: ['old'] }));
  await hook(`shard:${name}:1`, '/_test/unreachable', { on: true });
  assert.equal((await b('DELETE', `/v1/filters/${name}`)).status, 502);
  // Made again while a shard of the deleted filter cannot be told: not
  // acknowledged, and nothing of the new filter is served yet.
  assert.equal((await b('PUT', `/v1/filters/${name}`, params)).status, 502);
  assert.equal((await b('POST', `/v1/filters/${name}/check`, { keys: ['old'] })).status, 502);
  await hook(`shard:${name}:1`, '/_test/unreachable', { on: false });
  // Sent again, the PUT finds the filter made and the clean-up done.
  ok(await b('PUT', `/v1/filters/${name}`, params), 200);
  const keys = Array.from({ length: 20 }, (_, i) => `k${i}`);
  for (const key of keys) ok(await a('POST', `/v1/filters/${name}/add`, { keys: [key] }));
  assert.deepEqual(ok(await b('POST', `/v1/filters/${name}/check`, { keys: [...keys, 'old'] })).present, [
    ...keys.map(() => true),
    false,
  ]);

  await hook(`shard:${name}:0`, '/_test/unreachable', { on: true });
  assert.equal((await b('DELETE', `/v1/filters/${name}`)).status, 502);
  await hook(`shard:${name}:0`, '/_test/unreachable', { on: false });
  ok(await b('DELETE', `/v1/filters/${name}`), 204);
  assert.equal((await b('DELETE', `/v1/filters/${name}`)).status, 404);
  assert.equal((await a('POST', `/v1/filters/${name}/check`, { keys })).status, 404);
});
