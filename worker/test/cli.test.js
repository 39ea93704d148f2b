// The CLI's push and pull against the Worker in workerd (Miniflare on
// 127.0.0.1): a push of keys killed (SIGKILL) part way and run again
// resumes from its state file and leaves every key in the filter once: the
// service's filter is then, byte for byte, the filter `edgebloom build`
// makes of the same keys in the same order (count included). A push of a
// built filter through the merge endpoint, killed and resumed, makes the
// service's filter the built one; pull writes it to a file and, run
// again, fetches only a delta; `build --shards` makes the sharded filter a
// service filter of as many shards holds.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildWorker, startWorker, TOKEN } from '../../testkit/worker.js';
import { repoRoot } from '../../testkit/process.js';

let dir;
let w;
let bin;
let base;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edgebloom-cli-'));
  bin = join(dir, 'edgebloom');
  execFileSync('go', ['build', '-o', bin, '.'], { cwd: join(repoRoot, 'cmd/edgebloom'), stdio: 'inherit' });
  buildWorker(join(dir, 'bundle'));
  w = await startWorker(join(dir, 'bundle'), join(dir, 'state'), { port: 0 });
  base = String(w.url).replace(/\/$/, '');
});

after(async () => {
  await w?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const env = { ...process.env, EDGEBLOOM_TOKEN: TOKEN };

// cli runs the CLI to its end and returns its exit status and stderr.
function cli(...args) {
  const res = spawnSync(bin, args, { cwd: dir, env, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  return { status: res.status, stderr: res.stderr };
}

// killedWhen starts the CLI, waits (60 s at most) until the state file
// says it got past done (but not to its end), and kills it with SIGKILL.
// It returns the state the file held after the kill.
async function killedWhen(state, done, ...args) {
  const child = spawn(bin, args, { cwd: dir, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = once(child, 'exit');
  const deadline = Date.now() + 60_000;
  for (;;) {
    assert.equal(child.exitCode, null, `the push ended before it was killed: ${stderr}`);
    assert.ok(Date.now() < deadline, `the state file ${state} never passed ${done}: ${stderr}`);
    const now = existsSync(state) ? JSON.parse(readFileSync(state, 'utf8')) : { done: 0 };
    if (now.done >= done) break;
    await new Promise((r) => setTimeout(r, 5));
  }
  child.kill('SIGKILL');
  await exited;
  return JSON.parse(readFileSync(state, 'utf8'));
}

const keysFile = (name, n, from = 0) => {
  const file = join(dir, name);
  const lines = Array.from({ length: n }, (_, i) => `https://cli.example/${from + i}`);
  writeFileSync(file, lines.join('\n') + '\n');
  return { file, lines };
};

const snapshot = async (name) => {
  const res = await w.request('GET', `/v1/filters/${name}/snapshot`);
  assert.equal(res.status, 200);
  return res.bytes;
};

test('push --keys killed part way, run again: every key in the filter once', async () => {
  const { file, lines } = keysFile('keys.txt', 300_000);
  const state = join(dir, 'keys.state');
  const args = [
    'push',
    '--keys',
    '-n',
    '400000',
    '--parallel',
    '1',
    '--state',
    state,
    file,
    `${base}/v1/filters/pushed`,
  ];
  const at = await killedWhen(state, 50_000, ...args);
  assert.ok(at.done >= 50_000 && at.done < lines.length, JSON.stringify(at));
  const again = cli(...args);
  assert.equal(again.status, 0, again.stderr);
  assert.match(again.stderr, new RegExp(`resuming pushed after ${at.done} keys`));
  assert.ok(!existsSync(state), 'the state file is removed once the push is done');
  // Every key is in, and was counted once: the filter is the one a build
  // of the same keys in the same order makes.
  const built = join(dir, 'keys.bloom');
  assert.equal(cli('build', '-n', '400000', '-p', '0.01', '-o', built, file).status, 0);
  assert.deepEqual(await snapshot('pushed'), new Uint8Array(readFileSync(built)));
});

test('push of a built filter, killed part way and run again, then pull and pull again', async () => {
  const { file } = keysFile('many.txt', 1_000_000);
  const built = join(dir, 'many.bloom');
  assert.equal(cli('build', '-n', '1M', '-p', '0.01', '-o', built, file).status, 0);
  const state = join(dir, 'many.state');
  const args = ['push', '--parallel', '1', '--state', state, '--name', 'many', built, base];
  const at = await killedWhen(state, 1, ...args);
  assert.ok(at.generation > 0 && at.done >= 1, JSON.stringify(at));
  const again = cli(...args);
  assert.equal(again.status, 0, again.stderr);
  assert.match(again.stderr, new RegExp(`resuming many after ${at.done} pieces`));
  assert.deepEqual(await snapshot('many'), new Uint8Array(readFileSync(built)));
  // pull writes it; pulled again after more keys, it fetches a delta.
  const copy = join(dir, 'many.copy');
  const first = cli('pull', `${base}/v1/filters/many`, copy);
  assert.equal(first.status, 0, first.stderr);
  assert.match(first.stderr, /snapshot/);
  assert.deepEqual(new Uint8Array(readFileSync(copy)), new Uint8Array(readFileSync(built)));
  const more = keysFile('more.txt', 2000, 5_000_000);
  assert.equal(cli('push', '--keys', '--name', 'many', more.file, base).status, 0);
  const second = cli('pull', `${base}/v1/filters/many`, copy);
  assert.equal(second.status, 0, second.stderr);
  assert.match(second.stderr, /: delta,/);
  assert.deepEqual(new Uint8Array(readFileSync(copy)), await snapshot('many'));
});

test('build --shards and push: the service filter of 3 shards, made before with its own capacity, is the build', async () => {
  const { file } = keysFile('sharded.txt', 20_000, 9_000_000);
  const built = join(dir, 'sharded.bloom');
  assert.equal(cli('build', '-n', '100000', '--shards', '3', '-o', built, file).status, 0);
  assert.equal(
    (await w.request('PUT', '/v1/filters/sharded', { capacity: 100_000, errorRate: 0.01, shards: 3 })).status,
    201,
  );
  const res = cli('push', built, base);
  assert.equal(res.status, 0, res.stderr);
  assert.deepEqual(await snapshot('sharded'), new Uint8Array(readFileSync(built)));
  // Into a filter of one shard: refused, naming both.
  assert.equal((await w.request('PUT', '/v1/filters/one', { capacity: 100_000, errorRate: 0.01 })).status, 201);
  const refused = cli('push', '--name', 'one', built, base);
  assert.equal(refused.status, 2);
  assert.match(refused.stderr, /409 conflict: the delta is of 3 shards .* the filter has 1 shards/);
});

test('pull --every keeps the file in sync until interrupted', async () => {
  const { file } = keysFile('every.txt', 1000, 7_000_000);
  assert.equal(cli('push', '--keys', '-n', '100000', '--name', 'every', file, base).status, 0);
  const copy = join(dir, 'every.copy');
  const child = spawn(bin, ['pull', '--every', '100ms', `${base}/v1/filters/every`, copy], {
    cwd: dir,
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = once(child, 'exit');
  // until the file holds what the service holds (60 s at most)
  const synced = async () => {
    const want = await snapshot('every');
    for (const deadline = Date.now() + 60_000; ;) {
      if (existsSync(copy) && Buffer.compare(readFileSync(copy), want) === 0) return;
      assert.equal(child.exitCode, null, stderr);
      assert.ok(Date.now() < deadline, `the copy never caught up: ${stderr}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  await synced();
  const more = keysFile('every-more.txt', 500, 8_000_000);
  assert.equal(cli('push', '--keys', '--name', 'every', more.file, base).status, 0);
  await synced();
  child.kill('SIGINT');
  const [code] = await exited;
  assert.equal(code, 0, stderr);
  assert.match(stderr, /: snapshot,/);
  assert.match(stderr, /: delta,/);
});

test('push refuses a state file of another push, and a filter of other parameters', async () => {
  const { file } = keysFile('other.txt', 10);
  const state = join(dir, 'other.state');
  writeFileSync(state, JSON.stringify({ service: base, filter: 'x', mode: 'keys', inputs: [], done: 5 }));
  const res = cli('push', '--keys', '-n', '100', '--state', state, file, `${base}/v1/filters/other`);
  assert.equal(res.status, 2);
  assert.match(res.stderr, /is of another push.*--restart/);
  assert.equal(
    cli('push', '--keys', '-n', '100', '--state', state, '--restart', file, `${base}/v1/filters/other`).status,
    0,
  );
  const built = join(dir, 'other.bloom');
  assert.equal(cli('build', '-n', '1000', '-o', built, file).status, 0);
  const conflict = cli('push', '--name', 'other', built, base);
  assert.equal(conflict.status, 2);
  assert.match(conflict.stderr, /conflict/);
});
