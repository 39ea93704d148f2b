// End to end through "wrangler dev" (dev.sh, what "npm run worker:dev"
// runs) on 127.0.0.1: the API answers, a minute without requests loses
// nothing and stops no engine, and state persisted under the named
// directory survives a restart.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { connect } from 'node:net';
import { join, relative, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startDev, TOKEN, WORKER_DIR } from '../../testkit/worker.js';

const dir = mkdtempSync(join(tmpdir(), 'edgebloom-dev-'));
let dev;

after(async () => {
  await dev?.stop();
  rmSync(dir, { recursive: true, force: true });
});

// How long the service is left alone. workerd evicts Durable Objects that
// got no request for a while: a new instance serves the next request, and
// the old one's filter is dropped unfreed, for the npm module's
// FinalizationRegistry to free once V8 collects it. workerd's clock reads 0
// inside those callbacks, and the free runs a Go GC, whose stop-the-world
// refuses a zero time: before the engine's clock was made monotonic, Go
// aborted there ("fatal error: stopTheWorld: broken CPU time accounting"),
// and the shards then answered 500 (shard_corrupt, over intact storage).
const IDLE_MS = 65_000;
// The ordinary traffic after the idle minute: snapshots copy each shard's
// 1.2 MB out of the engine, and that much memory churn makes V8 collect
// the evicted instances (in every run here within 40 requests; without
// traffic, V8 got to them within the idle minute in about half the runs).
const SNAPSHOTS = 60;

// What wrangler watches to rebuild the front: the Go packages of the
// repository the front is built from, as go list -deps names them, and
// nothing build.sh writes.
test('wrangler.jsonc: build.watch_dir names the directories of the Go packages the front is built from', () => {
  const config = readFileSync(join(WORKER_DIR, 'wrangler.jsonc'), 'utf8')
    .replace(/^\s*\/\/.*$/gm, '')
    .replace(/,(\s*[}\]])/g, '$1');
  const watched = JSON.parse(config)
    .build.watch_dir.map((d) => resolve(WORKER_DIR, d))
    .sort();
  const repo = resolve(WORKER_DIR, '..');
  const deps = execFileSync('go', ['list', '-deps', '-f', '{{if not .Standard}}{{.Dir}}{{end}}', './front'], {
    cwd: WORKER_DIR,
    env: { ...process.env, GOOS: 'js', GOARCH: 'wasm' },
    encoding: 'utf8',
  })
    .split('\n')
    .filter((d) => d && !relative(repo, d).startsWith('..'))
    .sort();
  assert.deepEqual(
    watched.map((d) => relative(repo, d)),
    deps.map((d) => relative(repo, d)),
  );
});

// The start as "npm run worker:dev" shows it: how to stop it, the Go front
// compiled at most once (wrangler runs the build command a second time as
// its watcher starts; that run, and any other, finds the build up to date),
// and no request answered by the local runtime's "restarted mid-request".
async function checkStart(dev) {
  const runs = () => dev.log().match(/\[custom build\] Running: bash build\.sh/g)?.length ?? 0;
  const ended = () => dev.log().match(/worker\/build(\/app\.wasm: built|: up to date)/g)?.length ?? 0;
  for (const deadline = Date.now() + 60_000; ended() < runs() && Date.now() < deadline;) await sleep(100);
  const log = dev.log();
  assert.match(log, /Ctrl-C stops it/);
  assert.ok(runs() >= 1, log);
  assert.equal(ended(), runs(), `every run of build.sh ended:\n${log}`);
  const built = log.match(/worker\/build\/app\.wasm: built/g)?.length ?? 0;
  assert.ok(built <= 1, `the Go front compiled ${built} times in one start:\n${log}`);
  assert.doesNotMatch(log, /restarted mid-request/);
}

// answer shows an answer that was not the one expected: its body (JSON,
// or the local runtime's plain text) and the end of wrangler's log.
const answer = (res, dev) =>
  `${res.json ? JSON.stringify(res.json) : new TextDecoder().decode(res.bytes)}\n--- wrangler dev's log, its end:\n${dev.log().slice(-4000)}`;

// rawPost sends a POST whose Content-Length header is length, as written,
// and returns the answer's status line and body.
function rawPost(port, path, length, body) {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (d) => (answer += d));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head, ...rest] = answer.split('\r\n\r\n');
      resolve({ status: head.split('\r\n')[0], body: rest.join('\r\n\r\n') });
    });
    socket.write(
      `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\n` +
        `Content-Length: ${length}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}

test(
  'wrangler dev: an idle minute loses no acknowledged key and stops no engine; state survives a restart',
  { timeout: 400_000 },
  async () => {
    const state = join(dir, 'state');
    // 1.2 MB a shard: enough memory for the collector to come back to the
    // evicted shards during the idle minute.
    const params = { capacity: 1_000_000, errorRate: 0.01, shards: 2 };
    const keys = Array.from({ length: 4000 }, (_, i) => `https://dev.example/${i}`);
    dev = await startDev(state);
    // The first requests: a PUT, which the local runtime does not retry
    // when the Worker reloads under it, answered by the Worker.
    assert.equal((await dev.request('PUT', '/v1/filters/dev', params)).status, 201);
    assert.equal((await dev.request('GET', '/v1/filters/x', undefined, { token: 'wrong' })).status, 401);
    await checkStart(dev);
    // What the local runtime answers before the Worker runs (README.md,
    // Errors): a Content-Length that is no number is a bare 500, which
    // never reaches the Worker and so is not in wrangler's request log.
    for (const length of ['abc', '-1', '5, 5', '1e3']) {
      const res = await rawPost(dev.port, '/v1/filters/dev/add', length, '{"keys":[]}');
      assert.equal(res.status, 'HTTP/1.1 500 Internal Server Error', `Content-Length: ${length}`);
      assert.equal(res.body, 'Internal Server Error');
    }
    assert.doesNotMatch(dev.log(), /POST \/v1\/filters\/dev\/add 500/);
    let fresh = 0;
    for (let i = 0; i < keys.length; i += 1000) {
      const added = await dev.request('POST', '/v1/filters/dev/add', { keys: keys.slice(i, i + 1000) });
      assert.equal(added.status, 200, JSON.stringify(added.json));
      fresh += added.json.added.filter(Boolean).length;
    }
    assert.ok(fresh >= keys.length - 40);
    const stats = (await dev.request('GET', '/v1/filters/dev')).json;
    assert.equal(stats.total.count, fresh);

    await sleep(IDLE_MS);
    for (let i = 0; i < SNAPSHOTS; i++) {
      const snap = await dev.request('GET', '/v1/filters/dev/snapshot');
      assert.equal(snap.status, 200, `snapshot ${i} after the idle minute: ${JSON.stringify(snap.json)}`);
      assert.equal(snap.headers.get('X-Edgebloom-Format'), 'sharded');
    }
    const checked = await dev.request('POST', '/v1/filters/dev/check', { keys });
    assert.equal(
      checked.status,
      200,
      `after ${IDLE_MS} ms idle and ${SNAPSHOTS} snapshots: ${JSON.stringify(checked.json)}`,
    );
    assert.ok(checked.json.present.every(Boolean), 'every acknowledged key present after the idle minute');
    assert.deepEqual((await dev.request('GET', '/v1/filters/dev')).json, stats);
    // Answering is not enough: a shard heals by reloading from storage, so
    // the engine must not have stopped at all.
    const trouble = dev
      .log()
      .split('\n')
      .filter((l) => /fatal error|reloading the shard|shard_corrupt|the Go front failed|exit code/.test(l));
    assert.deepEqual(trouble, [], 'the engine and the kept Go front ran through the idle minute');
    await dev.stop();

    dev = await startDev(state);
    const again = await dev.request('POST', '/v1/filters/dev/check', { keys });
    await checkStart(dev);
    assert.ok(again.json.present.every(Boolean), 'every key present after the restart');
    assert.deepEqual((await dev.request('GET', '/v1/filters/dev')).json, stats);
    await dev.stop();
    dev = undefined;
  },
);

// Filters of 50 M and 100 M keys at 1%, each with the fewest shards PUT
// accepts (2 and 4, each shard about 28.6 MiB): six shards near the cap in
// the one isolate wrangler dev runs every object in, whose engine holds two
// of them at once. Concurrent adds and checks to all of them: every request
// answers 200 and every acknowledged key is present, while the shards give
// their filters back to each other and load them again from storage.
test(
  'wrangler dev: filters of 50 M and 100 M keys at 1% are served with all their shards in one isolate',
  { timeout: 600_000 },
  async () => {
    dev = await startDev(join(dir, 'big'));
    await checkStart(dev);
    const filters = { big50: { capacity: 50_000_000, shards: 2 }, big100: { capacity: 100_000_000, shards: 4 } };
    for (const [name, { capacity, shards }] of Object.entries(filters)) {
      const fewer = await dev.request('PUT', `/v1/filters/${name}`, { capacity, errorRate: 0.01, shards: shards - 1 });
      assert.equal(fewer.status, 400, `${shards - 1} shards are too few for ${capacity} keys`);
      assert.match(fewer.json.error.message, new RegExp(`use at least ${shards} shards`));
      const made = await dev.request('PUT', `/v1/filters/${name}`, { capacity, errorRate: 0.01, shards });
      assert.equal(made.status, 201, JSON.stringify(made.json));
    }
    const acknowledged = { big50: [], big100: [] };
    await Promise.all(
      Array.from({ length: 3 }, async (_, c) => {
        for (let round = 0; round < 4; round++) {
          for (const name of Object.keys(filters)) {
            const keys = Array.from({ length: 64 }, (_, i) => `https://big.example/${name}/${c}/${round}/${i}`);
            const added = await dev.request('POST', `/v1/filters/${name}/add`, { keys });

            assert.equal(added.status, 200, answer(added, dev));
            acknowledged[name].push(...keys);
            const checked = await dev.request('POST', `/v1/filters/${name}/check`, { keys: acknowledged[name] });

            assert.equal(checked.status, 200, answer(checked, dev));
            assert.ok(checked.json.present.every(Boolean), `${name}: every key acknowledged so far is present`);
          }
        }
      }),
    );
    for (const [name, { shards }] of Object.entries(filters)) {
      const stats = await dev.request('GET', `/v1/filters/${name}`);
      assert.equal(stats.status, 200, JSON.stringify(stats.json));
      assert.equal(stats.json.perShard.length, shards);
      assert.equal(stats.json.total.count, acknowledged[name].length);
      const checked = await dev.request('POST', `/v1/filters/${name}/check`, { keys: acknowledged[name] });
      assert.ok(checked.json.present.every(Boolean));
    }
    // A snapshot streams every shard through the front, each loaded in
    // turn: the sharded container, whole.
    const snap = await dev.request('GET', '/v1/filters/big50/snapshot');
    assert.equal(snap.status, 200);
    assert.equal(snap.headers.get('X-Edgebloom-Format'), 'sharded');
    const stats50 = (await dev.request('GET', '/v1/filters/big50')).json;
    assert.equal(snap.bytes.length, 24 + 8 * 2 + 80 + stats50.total.byteLength, 'header, router, both shards');
    assert.doesNotMatch(dev.log(), /ERR_TOO_LARGE|memory budget|fatal error/);
    await dev.stop();
    dev = undefined;
  },
);
