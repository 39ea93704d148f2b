// The edge service killed with SIGKILL, as a crash would, while it writes
// and while it compacts a shard's log: after a restart on the same state,
// every add it acknowledged is there. workerd runs in a process group of
// its own (serve.js), and the whole group is killed.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildWorker, serveProcess } from '../../testkit/worker.js';

let dir;
let out;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'edgebloom-crash-'));
  out = join(dir, 'bundle');
  buildWorker(out);
});

after(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const serve = (state) => serveProcess(out, state);

async function missing(s, name, keys) {
  const lost = [];
  for (let i = 0; i < keys.length; i += 5000) {
    const batch = keys.slice(i, i + 5000);
    const res = await s.request('POST', `/v1/filters/${name}/check`, { keys: batch });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    res.json.present.forEach((p, j) => p || lost.push(batch[j]));
  }
  return lost;
}

test('SIGKILL during writes loses no acknowledged add', { timeout: 180_000 }, async () => {
  const state = join(dir, 'writes');
  let s = await serve(state);
  assert.equal(
    (await s.request('PUT', '/v1/filters/w', { capacity: 200_000, errorRate: 0.01, shards: 2 })).status,
    201,
  );
  const acked = [];
  let sent = 0;
  let killed = null;
  // Eight clients add batches of 20 new keys until the service is gone;
  // the kill comes once 3 000 keys are acknowledged, with adds in flight.
  await Promise.all(
    Array.from({ length: 8 }, async (_, c) => {
      for (let b = 0; ; b++) {
        const keys = Array.from({ length: 20 }, (_, i) => `https://c${c}.example/${b}/${i}`);
        sent += keys.length;
        let res;
        try {
          res = await s.request('POST', '/v1/filters/w/add', { keys });
        } catch {
          return; // the connection died with the process
        }
        if (res.status !== 200) return;
        acked.push(...keys);
        if (acked.length >= 3000 && !killed) killed = s.kill();
      }
    }),
  );
  await killed;
  s = await serve(state);
  const lost = await missing(s, 'w', acked);
  assert.deepEqual(lost.slice(0, 5), [], `${lost.length} of ${acked.length} acknowledged keys lost`);
  console.log(`# killed with ${acked.length} of ${sent} keys acknowledged; none lost`);
  await s.kill();
});

test('SIGKILL during compaction loses no acknowledged add', { timeout: 180_000 }, async () => {
  const state = join(dir, 'compaction');
  const object = 'shard:c:0';
  let s = await serve(state);
  // 1 000 000 keys at 1%: a 1.2 MB payload in 2 chunks.
  assert.equal((await s.request('PUT', '/v1/filters/c', { capacity: 1_000_000, errorRate: 0.01 })).status, 201);
  const acked = [];
  for (let b = 0; b < 40; b++) {
    const keys = Array.from({ length: 100 }, (_, i) => `https://compact.example/${b}/${i}`);
    const res = await s.request('POST', '/v1/filters/c/add', { keys });
    assert.equal(res.status, 200);
    acked.push(...keys);
  }
  const before = (await s.hook(object, '/_test/info')).json;
  assert.equal(before.log.length, 40, 'one log row an add');
  // The hook logs a line once it has written the chunks and deleted the
  // log, inside the transaction, then works on before it commits: the
  // kill lands there.
  const compacting = s.hook(object, '/_test/compact', { spin: 100_000 }).catch(() => 'killed');
  await s.waitFor(/compacting, \d+ chunks written, not committed/);
  await s.kill();
  assert.equal(await compacting, 'killed');

  s = await serve(state);
  const after = (await s.hook(object, '/_test/info')).json;
  assert.deepEqual(after.log, before.log, 'the compaction did not commit: the log is whole');
  assert.deepEqual(after.chunks, before.chunks, 'and the chunks are the old ones');
  assert.deepEqual(await missing(s, 'c', acked), []);
  // Compacted for real, then loaded from the chunks alone: still all there.
  const done = await s.hook(object, '/_test/compact', {});
  assert.equal(done.status, 200);
  assert.equal(done.json.log.length, 0);
  await s.kill();
  s = await serve(state);
  assert.deepEqual(await missing(s, 'c', acked), []);
  assert.deepEqual((await s.hook(object, '/_test/info')).json.log, []);
  await s.kill();
});
