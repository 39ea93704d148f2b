// Scoped tokens and CORS in workerd (Miniflare), as "wrangler deploy"
// builds the Worker: tokens made by POST /v1/tokens and offline by the CLI
// (cmd/edgebloom, from the same secret), a matrix of bad and tampered tokens
// against every endpoint, each refused with its own code; a read token
// changes nothing; each token has one spelling and none outlives the
// 366-day cap; a body has one reading (no duplicate or differently cased
// names); preflights answered without a credential, and CORS headers only
// on the read methods' answers; a Content-Length that gives no length or
// one over the limit refused before the body is read; a rotation with
// EDGEBLOOM_TOKEN_PREVIOUS read from the Worker's environment; and dev.sh
// (npm run worker:dev) passing both settings from its environment.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildWorker, startDev, startWorker, TOKEN, WORKER_DIR } from '../../testkit/worker.js';
import { readRequestBody } from '../front/front.js';

const ORIGIN = 'https://app.example';
let dir;
let cli;
let w;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'edgebloom-tokens-'));
  buildWorker(join(dir, 'bundle'));
  cli = join(dir, 'edgebloom');
  execFileSync('go', ['build', '-o', cli, '.'], { cwd: join(WORKER_DIR, '..', 'cmd', 'edgebloom'), stdio: 'inherit' });
});

after(async () => {
  await w?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A token made offline by the CLI from secret. */
function cliToken(secret, scope, filter, expiresIn) {
  const out = execFileSync(cli, ['token', '--json', '--scope', scope, '--filter', filter, '--expires-in', expiresIn], {
    env: { ...process.env, EDGEBLOOM_TOKEN: secret },
  });
  return JSON.parse(out).token;
}

async function mint(request, scope, filter, expiresIn, token) {
  const res = await request('POST', '/v1/tokens', { scope, filter, expiresIn }, { token });
  assert.equal(res.status, 200, JSON.stringify(res.json));
  return res.json;
}

/**
 * A token of any payload signed with secret, as the format says (token.go):
 * what only a bug of the service, or a holder of the secret, could make.
 */
function signed(secret, payload) {
  const key = createHmac('sha256', secret).update('edgebloom token signing key v1').digest();
  const body = `eb1.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
  return `${body}.${createHmac('sha256', key).update(body).digest('base64url')}`;
}

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
/** tok with the 2 spare bits of its signature's last character set to bits. */
const respelled = (tok, bits) => tok.slice(0, -1) + B64URL[(B64URL.indexOf(tok.at(-1)) & ~3) | bits];

const keys = (prefix, n) => Array.from({ length: n }, (_, i) => `https://${prefix}.example/${i}`);
const filters = ['crawl', 'crawl-2026', 'other'];
// Every endpoint on a filter, with the scopes that allow it.
const endpoints = [
  { method: 'GET', path: '', allowed: ['read'] },
  { method: 'POST', path: '/check', body: { keys: ['https://new.example/'] }, allowed: ['read', 'write'] },
  { method: 'GET', path: '/snapshot', allowed: ['read'] },
  { method: 'GET', path: '/changes', allowed: ['read'] },
  { method: 'POST', path: '/add', body: { keys: ['https://new.example/'] }, allowed: ['write'] },
  { method: 'PUT', path: '', body: { capacity: 1000, errorRate: 0.01, shards: 2 }, allowed: [] },
  { method: 'DELETE', path: '', allowed: [] },
];
const matches = (pattern, name) => (pattern.endsWith('*') ? name.startsWith(pattern.slice(0, -1)) : name === pattern);

test('tokens: a matrix of bad, tampered and scoped tokens against every endpoint', { timeout: 300_000 }, async () => {
  w = await startWorker(join(dir, 'bundle'), join(dir, 'state'), {
    bindings: { EDGEBLOOM_ALLOWED_ORIGINS: ORIGIN },
  });
  const req = w.request;
  for (const f of filters) {
    assert.equal((await req('PUT', `/v1/filters/${f}`, { capacity: 1000, errorRate: 0.01, shards: 2 })).status, 201);
    assert.equal((await req('POST', `/v1/filters/${f}/add`, { keys: keys(f, 50) })).status, 200);
  }
  const snapshots = async () =>
    Object.fromEntries(
      await Promise.all(filters.map(async (f) => [f, [...(await req('GET', `/v1/filters/${f}/snapshot`)).bytes]])),
    );
  const before = await snapshots();

  const readCrawl = (await mint(req, 'read', 'crawl', 3600)).token;
  const [prefix, body64, sig64] = readCrawl.split('.');
  const payload = JSON.parse(Buffer.from(body64, 'base64url').toString());
  const reSigned = (p) => `${prefix}.${Buffer.from(JSON.stringify(p)).toString('base64url')}.${sig64}`;
  const flipped = readCrawl.slice(0, -3) + (readCrawl.at(-3) === 'A' ? 'B' : 'A') + readCrawl.slice(-2);
  // A token of one second, waited out (on the clock, with a deadline).
  const short = await mint(req, 'read', 'crawl', 1);
  while (Date.now() < Date.parse(short.expires) + 1000) await new Promise((r) => setTimeout(r, 100));
  // A token whose signature holds a "-" or "_", for its spelling in the
  // standard alphabet (3 in 4 do).
  let dashed;
  for (let i = 0; !dashed; i++) {
    const t = (await mint(req, 'read', 'crawl', 3600 + i)).token;
    if (/[-_]/.test(t.split('.')[2])) dashed = t;
  }
  const now = Math.floor(Date.now() / 1000);
  const YEAR = 366 * 86400;

  const refused = [
    ['no credential', null, 401, 'unauthorized'],
    ['a wrong secret', `${TOKEN}x`, 401, 'unauthorized'],
    ['expired', short.token, 401, 'token_expired'],
    ['made by the CLI with another secret', cliToken('another-secret', 'write', '*', '1h'), 401, 'token_bad_signature'],
    ['scope changed to write', reSigned({ ...payload, scope: 'write' }), 401, 'token_bad_signature'],
    ['filter changed to every filter', reSigned({ ...payload, filter: '*' }), 401, 'token_bad_signature'],
    ['expiry moved a year on', reSigned({ ...payload, exp: payload.exp + 31_536_000 }), 401, 'token_bad_signature'],
    ['a character of the signature changed', flipped, 401, 'token_bad_signature'],
    ['no signature', `${prefix}.${body64}`, 401, 'token_malformed'],
    ['not base64url', `${prefix}.${body64}.${sig64.slice(0, -1)}+`, 401, 'token_malformed'],
    ['too long', `${prefix}.${'A'.repeat(600)}.${sig64}`, 401, 'token_malformed'],
    // One spelling: the signature's 32 bytes take 43 characters, whose last
    // carries 2 bits that encode nothing.
    ...[0, 1, 2, 3]
      .map((bits) => respelled(readCrawl, bits))
      .filter((t) => t !== readCrawl)
      .map((t, i) => [`another spelling of the signature (${i + 1} of 3)`, t, 401, 'token_malformed']),
    ['the signature padded', `${readCrawl}=`, 401, 'token_malformed'],
    ['the standard alphabet', dashed.replace(/[-_]/g, (c) => (c === '-' ? '+' : '/')), 401, 'token_malformed'],
    // The 366-day cap and the format's limits, checked as the token is.
    [
      'signed for 366 days and 10 minutes',
      signed(TOKEN, { ...payload, exp: now + YEAR + 600 }),
      401,
      'token_malformed',
    ],
    ['signed for 2^62 s', signed(TOKEN, { scope: 'write', filter: '*', exp: 2 ** 62 }), 401, 'token_malformed'],
    ['signed until 9999', signed(TOKEN, { scope: 'write', filter: '*', exp: 253402300799 }), 401, 'token_malformed'],
  ];
  assert.equal(refused.filter(([name]) => name.startsWith('another spelling')).length, 3);
  assert.equal(
    (await req('GET', '/v1/filters/crawl', undefined, { token: signed(TOKEN, { ...payload, exp: now + YEAR }) }))
      .status,
    200,
    'a token signed for 366 days',
  );
  const requests = [{ method: 'POST', path: '/v1/tokens', body: { scope: 'write', filter: '*', expiresIn: 60 } }];
  for (const f of filters)
    for (const e of endpoints) requests.push({ method: e.method, path: `/v1/filters/${f}${e.path}`, body: e.body });
  for (const [name, token, status, code] of refused) {
    for (const r of requests) {
      const res = await req(r.method, r.path, r.body, { token });
      assert.deepEqual(
        [res.status, res.json?.error?.code],
        [status, code],
        `${name}: ${r.method} ${r.path}: ${JSON.stringify(res.json)}`,
      );
    }
  }

  const scoped = [
    ['read crawl (POST /v1/tokens)', readCrawl, 'read', 'crawl'],
    ['read crawl* (the CLI)', cliToken(TOKEN, 'read', 'crawl*', '1h'), 'read', 'crawl*'],
    ['write crawl (the CLI)', cliToken(TOKEN, 'write', 'crawl', '30d'), 'write', 'crawl'],
    ['write crawl-* (POST /v1/tokens)', (await mint(req, 'write', 'crawl-*', 600)).token, 'write', 'crawl-*'],
  ];
  for (const [name, token, scope, pattern] of scoped) {
    for (const f of filters) {
      for (const e of endpoints) {
        const res = await req(e.method, `/v1/filters/${f}${e.path}`, e.body, { token });
        let want = [200, undefined];
        if (!matches(pattern, f)) want = [403, 'token_other_filter'];
        else if (!e.allowed.includes(scope)) want = [403, 'token_not_allowed'];
        assert.deepEqual(
          [res.status, res.json?.error?.code],
          want,
          `${name}: ${e.method} ${f}${e.path}: ${JSON.stringify(res.json)}`,
        );
      }
    }
    const res = await req('POST', '/v1/tokens', { scope: 'read', filter: 'crawl', expiresIn: 60 }, { token });
    assert.deepEqual([res.status, res.json.error.code], [403, 'token_not_allowed'], `${name} makes a token`);
    if (scope === 'read') assert.deepEqual(await snapshots(), before, `${name} changed a filter`);
  }
  // One reading of every body: a name twice, or in another case, is 400
  // naming it, for every credential that may send the body; nothing of
  // what it asks is done.
  const [, writeCrawl] = scoped.find(([name]) => name.startsWith('write crawl ('));
  const twoReadings = [
    [TOKEN, 'POST', '/v1/tokens', '{"scope":"read","scope":"write","filter":"crawl","expiresIn":60}', 'scope'],
    [TOKEN, 'POST', '/v1/tokens', '{"scope":"read","filter":"crawl","FILTER":"*","expiresIn":60}', 'FILTER'],
    [TOKEN, 'POST', '/v1/tokens', '{"Scope":"write","filter":"crawl","expiresIn":60}', 'Scope'],
    [TOKEN, 'POST', '/v1/tokens', '{"scope":"read","filter":"crawl","expiresIn":60,"expiresIn":99999999}', 'expiresIn'],
    ...[TOKEN, writeCrawl].flatMap((t) => [
      [t, 'POST', '/v1/filters/crawl/add', '{"KEYS":["https://twice.example/"]}', 'KEYS'],
      [t, 'POST', '/v1/filters/crawl/add', '{"keys":[],"keys":["https://twice.example/"]}', 'keys'],
      [t, 'POST', '/v1/filters/crawl/add', '{"keys":[],"ke\\u0079s":["https://twice.example/"]}', 'keys'],
    ]),
    ...[TOKEN, readCrawl, writeCrawl].map((t) => [
      t,
      'POST',
      '/v1/filters/crawl/check',
      '{"keys":["a"],"Keys":["b"]}',
      'Keys',
    ]),
    [TOKEN, 'PUT', '/v1/filters/twice', '{"capacity":1000,"errorRate":0.01,"capacity":5}', 'capacity'],
    [TOKEN, 'PUT', '/v1/filters/twice', '{"capacity":1000,"errorRate":0.01,"Shards":64}', 'Shards'],
  ];
  for (const [token, method, path, raw, field] of twoReadings) {
    const res = await req(method, path, undefined, { token, raw });
    assert.deepEqual([res.status, res.json?.error?.code], [400, 'invalid_json'], `${method} ${path} ${raw}`);
    assert.ok(res.json.error.message.includes(`"${field}"`), `${raw}: ${res.json.error.message} names "${field}"`);
  }
  assert.equal((await req('GET', '/v1/filters/twice')).status, 404, 'a refused PUT made its filter');
  assert.deepEqual((await req('POST', '/v1/filters/crawl/check', { keys: ['https://twice.example/'] })).json, {
    present: [false],
  });

  // The write tokens added their key where they were allowed, and only there.
  for (const [f, want] of [
    ['crawl', true],
    ['crawl-2026', true],
    ['other', false],
  ]) {
    const res = await req('POST', `/v1/filters/${f}/check`, { keys: ['https://new.example/'] });
    assert.deepEqual(res.json.present, [want], f);
  }
});

test('CORS: preflights without a credential, headers exposed, only from the allowed origins', async () => {
  const req = w.request;
  const read = (await mint(req, 'read', 'crawl', 600)).token;
  const preflight = (origin, method, path) =>
    req('OPTIONS', path, undefined, {
      token: null,
      headers: {
        Origin: origin,
        'Access-Control-Request-Method': method,
        'Access-Control-Request-Headers': 'authorization',
      },
    });
  for (const [method, path] of [
    ['GET', '/v1/filters/crawl/changes'],
    ['GET', '/v1/filters/crawl/snapshot'],
    ['GET', '/v1/filters/crawl'],
    ['POST', '/v1/filters/crawl/check'],
  ]) {
    const res = await preflight(ORIGIN, method, path);
    assert.equal(res.status, 204, `${method} ${path}`);
    assert.equal(res.headers.get('Access-Control-Allow-Origin'), ORIGIN);
    assert.equal(res.headers.get('Access-Control-Allow-Methods'), method);
    assert.match(res.headers.get('Access-Control-Allow-Headers'), /Authorization/);
    assert.equal(res.headers.get('Vary'), 'Origin');
  }
  for (const [origin, method, path] of [
    ['https://evil.example', 'GET', '/v1/filters/crawl/changes'],
    [ORIGIN, 'POST', '/v1/filters/crawl/add'],
    [ORIGIN, 'DELETE', '/v1/filters/crawl'],
    [ORIGIN, 'PUT', '/v1/filters/crawl'],
    [ORIGIN, 'POST', '/v1/tokens'],
  ]) {
    const res = await preflight(origin, method, path);
    assert.equal(res.status, 403, `${origin} ${method} ${path}`);
    assert.equal(res.json.error.code, 'cors_not_allowed');
    assert.equal(res.headers.get('Access-Control-Allow-Origin'), null);
  }

  const res = await req('GET', '/v1/filters/crawl/changes', undefined, { token: read, headers: { Origin: ORIGIN } });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('Access-Control-Allow-Origin'), ORIGIN);
  const exposed = res.headers.get('Access-Control-Expose-Headers').split(', ');
  for (const [name] of res.headers) {
    if (name.startsWith('x-edgebloom-'))
      assert.ok(
        exposed.some((e) => e.toLowerCase() === name),
        `${name} not exposed`,
      );
  }
  assert.ok(exposed.includes('X-Edgebloom-Cursor') && exposed.includes('X-Edgebloom-Format'), exposed.join());
  const denied = await req('GET', '/v1/filters/other/changes', undefined, { token: read, headers: { Origin: ORIGIN } });
  assert.equal(denied.status, 403);
  assert.equal(denied.headers.get('Access-Control-Allow-Origin'), ORIGIN, 'a page can read why it was refused');

  // A write's answer carries no CORS header, though PUT and DELETE share
  // their path with a read, whatever the answer is.
  assert.equal((await req('PUT', '/v1/filters/cors-gone', { capacity: 1000, errorRate: 0.01 })).status, 201);
  for (const [method, path, body, status] of [
    ['PUT', '/v1/filters/crawl', { capacity: 1000, errorRate: 0.01, shards: 2 }, 200],
    ['PUT', '/v1/filters/crawl', { capacity: 5 }, 400],
    ['DELETE', '/v1/filters/cors-gone', undefined, 204],
    ['DELETE', '/v1/filters/cors-gone', undefined, 404],
    ['POST', '/v1/filters/crawl/add', { keys: ['https://cors.example/'] }, 200],
    ['POST', '/v1/tokens', { scope: 'read', filter: 'crawl', expiresIn: 60 }, 200],
  ]) {
    const res = await req(method, path, body, { headers: { Origin: ORIGIN } });
    assert.deepEqual(
      [res.status, res.headers.get('Access-Control-Allow-Origin'), res.headers.get('Access-Control-Expose-Headers')],
      [status, null, null],
      `${method} ${path} from ${ORIGIN}`,
    );
  }
});

test(
  'request bodies: a Content-Length that gives no length, or one over the limit, is refused unread',
  { timeout: 120_000 },
  async () => {
    const LIMIT = 1 << 20;
    // What the front's JS reads of a body before Go sees it (front.js).
    const stream = (total) => {
      const s = { pulled: 0, cancelled: false };
      s.body = new ReadableStream({
        pull(c) {
          if (s.pulled >= total) return c.close();
          c.enqueue(new Uint8Array(64 << 10).fill(32));
          s.pulled += 64 << 10;
        },
        cancel() {
          s.cancelled = true;
        },
      });
      return s;
    };
    const request = (contentLength, s) => ({
      body: s.body,
      headers: new Headers(contentLength === undefined ? {} : { 'Content-Length': contentLength }),
      arrayBuffer: () => new Response(s.body).arrayBuffer(),
    });
    for (const cl of ['', ' ', '-1', '-0', 'abc', '1e3', '12, 12', String(LIMIT + 1), '99999999999999999999']) {
      const s = stream(50 << 20);
      assert.equal(await readRequestBody(request(cl, s), LIMIT), null, `Content-Length ${JSON.stringify(cl)}`);
      assert.deepEqual([s.pulled <= 64 << 10, s.cancelled], [true, true], `Content-Length ${JSON.stringify(cl)}`);
    }
    const over = stream(50 << 20);
    const got = await readRequestBody(request(undefined, over), LIMIT);
    assert.ok(got.byteLength > LIMIT && over.pulled < 2 * LIMIT && over.cancelled, 'no Content-Length, 50 MiB');
    const small = stream(100);
    assert.equal((await readRequestBody(request(String(64 << 10), small), LIMIT)).byteLength, 64 << 10);
    assert.equal(small.cancelled, false);

    // In workerd: a body over the limit is refused with the service's error
    // JSON, and the front keeps working. (A client that goes on sending a
    // body the front does not read may find its connection reset, as with
    // any server that answers before the body ends.)
    const body = JSON.stringify({ keys: Array.from({ length: 200 }, (_, i) => `${i}`.padEnd(6000, 'x')) });
    const big = await w.request('POST', '/v1/filters/crawl/add', undefined, { raw: body });
    assert.deepEqual([big.status, big.json?.error?.code], [413, 'body_too_large']);
    const ok = await w.request('POST', '/v1/filters/crawl/check', { keys: ['https://new.example/'] });
    assert.deepEqual(ok.json, { present: [true] });
  },
);

test('rotation: the previous secret and its tokens work while EDGEBLOOM_TOKEN_PREVIOUS holds it', async () => {
  const oldRead = (await mint(w.request, 'read', 'crawl', 3600)).token;
  const oldWrite = cliToken(TOKEN, 'write', 'crawl', '1h');
  await w.dispose();
  const NEW = `${TOKEN}-rotated`;
  w = await startWorker(join(dir, 'bundle'), join(dir, 'state'), {
    bindings: { EDGEBLOOM_TOKEN: NEW, EDGEBLOOM_TOKEN_PREVIOUS: TOKEN },
  });
  const stats = async (token) => {
    const res = await w.request('GET', '/v1/filters/crawl', undefined, { token });
    return [res.status, res.json?.error?.code];
  };
  const newRead = (await mint(w.request, 'read', 'crawl', 3600, NEW)).token;
  for (const token of [TOKEN, NEW, oldRead, newRead]) assert.deepEqual(await stats(token), [200, undefined]);
  assert.equal((await w.request('POST', '/v1/filters/crawl/add', { keys: ['k'] }, { token: oldWrite })).status, 200);

  await w.dispose();
  w = await startWorker(join(dir, 'bundle'), join(dir, 'state'), { bindings: { EDGEBLOOM_TOKEN: NEW } });
  assert.deepEqual(await stats(TOKEN), [401, 'unauthorized']);
  assert.deepEqual(await stats(oldRead), [401, 'token_bad_signature']);
  assert.deepEqual(await stats(newRead), [200, undefined]);
  assert.deepEqual(await stats(NEW), [200, undefined]);
});

test(
  'npm run worker:dev passes EDGEBLOOM_TOKEN_PREVIOUS and EDGEBLOOM_ALLOWED_ORIGINS from the environment',
  { timeout: 300_000 },
  async () => {
    const NEW = `${TOKEN}-dev`;
    // startDev waits for an answer to the previous secret (TOKEN).
    const dev = await startDev(join(dir, 'dev-state'), {
      env: {
        EDGEBLOOM_TOKEN: NEW,
        EDGEBLOOM_TOKEN_PREVIOUS: TOKEN,
        EDGEBLOOM_ALLOWED_ORIGINS: `http://127.0.0.1:1,${ORIGIN}`,
      },
    });
    try {
      const res = await fetch(`${dev.base}/v1/filters/crawl/changes`, {
        method: 'OPTIONS',
        headers: {
          Origin: ORIGIN,
          'Access-Control-Request-Method': 'GET',
          'Access-Control-Request-Headers': 'authorization',
        },
      });
      await res.arrayBuffer();
      assert.equal(res.status, 204);
      assert.equal(res.headers.get('Access-Control-Allow-Origin'), ORIGIN);
      for (const token of [NEW, TOKEN]) {
        assert.equal((await dev.request('GET', '/v1/filters/crawl', undefined, { token })).status, 404);
      }
      assert.equal((await dev.request('GET', '/v1/filters/crawl', undefined, { token: 'other' })).status, 401);
    } finally {
      await dev.stop();
    }
  },
);
