// The Worker's configuration, as worker/README.md's table lists it: the
// table names every variable the Worker reads (the Go front's Getenv, the
// shards' env), and dev.sh ("npm run worker:dev") hands each one it is given
// to the Worker, which then behaves as the variable says.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TOKEN, WORKER_DIR, startDev } from '../../testkit/worker.js';

const dir = mkdtempSync(join(tmpdir(), 'edgebloom-dev-vars-'));
let dev;

after(async () => {
  await dev?.stop();
  rmSync(dir, { recursive: true, force: true });
});

// The variables of worker/README.md's Configuration table: its rows start
// with the variable's name in backquotes.
function documented() {
  const page = readFileSync(join(WORKER_DIR, 'README.md'), 'utf8');
  return new Set([...page.matchAll(/^\| `(EDGEBLOOM_[A-Z0-9_]+)` \|/gm)].map((m) => m[1]));
}

// The variables the Worker's code reads: the Go front's, quoted, and the
// JavaScript's, as env.NAME.
function read() {
  const names = new Set();
  const scan = (sub, pattern, keep) => {
    for (const f of readdirSync(join(WORKER_DIR, sub)).filter(keep)) {
      for (const m of readFileSync(join(WORKER_DIR, sub, f), 'utf8').matchAll(pattern)) names.add(m[1]);
    }
  };
  scan('front', /"(EDGEBLOOM_[A-Z0-9_]+)"/g, (f) => f.endsWith('.go') && !f.endsWith('_test.go'));
  for (const sub of ['front', 'shard']) scan(sub, /env\.(EDGEBLOOM_[A-Z0-9_]+)/g, (f) => /\.m?js$/.test(f));
  return names;
}

const PREVIOUS = 'the-secret-before-a-rotation';
const ORIGIN = 'https://page.example';
const within = async (ms, what, fn) => {
  const deadline = Date.now() + ms;
  for (;;) {
    const got = await fn();
    if (got !== undefined) return got;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
};

// Each variable, the value the test gives it, and what the Worker does
// because of it.
const probes = {
  EDGEBLOOM_TOKEN: {
    value: TOKEN,
    async check(request) {
      assert.equal((await request('GET', '/v1/filters/none')).status, 404, 'the secret is accepted');
    },
  },
  EDGEBLOOM_TOKEN_PREVIOUS: {
    value: PREVIOUS,
    async check(request) {
      const res = await request('GET', '/v1/filters/none', undefined, { token: PREVIOUS });
      assert.equal(res.status, 404, 'the previous secret is accepted');
    },
  },
  EDGEBLOOM_ALLOWED_ORIGINS: {
    value: ORIGIN,
    async check(request) {
      const res = await request('OPTIONS', '/v1/filters/vars/snapshot', undefined, {
        token: null,
        headers: { Origin: ORIGIN, 'Access-Control-Request-Method': 'GET' },
      });
      assert.equal(res.headers.get('Access-Control-Allow-Origin'), ORIGIN, 'a listed origin is allowed');
    },
  },
  EDGEBLOOM_CHECKPOINT_SECONDS: {
    value: '7',
    async check(request) {
      assert.equal((await request('PUT', '/v1/filters/vars', { capacity: 1000, errorRate: 0.01 })).status, 201);
      const latest = await within(60_000, 'checkpoints/latest', async () => {
        const res = await request('GET', '/v1/filters/vars/checkpoints/latest');
        return res.status === 200 ? res.json : undefined;
      });
      assert.equal(latest.interval, 7, 'the checkpoint interval is the variable');
    },
  },
  EDGEBLOOM_TEST_HOOKS: {
    value: '1',
    async check(request) {
      assert.equal((await request('GET', '/_test/instance')).status, 200, 'the test endpoints answer');
    },
  },
};

test("worker/README.md's Configuration lists every variable the Worker reads, and no other", () => {
  assert.deepEqual([...documented()].sort(), [...read()].sort());
});

test('npm run worker:dev (dev.sh) hands every documented variable to the Worker', { timeout: 400_000 }, async (t) => {
  const names = [...documented()];
  const missing = names.filter((n) => !(n in probes));
  assert.deepEqual(missing, [], 'a probe for every documented variable (add one above)');
  const env = Object.fromEntries(names.map((n) => [n, probes[n].value]));
  dev = await startDev(join(dir, 'state'), { env });
  for (const name of names) {
    await t.test(name, () => probes[name].check(dev.request));
  }
});
