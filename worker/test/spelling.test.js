// One spelling, every error documented (worker/README.md, "Errors"), in
// workerd: a cursor the service cannot have written and one with bits set
// past its last byte are 400 invalid_params, never a shard's message; a
// count or a time in a JSON body is an integer as written; and a malformed
// Content-Length gets, locally, the runtime's own answer before the Worker
// runs, as the README says.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildWorker, startWorker, TOKEN } from '../../testkit/worker.js';

let dir;
let mf;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edgebloom-spelling-'));
  buildWorker(join(dir, 'bundle'));
  mf = await startWorker(join(dir, 'bundle'), join(dir, 'state'), { port: 0 });
});

after(async () => {
  await mf?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

// The cursor token's bytes: a version byte, then unsigned LEB128 varints
// (generation, s, then each shard's epoch and position).
const fromB64 = (s) => Buffer.from(s, 'base64url');
function varints(bytes) {
  const out = [];
  let v = 0n;
  let shift = 0n;
  for (const b of bytes.subarray(1)) {
    v |= BigInt(b & 0x7f) << shift;
    shift += 7n;
    if (b < 0x80) (out.push(v), (v = 0n), (shift = 0n));
  }
  return out;
}
function cursorOf(values) {
  const bytes = [1];
  for (let v of values) {
    for (; v >= 0x80n; v >>= 7n) bytes.push(Number(v & 0x7fn) | 0x80);
    bytes.push(Number(v));
  }
  return Buffer.from(bytes).toString('base64url');
}

test('a cursor the service cannot have written is 400 invalid_params', async () => {
  assert.equal(
    (await mf.request('PUT', '/v1/filters/spell', { capacity: 1000, errorRate: 0.01, shards: 2 })).status,
    201,
  );
  const first = await mf.request('GET', '/v1/filters/spell/changes');
  assert.equal(first.status, 200);
  const cursor = first.headers.get('X-Edgebloom-Cursor');
  const values = varints(fromB64(cursor));
  assert.equal(cursorOf(values), cursor, 'the test codes cursors as the service does');
  const again = await mf.request('GET', `/v1/filters/spell/changes?since=${cursor}`);
  assert.equal(again.status, 200);
  for (const position of [2n ** 53n, 2n ** 64n - 1n]) {
    const forged = [...values];
    forged[forged.length - 1] = position;
    const res = await mf.request('GET', `/v1/filters/spell/changes?since=${cursorOf(forged)}`);
    assert.equal(res.status, 400, JSON.stringify(res.json));
    assert.equal(res.json.error.code, 'invalid_params');
    assert.match(res.json.error.message, /^since must be the X-Edgebloom-Cursor/);
  }
  // The same cursor with a bit set past its last byte: one spelling.
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const short = cursorOf([1n, 1n, 1n, 1n]); // 5 bytes: 7 characters, 2 bits unused
  assert.equal(short.length, 7);
  const trailing = short.slice(0, 6) + alphabet[alphabet.indexOf(short[6]) | 1];
  assert.deepEqual(fromB64(trailing), fromB64(short), "Node's decoder reads both alike");
  const res = await mf.request('GET', `/v1/filters/spell/changes?since=${trailing}`);
  assert.equal(res.status, 400, JSON.stringify(res.json));
  assert.equal(res.json.error.code, 'invalid_params');
});

test('a count or a time in a JSON body is written as an integer', async () => {
  for (const expiresIn of ['1e3', '60.0']) {
    const res = await mf.request('POST', '/v1/tokens', undefined, {
      raw: `{"scope": "read", "filter": "spell", "expiresIn": ${expiresIn}}`,
    });
    assert.equal(res.status, 400, `expiresIn ${expiresIn}: ${JSON.stringify(res.json)}`);
    assert.equal(res.json.error.code, 'invalid_params');
    assert.match(res.json.error.message, /"expiresIn" must be an integer/);
  }
  const ok = await mf.request('POST', '/v1/tokens', { scope: 'read', filter: 'spell', expiresIn: 60 });
  assert.equal(ok.status, 200, JSON.stringify(ok.json));
  for (const body of ['{"capacity": 1e3, "errorRate": 0.01}', '{"capacity": 1000, "errorRate": 0.01, "shards": 2.0}']) {
    const res = await mf.request('PUT', '/v1/filters/spell-int', undefined, { raw: body });
    assert.equal(res.status, 400, `${body}: ${JSON.stringify(res.json)}`);
    assert.equal(res.json.error.code, 'invalid_params');
  }
});

// What a client sends over HTTP, byte for byte, and the status line and
// body it gets.
function raw(headers, body) {
  const url = new URL(mf.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), '127.0.0.1');
    let out = '';
    socket.setTimeout(30_000, () => socket.destroy(new Error('no answer within 30 s')));
    socket.on('data', (d) => (out += d));
    socket.on('error', reject);
    socket.on('end', () => {
      const [head, ...rest] = out.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), head, body: rest.join('\r\n\r\n') });
    });
    socket.end(
      [
        'PUT /v1/filters/spell-length HTTP/1.1',
        `Host: ${url.host}`,
        `Authorization: Bearer ${TOKEN}`,
        'Content-Type: application/json',
        'Connection: close',
        ...headers,
        '',
        body,
      ].join('\r\n'),
    );
  });
}

test('a malformed Content-Length gets the runtime’s bare 500 before the Worker runs, locally', async () => {
  const body = '{"capacity":5,"errorRate":0.1}';
  for (const value of ['-1', '+30', '0x1e', '30, 30']) {
    const res = await raw([`Content-Length: ${value}`], body);
    assert.equal(res.status, 500, `Content-Length: ${value}: ${res.head}`);
    assert.equal(res.body.trim(), 'Internal Server Error', `not the Worker's JSON: ${res.body}`);
  }
  const twice = await raw(['Content-Length: 30', 'Content-Length: 30'], body);
  assert.equal(twice.status, 500);
  // An empty one reaches the Worker as no body at all.
  const empty = await raw(['Content-Length: '], body);
  assert.equal(empty.status, 400, empty.head);
  assert.equal(JSON.parse(empty.body).error.code, 'invalid_json');
  // A length past the limit is the Worker's 413, from the header alone.
  const huge = await raw(['Content-Length: 99999999999999999999'], body);
  assert.equal(huge.status, 413, huge.head);
  assert.equal(JSON.parse(huge.body).error.code, 'body_too_large');
  // And the Worker still serves.
  const good = await raw([`Content-Length: ${body.length}`], body);
  assert.equal(good.status, 201, good.head + good.body);
});
