// The edge service in a real workerd (Miniflare), built the way
// "wrangler deploy" builds it: every endpoint and error, 50 concurrent
// clients, a restart on the same persisted state, persistence as chunks and
// a log, corruption, snapshots read back by Go and by the npm module, keys
// that are not well-formed Unicode, and shards whose engine was stopped.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildWorker, startWorker, TOKEN, WORKER_DIR } from '../../testkit/worker.js';

let dir;
let out;
let state;
let w;
let edgebloom; // the npm module, imported by name once the build has linked it

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edgebloom-worker-'));
  out = join(dir, 'bundle');
  state = join(dir, 'state');
  buildWorker(out);
  edgebloom = await import('edgebloom');
  await edgebloom.init();
  w = await startWorker(out, state);
});

after(async () => {
  await w?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const req = (...args) => w.request(...args);

// What no answer may carry: a stack trace, a file of the bundle, Go's type
// names or error prefixes, a JS error's class.
const LEAKS = [
  /\n\s*at /,
  /file:/,
  /\.m?js\b/,
  /\.go\b/,
  /goroutine/,
  /\bGo (value|struct)\b/,
  /\[\]string/,
  /json: /,
  /\w+Error\b/,
];

function assertNoLeak(res) {
  const text = new TextDecoder().decode(res.bytes);
  for (const leak of LEAKS) assert.doesNotMatch(text, leak, `the answer carries ${leak}: ${text}`);
}

/** Checks an error answer: its status and code, a message, nothing leaked, and a request id on a 5xx. */
async function expectError(promise, status, code) {
  const res = await promise;
  assert.equal(res.status, status, JSON.stringify(res.json));
  assert.equal(res.json?.error?.code, code, JSON.stringify(res.json));
  assert.ok(res.json.error.message.length > 0);
  assertNoLeak(res);
  if (status >= 500) assert.match(res.json.error.requestId ?? '', /^[0-9a-f]{16}$/, JSON.stringify(res.json));
  return res;
}

/** Loads a snapshot, plain or sharded, with the npm module. */
function loadSnapshot(bytes) {
  // The npm module reads both: a plain filter (one shard) and the sharded
  // container, which it routes exactly as the Worker does.
  const f = edgebloom.fromBytes(bytes);
  assert.deepEqual(f.toBytes(), bytes, 'the npm module re-encodes the snapshot byte for byte');
  return { has: (k) => f.has(k), shards: f.shards ?? 1, free: () => f.free() };
}

/** Looks keys up in a snapshot file with Go's bloom (worker/cmd/ebsnap). */
function goAnswers(snapshotBytes, keys) {
  const file = join(dir, `snap-${Date.now()}.bin`);
  writeFileSync(file, snapshotBytes);
  const bits = execFileSync('go', ['run', './cmd/ebsnap', file], {
    cwd: WORKER_DIR,
    input: keys.join('\n') + '\n',
    maxBuffer: 64 << 20,
  })
    .toString()
    .trim();
  assert.equal(bits.length, keys.length);
  return [...bits].map((c) => c === '1');
}

describe('errors', () => {
  before(async () => {
    assert.equal((await req('PUT', '/v1/filters/errs', { capacity: 1000, errorRate: 0.01, shards: 2 })).status, 201);
  });

  test('401 without or with a wrong token, compared in constant time', async () => {
    const res = await expectError(req('GET', '/v1/filters/errs', undefined, { token: null }), 401, 'unauthorized');
    assert.match(res.headers.get('WWW-Authenticate'), /^Bearer/);
    await expectError(req('GET', '/v1/filters/errs', undefined, { token: 'nope' }), 401, 'unauthorized');
    await expectError(req('POST', '/v1/filters/errs/add', { keys: ['a'] }, { token: '' }), 401, 'unauthorized');
  });

  test('404 for unknown endpoints and filters', async () => {
    await expectError(req('GET', '/'), 404, 'not_found');
    await expectError(req('GET', '/v1/filters/errs/nope'), 404, 'not_found');
    await expectError(req('GET', '/v1/filters/none'), 404, 'not_found');
    await expectError(req('POST', '/v1/filters/none/add', { keys: ['a'] }), 404, 'not_found');
    await expectError(req('POST', '/v1/filters/none/check', { keys: ['a'] }), 404, 'not_found');
    await expectError(req('GET', '/v1/filters/none/snapshot'), 404, 'not_found');
    await expectError(req('DELETE', '/v1/filters/none'), 404, 'not_found');
  });

  test('405 for wrong methods, with Allow', async () => {
    for (const [method, path] of [
      ['POST', '/v1/filters/errs'],
      ['GET', '/v1/filters/errs/add'],
      ['PUT', '/v1/filters/errs/check'],
      ['POST', '/v1/filters/errs/snapshot'],
    ]) {
      const res = await expectError(req(method, path, method === 'GET' ? undefined : {}), 405, 'method_not_allowed');
      assert.ok(res.headers.get('Allow'));
    }
  });

  test('400 for invalid JSON and parameters; 409 for other parameters', async () => {
    await expectError(req('PUT', '/v1/filters/bad', undefined, { raw: '{"capacity": ' }), 400, 'invalid_json');
    for (const body of [
      {},
      { capacity: 0, errorRate: 0.01 },
      { capacity: 10.5, errorRate: 0.01 },
      { capacity: 10, errorRate: 0 },
      { capacity: 10, errorRate: 1.5 },
      { capacity: 10, errorRate: 0.01, shards: 0 },
      { capacity: 10, errorRate: 0.01, shards: 1000 },
      { capacity: 1e9, errorRate: 0.001, shards: 1 },
    ]) {
      await expectError(req('PUT', '/v1/filters/bad', body), 400, 'invalid_params');
    }
    await expectError(req('PUT', '/v1/filters/bad', { capacity: 1, errorRate: 0.1, extra: 1 }), 400, 'invalid_json');
    await expectError(req('PUT', '/v1/filters/bad%20name', { capacity: 1, errorRate: 0.1 }), 400, 'invalid_name');
    await expectError(req('POST', '/v1/filters/errs/add', undefined, { raw: 'not json' }), 400, 'invalid_json');
    await expectError(req('POST', '/v1/filters/errs/add', { keys: 'a' }), 400, 'invalid_json');
    await expectError(req('POST', '/v1/filters/errs/check', { nokeys: [] }), 400, 'invalid_json');
    const same = await req('PUT', '/v1/filters/errs', { capacity: 1000, errorRate: 0.01, shards: 2 });
    assert.equal(same.status, 200);
    await expectError(req('PUT', '/v1/filters/errs', { capacity: 1000, errorRate: 0.01, shards: 3 }), 409, 'conflict');
    await expectError(req('PUT', '/v1/filters/errs', { capacity: 999, errorRate: 0.01, shards: 2 }), 409, 'conflict');
  });

  test('key and body limits: 8 KiB a key (400), 10 000 keys (413), 1 MiB (413)', async () => {
    const ok = await req('POST', '/v1/filters/errs/add', { keys: ['k'.repeat(8192), 'é'.repeat(4096)] });
    assert.deepEqual(ok.json, { added: [true, true] });
    await expectError(req('POST', '/v1/filters/errs/add', { keys: ['a', 'k'.repeat(8193)] }), 400, 'key_too_long');
    await expectError(req('POST', '/v1/filters/errs/check', { keys: ['é'.repeat(4097)] }), 400, 'key_too_long');
    const tenK = Array.from({ length: 10_000 }, (_, i) => `k${i}`);
    assert.equal((await req('POST', '/v1/filters/errs/check', { keys: tenK })).json.present.length, 10_000);
    await expectError(req('POST', '/v1/filters/errs/add', { keys: [...tenK, 'one more'] }), 413, 'too_many_keys');
    const big = Array.from({ length: 200 }, (_, i) => `${i}`.padEnd(6000, 'x'));
    await expectError(req('POST', '/v1/filters/errs/add', { keys: big }), 413, 'body_too_large');
  });
});

describe('error shapes', () => {
  before(async () => {
    assert.equal((await req('PUT', '/v1/filters/shapes', { capacity: 1000, errorRate: 0.01, shards: 2 })).status, 201);
  });

  test('the auth scheme is case-insensitive (RFC 9110 §11.1); the token is not', async () => {
    for (const scheme of ['bearer', 'BEARER', 'bEaReR']) {
      const res = await req('GET', '/v1/filters/shapes', undefined, {
        token: null,
        headers: { Authorization: `${scheme} ${TOKEN}` },
      });
      assert.equal(res.status, 200, `${scheme}: ${JSON.stringify(res.json)}`);
    }
    const upper = { token: null, headers: { Authorization: `bearer ${TOKEN.toUpperCase()}` } };
    await expectError(req('GET', '/v1/filters/shapes', undefined, upper), 401, 'unauthorized');
    await expectError(
      req('GET', '/v1/filters/shapes', undefined, { token: null, headers: { Authorization: `Basic ${TOKEN}` } }),
      401,
      'unauthorized',
    );
  });

  test('bodies that are no JSON object get 400 naming the shape the endpoint takes', async () => {
    for (const raw of ['[]', 'null', '"x"', '42', 'true', '[{"keys": ["a"]}]']) {
      for (const action of ['add', 'check']) {
        const res = await expectError(
          req('POST', `/v1/filters/shapes/${action}`, undefined, { raw }),
          400,
          'invalid_json',
        );
        assert.ok(res.json.error.message.includes('{"keys": [string, ...]}'), res.json.error.message);
      }
      const res = await expectError(req('PUT', '/v1/filters/shapes2', undefined, { raw }), 400, 'invalid_json');
      assert.match(res.json.error.message, /\{"capacity": integer, "errorRate": number/);
    }
    const res = await expectError(req('POST', '/v1/filters/shapes/add', { keys: ['a', 7] }), 400, 'invalid_json');
    assert.equal(
      res.json.error.message,
      '"keys" holds a number where a string belongs; the body must be {"keys": [string, ...]}',
    );
    await expectError(req('GET', '/v1/filters/shapes2'), 404, 'not_found');
  });

  test('a path the Go front cannot parse gets a 400 in JSON, not the exception', async () => {
    await expectError(req('GET', '/v1/filters/%zz'), 400, 'invalid_path');
    await expectError(req('POST', '/v1/filters/shapes%2/add', { keys: ['a'] }), 400, 'invalid_path');
  });

  test('a shard that fails inside answers 500 with a code and the request id; the detail goes to the log', async () => {
    // A shard whose log write fails inside the add's transaction (the
    // test hook makes the next one fail): the answer says nothing of the
    // shard's internals, the log has them under the request id, and the
    // shard answers the next request from what storage holds.
    assert.equal((await req('PUT', '/v1/filters/failing', { capacity: 10_000, errorRate: 0.01 })).status, 201);
    assert.equal((await req('POST', '/v1/filters/failing/add', { keys: ['before'] })).status, 200);
    assert.equal((await w.hook('shard:failing:0', '/_test/fail-next-log', {})).status, 204);
    const failed = await expectError(req('POST', '/v1/filters/failing/add', { keys: ['lost'] }), 500, 'internal');
    const id = failed.json.error.requestId;
    const lines = w.log().split('\n');
    const at = lines.findIndex((l) => l.includes(id));
    assert.ok(at >= 0, `no log line carries request id ${id}:\n${w.log()}`);
    assert.match(lines.slice(at).join('\n'), /the log write failed/);
    assert.deepEqual((await req('POST', '/v1/filters/failing/check', { keys: ['before', 'lost'] })).json, {
      present: [true, false],
    });
    assert.doesNotMatch(w.log(), /shard_corrupt: shard \d+ of filter "failing"/);

    // An object's own failure (bad JSON on the internal protocol) is a 500
    // with the id the front sent, and the SyntaxError stays in the log.
    const res = await w.object('meta:direct', 'PUT', '/meta', {
      body: '{',
      headers: { 'X-Edgebloom-Request-Id': 'feedc0ffee123456' },
    });
    assert.equal(res.status, 500);
    assert.deepEqual(Object.keys(res.json.error).sort(), ['code', 'message', 'requestId']);
    assert.equal(res.json.error.requestId, 'feedc0ffee123456');
    assertNoLeak({ bytes: new TextEncoder().encode(res.text) });
    assert.match(w.log(), /request feedc0ffee123456: internal error: SyntaxError/);
  });
});

test('invalid UTF-8 and lone surrogates become U+FFFD before routing and hashing, as a JS runtime decodes them', async () => {
  assert.equal((await req('PUT', '/v1/filters/utf', { capacity: 1000, errorRate: 0.001, shards: 3 })).status, 201);
  // Raw bytes that are no UTF-8 (a stray byte, a truncated sequence, a
  // surrogate and an overlong form encoded in UTF-8) and JSON escapes of
  // lone surrogates, inside JSON strings.
  const parts = [
    '{"keys": ["a',
    [0xff],
    'b", "e',
    [0xe2, 0x82],
    'z", "',
    [0xed, 0xa0, 0x80],
    'x", "\\ud800y", "z\\udc00\\ud800", "',
    [0xc0, 0xaf],
    '", "ok é"]}',
  ];
  const bytes = new Uint8Array(parts.flatMap((p) => (typeof p === 'string' ? [...new TextEncoder().encode(p)] : p)));
  // What a JS runtime makes of the same bytes: TextDecoder's U+FFFD, and
  // the well-formed form of each key, as TextEncoder (the npm module) hashes it.
  const keys = JSON.parse(new TextDecoder().decode(bytes)).keys.map((k) => k.toWellFormed());
  assert.deepEqual(keys, [
    'a\uFFFDb',
    'e\uFFFDz',
    '\uFFFD\uFFFD\uFFFDx',
    '\uFFFDy',
    'z\uFFFD\uFFFD',
    '\uFFFD\uFFFD',
    'ok é',
  ]);
  const added = await req('POST', '/v1/filters/utf/add', undefined, { raw: bytes });
  assert.equal(added.status, 200, JSON.stringify(added.json));
  assert.deepEqual(added.json.added, [true, true, true, true, true, true, true]);
  // The same keys sent as well-formed JSON are the same keys.
  assert.deepEqual(
    (await req('POST', '/v1/filters/utf/check', { keys })).json.present,
    keys.map(() => true),
  );
  assert.deepEqual(
    (await req('POST', '/v1/filters/utf/add', { keys })).json.added,
    keys.map(() => false),
  );
  assert.deepEqual(
    (await req('POST', '/v1/filters/utf/check', undefined, { raw: bytes })).json.present,
    keys.map(() => true),
  );
  assert.equal((await req('GET', '/v1/filters/utf')).json.total.count, keys.length);
  // And the npm module and Go find them in the snapshot under those strings.
  const snap = await req('GET', '/v1/filters/utf/snapshot');
  const js = loadSnapshot(snap.bytes);
  assert.deepEqual(
    keys.map((k) => js.has(k)),
    keys.map(() => true),
  );
  js.free();
  assert.deepEqual(
    goAnswers(snap.bytes, keys),
    keys.map(() => true),
  );
});

describe('50 concurrent clients, restart, snapshots', () => {
  const CLIENTS = 50;
  const PER_CLIENT = 1000;
  const SHARED = 1000; // URLs many clients add
  const ERROR_RATE = 0.01;
  const shared = Array.from({ length: SHARED }, (_, i) => `https://shared.example/a/${i}?utm=é`);
  // Client c adds 800 URLs of its own and 200 shared ones, interleaved.
  const urlsOf = (c) => {
    const own = Array.from({ length: PER_CLIENT - 200 }, (_, i) => `https://c${c}.example/page/${i}`);
    const mine = Array.from({ length: 200 }, (_, j) => shared[(c * 20 + j) % SHARED]);
    return own.flatMap((u, i) => (i % 4 === 0 && mine.length ? [u, mine.pop()] : [u])).concat(mine);
  };
  const distinct = new Set();
  for (let c = 0; c < CLIENTS; c++) for (const u of urlsOf(c)) distinct.add(u);
  const all = [...distinct];
  const absent = Array.from({ length: 5000 }, (_, i) => `https://never.example/${i}`);
  let statsBefore;
  let trues;

  const checkAll = async (keys) => {
    const present = [];
    for (let i = 0; i < keys.length; i += 10_000) {
      const res = await req('POST', '/v1/filters/crawl/check', { keys: keys.slice(i, i + 10_000) });
      assert.equal(res.status, 200, JSON.stringify(res.json));
      present.push(...res.json.present);
    }
    return present;
  };

  test('every URL added once, every URL present afterwards', async () => {
    assert.equal(distinct.size, CLIENTS * (PER_CLIENT - 200) + SHARED);
    const created = await req('PUT', '/v1/filters/crawl', { capacity: 100_000, errorRate: ERROR_RATE, shards: 4 });
    assert.equal(created.status, 201);
    const hits = new Map();
    const started = Date.now();
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, c) => {
        const urls = urlsOf(c);
        for (let i = 0; i < urls.length; i += 100) {
          const batch = urls.slice(i, i + 100);
          const res = await req('POST', '/v1/filters/crawl/add', { keys: batch });
          assert.equal(res.status, 200, JSON.stringify(res.json));
          assert.equal(res.json.added.length, batch.length);
          res.json.added.forEach((a, j) => {
            if (a) hits.set(batch[j], (hits.get(batch[j]) ?? 0) + 1);
          });
        }
      }),
    );
    const ms = Date.now() - started;
    trues = [...hits.values()].reduce((a, b) => a + b, 0);
    for (const [url, n] of hits) assert.equal(n, 1, `${url} was added as new ${n} times`);
    const neverNew = all.length - hits.size;
    assert.ok(neverNew <= ERROR_RATE * all.length, `${neverNew} URLs were never new`);
    console.log(
      `# ${CLIENTS} clients added ${CLIENTS * PER_CLIENT} URLs (${all.length} distinct) in ${ms} ms; ${neverNew} false positives on add`,
    );

    const present = await checkAll(all);
    assert.ok(present.every(Boolean), 'every URL is present');
    const fp = (await checkAll(absent)).filter(Boolean).length;
    assert.ok(fp <= ERROR_RATE * absent.length, `${fp} false positives in ${absent.length}`);
  });

  test('stats per shard and in total', async () => {
    const res = await req('GET', '/v1/filters/crawl');
    assert.equal(res.status, 200);
    const s = res.json;
    assert.equal(s.shards, 4);
    assert.equal(s.perShard.length, 4);
    assert.equal(s.total.count, trues);
    assert.equal(
      s.total.count,
      s.perShard.reduce((a, p) => a + p.count, 0),
    );
    assert.equal(
      s.total.bits,
      s.perShard.reduce((a, p) => a + p.bits, 0),
    );
    for (const p of [s.total, ...s.perShard]) {
      for (const k of ['bits', 'hashes', 'count', 'estimatedCount', 'fillRatio', 'estimatedErrorRate']) {
        assert.equal(typeof p[k], 'number', `${k} in ${JSON.stringify(p)}`);
      }
    }
    assert.ok(Math.abs(s.total.estimatedCount - all.length) < 0.02 * all.length);
    assert.ok(s.total.estimatedErrorRate < ERROR_RATE);
    // Each shard got about a quarter of the keys.
    for (const p of s.perShard) assert.ok(Math.abs(p.count - all.length / 4) < 0.05 * all.length, JSON.stringify(p));
    statsBefore = s;
  });

  test('after a restart on the same state: every URL present, stats unchanged', async () => {
    await w.dispose();
    w = undefined;
    w = await startWorker(out, state);
    const present = await checkAll(all);
    assert.ok(present.every(Boolean), 'every URL is present after the restart');
    assert.deepEqual((await req('GET', '/v1/filters/crawl')).json, statsBefore);
  });

  test('the sharded snapshot answers alike in the service, Go and the npm module', async () => {
    const res = await req('GET', '/v1/filters/crawl/snapshot');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('X-Edgebloom-Format'), 'sharded');
    assert.equal(res.headers.get('Content-Type'), 'application/octet-stream');
    const keys = [...all, ...absent];
    const service = [...(await checkAll(all)), ...(await checkAll(absent))];
    const js = loadSnapshot(res.bytes);
    assert.equal(js.shards, 4);
    const npm = keys.map((k) => js.has(k));
    js.free();
    const go = goAnswers(res.bytes, keys);
    assert.ok(npm.slice(0, all.length).every(Boolean), 'npm module: every URL present');
    assert.ok(go.slice(0, all.length).every(Boolean), 'Go: every URL present');
    assert.deepEqual(npm, service, 'npm module and service agree on every key');
    assert.deepEqual(go, service, 'Go and service agree on every key');
  });

  test('a one-shard snapshot is the plain format', async () => {
    assert.equal((await req('PUT', '/v1/filters/plain', { capacity: 5000, errorRate: 0.001 })).status, 201);
    const keys = all.slice(0, 3000);
    await req('POST', '/v1/filters/plain/add', { keys });
    const res = await req('GET', '/v1/filters/plain/snapshot');
    assert.equal(res.headers.get('X-Edgebloom-Format'), 'filter');
    const f = edgebloom.BloomFilter.fromBytes(res.bytes);
    assert.ok(keys.every((k) => f.has(k)));
    assert.equal(f.count, (await req('GET', '/v1/filters/plain')).json.total.count);
    f.free();
    assert.ok(goAnswers(res.bytes, keys).every(Boolean));
  });

  test('DELETE answers 204, then the filter is gone; made again it starts empty', async () => {
    const res = await req('DELETE', '/v1/filters/crawl');
    assert.equal(res.status, 204);
    assert.equal(res.bytes.length, 0);
    await expectError(req('GET', '/v1/filters/crawl'), 404, 'not_found');
    await expectError(req('POST', '/v1/filters/crawl/check', { keys: ['x'] }), 404, 'not_found');
    assert.equal(
      (await req('PUT', '/v1/filters/crawl', { capacity: 100_000, errorRate: ERROR_RATE, shards: 4 })).status,
      201,
    );
    const present = await checkAll(all.slice(0, 2000));
    assert.ok(present.filter(Boolean).length <= 2000 * ERROR_RATE);
  });
});

describe('chunked persistence', () => {
  // 1 000 000 keys at 1%: 9 585 059 bits, a 1.2 MB payload in 2 chunks.
  const params = { capacity: 1_000_000, errorRate: 0.01, shards: 1 };
  const object = 'shard:big:0';

  test('an add writes one log row of the bits it set; compaction writes the chunks they fall in', async () => {
    assert.equal((await req('PUT', '/v1/filters/big', params)).status, 201);
    const local = new edgebloom.BloomFilter({ capacity: params.capacity, errorRate: params.errorRate });
    const info = async () => (await w.hook(object, '/_test/info')).json;
    await req('POST', '/v1/filters/big/add', { keys: ['warm-up'] });
    local.add('warm-up');
    const first = await info();
    assert.deepEqual(
      first.chunks.map((c) => c.i),
      [-1, 0, 1],
    );
    assert.ok(first.chunks.every((c) => c.bytes <= 1 << 20));
    assert.deepEqual(
      first.log.map((r) => r.bytes),
      [8 + 4 * local.hashes],
      'one row: the count and 7 positions',
    );
    assert.equal((await w.hook(object, '/_test/compact', {})).status, 200);
    const info0 = await info();
    assert.equal(info0.log.length, 0);
    const touched = new Set();
    for (const key of ['https://a.example/1', 'https://b.example/2', 'https://c.example/3']) {
      const { changed } = local.addManyChanges([key]);
      for (const p of changed) touched.add(Math.floor(p / 8 / (1 << 20)));
      const a = await info();
      assert.deepEqual((await req('POST', '/v1/filters/big/add', { keys: [key] })).json, { added: [true] });
      const b = await info();
      assert.equal(b.chunkWrites, a.chunkWrites, 'an add writes no chunk');
      assert.equal(b.logWrites - a.logWrites, 1);
      assert.equal(
        b.bytesWritten - a.bytesWritten,
        8 + 4 * changed.length,
        `${key}: the bytes written are its positions`,
      );
      // Adding it again changes nothing and writes nothing.
      assert.deepEqual((await req('POST', '/v1/filters/big/add', { keys: [key] })).json, { added: [false] });
      assert.equal((await info()).bytesWritten, b.bytesWritten);
    }
    // Loaded from the chunks and the log: the same answers.
    assert.equal((await w.hook(object, '/_test/evict', {})).status, 204);
    let res = await req('POST', '/v1/filters/big/check', { keys: ['warm-up', 'https://b.example/2', 'nope'] });
    assert.deepEqual(res.json, { present: [true, true, false] });
    const a = await info();
    assert.equal(a.log.length, 3);
    assert.equal((await w.hook(object, '/_test/compact', {})).status, 200);
    const b = await info();
    assert.equal(b.log.length, 0);
    assert.equal(b.chunkWrites - a.chunkWrites, 1 + touched.size, `the header chunk and chunks ${[...touched]}`);
    for (const c of b.chunks) {
      const old = a.chunks.find((o) => o.i === c.i);
      if (c.i !== -1 && !touched.has(c.i)) assert.equal(c.crc, old.crc, `chunk ${c.i} unchanged`);
    }
    // The snapshot is the filter the npm module built from the same adds.
    const snap = await req('GET', '/v1/filters/big/snapshot');
    assert.deepEqual(snap.bytes, local.toBytes());
    local.free();
    assert.equal((await w.hook(object, '/_test/evict', {})).status, 204);
    res = await req('POST', '/v1/filters/big/check', { keys: ['warm-up', 'https://b.example/2', 'nope'] });
    assert.deepEqual(res.json, { present: [true, true, false] });
  });

  test('a log row that fails its CRC makes the shard answer 500 shard_corrupt', async () => {
    await req('POST', '/v1/filters/big/add', { keys: ['logged'] });
    const { log } = (await w.hook(object, '/_test/info')).json;
    assert.equal((await w.hook(object, '/_test/corrupt', { log: log[0].seq })).status, 204);
    const res = await expectError(req('POST', '/v1/filters/big/check', { keys: ['warm-up'] }), 500, 'shard_corrupt');
    assert.match(res.json.error.message, /log row \d+ failed its CRC-32 check/);
    assert.equal((await req('DELETE', '/v1/filters/big')).status, 204);
    assert.equal((await req('PUT', '/v1/filters/big', params)).status, 201);
    await req('POST', '/v1/filters/big/add', { keys: ['warm-up'] });
  });

  test('a chunk that fails its CRC makes the shard answer 500 shard_corrupt', async () => {
    assert.equal((await w.hook(object, '/_test/corrupt', { chunk: 1 })).status, 204);
    const res = await expectError(req('POST', '/v1/filters/big/check', { keys: ['warm-up'] }), 500, 'shard_corrupt');
    assert.match(res.json.error.message, /chunk 1 failed its CRC-32 check/);
    assert.match(res.json.error.message, /stored bytes are damaged/);
    await expectError(req('POST', '/v1/filters/big/add', { keys: ['x'] }), 500, 'shard_corrupt');
    await expectError(req('GET', '/v1/filters/big'), 500, 'shard_corrupt');
    await expectError(req('GET', '/v1/filters/big/snapshot'), 500, 'shard_corrupt');
  });

  test('a chunk with a matching CRC but wrong bytes fails the filter checksum', async () => {
    assert.equal((await req('DELETE', '/v1/filters/big')).status, 204);
    assert.equal((await req('PUT', '/v1/filters/big', params)).status, 201);
    await req('POST', '/v1/filters/big/add', { keys: ['a', 'b'] });
    assert.equal((await w.hook(object, '/_test/corrupt', { chunk: 0, fixCrc: true })).status, 204);
    const res = await expectError(req('POST', '/v1/filters/big/check', { keys: ['a'] }), 500, 'shard_corrupt');
    assert.match(res.json.error.message, /ERR_CHECKSUM/);
    // DELETE still works on a corrupt shard, and the name can be used again.
    assert.equal((await req('DELETE', '/v1/filters/big')).status, 204);
    assert.equal((await req('PUT', '/v1/filters/big', params)).status, 201);
    assert.deepEqual((await req('POST', '/v1/filters/big/add', { keys: ['a'] })).json, { added: [true] });
  });
});

test('"canonicalize": true keys spellings of one URL once, the way canonicalURL does, and names a bad key', async () => {
  const params = { capacity: 1000, errorRate: 0.01, shards: 2, canonicalize: true };
  const created = await req('PUT', '/v1/filters/canon', params);
  assert.equal(created.status, 201);
  assert.equal(created.json.canonicalize, true);
  await expectError(req('PUT', '/v1/filters/canon', { ...params, canonicalize: false }), 409, 'conflict');
  const spellings = [
    'https://例子.测试/新闻?id=1&utm_source=x',
    'HTTPS://xn--fsqu00a.xn--0zwm56d:443/%E6%96%B0%E9%97%BB?id=1#top',
    'https://user@例子.测试/a/../新闻?id=1&fbclid=2',
  ];
  assert.deepEqual((await req('POST', '/v1/filters/canon/add', { keys: spellings })).json, {
    added: [true, false, false],
  });
  // The Go front and the npm module agree on the key.
  const key = edgebloom.canonicalURL(spellings[0]);
  const check = await req('POST', '/v1/filters/canon/check', { keys: [key, 'https://例子.测试/新闻?id=2'] });
  assert.deepEqual(check.json, { present: [true, false] });
  const bad = await expectError(
    req('POST', '/v1/filters/canon/add', { keys: ['https://a.example/', 'ftp://b.example/'] }),
    400,
    'invalid_url',
  );
  assert.equal(bad.json.error.index, 1);
  assert.match(bad.json.error.message, /^key 1: urlkey: /);
  assert.equal((await req('GET', '/v1/filters/canon')).json.total.count, 1);
  assert.equal((await req('DELETE', '/v1/filters/canon')).status, 204);
});

test("a shard whose log write fails gives its filter's memory back to the engine, and answers right after", async () => {
  const params = { capacity: 50_000, errorRate: 0.01 };
  assert.equal((await req('PUT', '/v1/filters/logfail', params)).status, 201);
  const first = Array.from({ length: 200 }, (_, i) => `https://logfail.example/${i}`);
  assert.equal((await req('POST', '/v1/filters/logfail/add', { keys: first })).status, 200);
  const used = async () => (await w.hook('shard:logfail:0', '/_test/counters')).json.memoryBudget.used;
  const before = await used();
  assert.equal((await w.hook('shard:logfail:0', '/_test/fail-next-log', {})).status, 204);
  const failed = await req('POST', '/v1/filters/logfail/add', { keys: ['https://logfail.example/lost'] });
  assert.equal(failed.status, 500, JSON.stringify(failed.json));
  const checked = await req('POST', '/v1/filters/logfail/check', { keys: [...first, 'https://logfail.example/lost'] });
  assert.deepEqual(checked.json.present, [...first.map(() => true), false], 'what storage holds, not the failed add');
  // Reloaded from storage: the engine holds one copy of the shard, as
  // before the failure, not the dropped one besides.
  assert.equal(await used(), before);
  assert.equal((await req('DELETE', '/v1/filters/logfail')).status, 204);
});

describe('a shard whose engine stopped', () => {
  // The wasm engine is one per isolate: the test hook stops it the way a Go
  // panic outside recover (or the runtime aborting) does, so every filter
  // of every shard in the isolate is gone at once. Storage is intact.
  const params = { capacity: 20_000, errorRate: 0.01, shards: 2 };
  const keys = Array.from({ length: 3000 }, (_, i) => `https://heal.example/${i}`);
  const later = Array.from({ length: 500 }, (_, i) => `https://heal.example/later/${i}`);
  let count;
  let logFrom;

  const restarts = async (sh) => (await w.hook(`shard:heal:${sh}`, '/_test/info')).json.engineRestarts;
  const crash = async () => assert.equal((await w.hook('shard:heal:0', '/_test/crash', {})).status, 204);
  const presentAll = async (ks) => {
    const res = await req('POST', '/v1/filters/heal/check', { keys: ks });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    return res.json.present.every(Boolean);
  };

  test('the next request reloads every shard from storage and succeeds', async () => {
    logFrom = w.log().length;
    assert.equal((await req('PUT', '/v1/filters/heal', params)).status, 201);
    const added = await req('POST', '/v1/filters/heal/add', { keys });
    assert.equal(added.status, 200);
    count = added.json.added.filter(Boolean).length;
    assert.equal(await restarts(0), 0);
    await crash();
    assert.ok(await presentAll(keys), 'every acknowledged key is present after the reload');
    // Both shards met the stopped engine (one isolate, one engine) and
    // reloaded; neither claims its storage is damaged.
    assert.equal(await restarts(0), 1);
    assert.equal(await restarts(1), 1);
    assert.equal((await req('GET', '/v1/filters/heal')).json.total.count, count);
  });

  test('an add as the first request after the stop is applied and persisted once', async () => {
    await crash();
    const added = await req('POST', '/v1/filters/heal/add', { keys: [...later, keys[0]] });
    assert.equal(added.status, 200, JSON.stringify(added.json));
    assert.equal(added.json.added.at(-1), false, 'a key added before the stop is still there');
    count += added.json.added.filter(Boolean).length;
    assert.ok(added.json.added.slice(0, -1).filter(Boolean).length >= later.length - 5);
    // Reloaded from storage once more, the add is there.
    for (const sh of [0, 1]) assert.equal((await w.hook(`shard:heal:${sh}`, '/_test/evict', {})).status, 204);
    assert.ok(await presentAll([...keys, ...later]));
    assert.equal((await req('GET', '/v1/filters/heal')).json.total.count, count);
  });

  test('stats and snapshots after a stop', async () => {
    await crash();
    const stats = await req('GET', '/v1/filters/heal');
    assert.equal(stats.status, 200, JSON.stringify(stats.json));
    assert.equal(stats.json.total.count, count);
    await crash();
    const snap = await req('GET', '/v1/filters/heal/snapshot');
    assert.equal(snap.status, 200);
    const js = loadSnapshot(snap.bytes);
    assert.ok([...keys, ...later].every((k) => js.has(k)));
    js.free();
    assert.doesNotMatch(w.log().slice(logFrom), /shard_corrupt|damaged/);
    assert.match(w.log().slice(logFrom), /reloading the shard from storage/);
  });
});

// protocolMatch reports whether got is want, where "<string>" and
// "<number>" in want stand for any string or number (test/protocol.json).
function protocolMatch(want, got) {
  if (want === '<string>') return typeof got === 'string';
  if (want === '<number>') return typeof got === 'number';
  if (Array.isArray(want))
    return Array.isArray(got) && got.length === want.length && want.every((w, i) => protocolMatch(w, got[i]));
  if (want !== null && typeof want === 'object') {
    if (got === null || typeof got !== 'object' || Array.isArray(got)) return false;
    const keys = Object.keys(want);
    return Object.keys(got).length === keys.length && keys.every((k) => k in got && protocolMatch(want[k], got[k]));
  }
  return want === got;
}

test('the internal protocol: shard.js answers test/protocol.json as memory.go does (protocol_test.go)', async () => {
  const { steps } = JSON.parse(readFileSync(join(WORKER_DIR, 'test', 'protocol.json'), 'utf8'));
  assert.ok(steps.length >= 20, `${steps.length} steps`);
  const generations = new Map(); // each step's answer's generation
  for (const [i, s] of steps.entries()) {
    const what = `step ${i} (${s.name})`;
    const headers = s.shard ? { 'X-Edgebloom-Shard': JSON.stringify(s.shard) } : {};
    if (s.count !== undefined) headers['X-Edgebloom-Count'] = String(s.count);
    const positions = s.positions && new Uint8Array(Uint32Array.from(s.positions).buffer); // little-endian here
    const body = positions ?? s.bodyText ?? (s.body === undefined ? undefined : JSON.stringify(s.body));
    const res = await w.object(s.object, s.method, s.path, { headers, body });
    assert.equal(res.status, s.want.status, `${what}: ${res.text}`);
    if (s.want.error) {
      assert.equal(res.json?.error?.code, s.want.error, `${what}: ${res.text}`);
      assert.ok(res.json.error.message.length > 0, what);
    } else if (s.want.json !== undefined) {
      assert.ok(protocolMatch(s.want.json, res.json), `${what}: ${res.text}; want ${JSON.stringify(s.want.json)}`);
      generations.set(s.name, res.json.generation);
      if (s.want.laterThan) {
        const before = generations.get(s.want.laterThan);
        assert.ok(res.json.generation > before, `${what}: generation ${res.json.generation}, not after ${before}`);
      }
      if (s.want.cleanupOf) {
        const of = generations.get(s.want.cleanupOf);
        assert.equal(
          res.json.cleanup?.generation,
          of,
          `${what}: the clean-up's generation; want step "${s.want.cleanupOf}"'s`,
        );
      }
    } else if (s.want.snapshotOf) {
      const { capacity, errorRate, keys } = s.want.snapshotOf;
      const f = new edgebloom.BloomFilter({ capacity, errorRate });
      for (const k of keys) f.add(k);
      assert.deepEqual(res.bytes, f.toBytes(), `${what}: the encoding of a filter of ${keys.length} keys`);
      f.free();
    } else if (s.want.results) {
      // One hex digit for every four answers, answer 4i+j in bit 1<<j of
      // digit i, and no body.
      const hex = res.headers.get('X-Edgebloom-Results');
      assert.match(hex ?? '', /^[0-9a-f]*$/, `${what}: X-Edgebloom-Results ${hex}`);
      const bits = [...hex].flatMap((d) => [1, 2, 4, 8].map((b) => (parseInt(d, 16) & b) !== 0));
      assert.deepEqual(bits, [...s.want.results, ...Array((4 - (s.want.results.length % 4)) % 4).fill(false)], what);
      assert.equal(res.bytes.length, 0, `${what}: no body`);
    } else if (s.want.empty) {
      assert.equal(res.bytes.length, 0, what);
    } else {
      assert.fail(`${what} wants nothing`);
    }
  }
});
