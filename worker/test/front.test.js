// The Go front in a real workerd (Miniflare), as "wrangler deploy" builds
// it: one Go instance per isolate serves request after request, concurrent
// requests see only their own headers, a Go program that exits or panics
// is replaced by a new one on the next request, and generations only move
// forward, so that a late request of a filter deleted and made again
// changes nothing (a stale meta cache costs one retry, never data).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildWorker, startWorker } from '../../testkit/worker.js';

let dir;
let w;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edgebloom-front-'));
  buildWorker(join(dir, 'bundle'));
  w = await startWorker(join(dir, 'bundle'), join(dir, 'state'));
});

after(async () => {
  await w?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const req = (...args) => w.request(...args);
const instance = async () => {
  const res = await req('GET', '/_test/instance');
  assert.equal(res.status, 200, JSON.stringify(res.json));
  return res.json;
};
// deleteBehind deletes filter name the way another isolate's front would,
// past this one: its meta object, then each shard of the clean-up meta
// gave, then it tells meta the clean-up is done.
async function deleteBehind(name) {
  const meta = await w.object(`meta:${name}`, 'DELETE', '/meta');
  assert.equal(meta.status, 200, meta.text);
  const { cleanup } = meta.json;
  for (let index = 0; index < cleanup.shards; index++) {
    const shard = { filter: name, index, generation: cleanup.generation };
    const res = await w.object(`shard:${name}:${index}`, 'DELETE', '/shard', {
      headers: { 'X-Edgebloom-Shard': JSON.stringify(shard) },
    });
    assert.equal(res.status, 204, res.text);
  }
  const done = await w.object(`meta:${name}`, 'POST', '/cleanup', { body: JSON.stringify(cleanup) });
  assert.equal(done.status, 204, done.text);
}

const urls = (prefix, n) => Array.from({ length: n }, (_, i) => `https://${prefix}.example/${i}`);

test('one Go instance serves request after request', async () => {
  const first = await instance();
  for (let i = 0; i < 20; i++) {
    assert.equal((await req('GET', '/v1/filters/none', undefined, { token: 'wrong' })).status, 401);
    assert.equal((await req('GET', '/v1/filters/none')).status, 404);
  }
  const later = await instance();
  assert.equal(later.instance, first.instance, 'the same Go program answered');
  assert.equal(later.served, first.served + 41);
});

test('concurrent requests in one instance each see their own request', async () => {
  const before = await instance();
  const answers = await Promise.all(
    Array.from({ length: 50 }, (_, i) => req('GET', '/_test/echo', undefined, { headers: { 'X-Echo': `r${i}` } })),
  );
  answers.forEach((res, i) => {
    assert.equal(res.status, 200, JSON.stringify(res.json));
    assert.deepEqual(res.json, { echo: `r${i}`, after: `r${i}` });
  });
  assert.equal((await instance()).instance, before.instance);
});

for (const how of ['exit', 'panic']) {
  test(`a Go program that stops (${how}) is replaced on the next request`, async () => {
    assert.equal((await req('PUT', `/v1/filters/stop-${how}`, { capacity: 10_000, errorRate: 0.01 })).status, 201);
    const keys = urls(how, 100);
    assert.equal((await req('POST', `/v1/filters/stop-${how}/add`, { keys })).status, 200);
    const before = await instance();
    const stopped = await req('POST', `/_test/${how}`);
    assert.equal(stopped.status, 500, JSON.stringify(stopped.json));
    assert.equal(stopped.json.error.code, 'internal');
    assert.match(stopped.json.error.requestId, /^[0-9a-f]{16}$/);
    const after = await instance();
    assert.notEqual(after.instance, before.instance, 'a new Go program answered');
    const checked = await req('POST', `/v1/filters/stop-${how}/check`, { keys });
    assert.equal(checked.status, 200);
    assert.ok(checked.json.present.every(Boolean));
    assert.match(w.log(), /the Go front failed: FrontStopped: the Go front stopped/);
  });
}

test('a late request of an older generation is refused and wipes nothing', async () => {
  const name = 'late';
  const params = { capacity: 100_000, errorRate: 0.01 };
  assert.equal((await req('PUT', `/v1/filters/${name}`, params)).status, 201);
  const old = await w.object(`meta:${name}`, 'GET', '/meta');
  // The filter is deleted and made again; the new one acknowledges adds.
  assert.equal((await req('DELETE', `/v1/filters/${name}`)).status, 204);
  assert.equal((await req('PUT', `/v1/filters/${name}`, params)).status, 201);
  const keys = urls('late', 50);
  const added = await req('POST', `/v1/filters/${name}/add`, { keys });
  assert.deepEqual(added.json, { added: keys.map(() => true) });
  // A request that read meta before the DELETE reaches the shard now.
  const shard = {
    filter: name,
    index: 0,
    capacity: params.capacity,
    errorRate: params.errorRate,
    generation: old.json.generation,
  };
  const late = await w.object(`shard:${name}:0`, 'POST', '/add', {
    headers: { 'X-Edgebloom-Shard': JSON.stringify(shard) },
    body: JSON.stringify({ keys: ['https://late.example/old'] }),
  });
  const checked = await req('POST', `/v1/filters/${name}/check`, { keys });
  const present = checked.json.present.filter(Boolean).length;
  assert.equal(present, keys.length, `${present} of ${keys.length} acknowledged keys present after the late request`);
  assert.equal((await req('GET', `/v1/filters/${name}`)).json.total.count, keys.length);
  assert.equal(late.status, 409, late.text);
  assert.equal(late.json.error.code, 'stale_generation');
});

test('a front whose cached meta is stale reads it again and retries once', async () => {
  const name = 'cached';
  const params = { capacity: 100_000, errorRate: 0.01, shards: 2 };
  assert.equal((await req('PUT', `/v1/filters/${name}`, params)).status, 201);
  const first = urls('cached-1', 20);
  assert.equal((await req('POST', `/v1/filters/${name}/add`, { keys: first })).status, 200);
  // Another isolate's front deletes the filter and makes it again with
  // other parameters, and adds to it: this front's cache knows nothing.
  const again = { capacity: 200_000, errorRate: 0.001, shards: 3 };
  await deleteBehind(name);
  const made = await w.object(`meta:${name}`, 'PUT', '/meta', { body: JSON.stringify(again) });
  assert.equal(made.status, 201, made.text);
  const served0 = (await instance()).served;
  const second = urls('cached-2', 30);
  const added = await req('POST', `/v1/filters/${name}/add`, { keys: second });
  assert.equal(added.status, 200, JSON.stringify(added.json));
  assert.ok(added.json.added.every(Boolean));
  const stats = await req('GET', `/v1/filters/${name}`);
  assert.equal(stats.json.shards, 3, 'the new parameters');
  assert.equal(stats.json.total.count, second.length, "only the new filter's keys");
  const checked = await req('POST', `/v1/filters/${name}/check`, { keys: second });
  assert.ok(checked.json.present.every(Boolean));
  assert.equal((await instance()).served, served0 + 4, 'the same instance served all of it');
  // Deleted behind its back: the front answers 404, not the old filter.
  await deleteBehind(name);
  const gone = await req('POST', `/v1/filters/${name}/check`, { keys: second });
  assert.equal(gone.status, 404, JSON.stringify(gone.json));
});

test('20 concurrent clients add 10,000 distinct keys: each acknowledged new, each present', async () => {
  const name = 'many';
  assert.equal(
    (await req('PUT', `/v1/filters/${name}`, { capacity: 1_000_000, errorRate: 0.01, shards: 4 })).status,
    201,
  );
  const all = urls('many', 10_000);
  await Promise.all(
    Array.from({ length: 20 }, async (_, c) => {
      const mine = all.slice(c * 500, (c + 1) * 500);
      for (let i = 0; i < mine.length; i += 50) {
        const res = await req('POST', `/v1/filters/${name}/add`, { keys: mine.slice(i, i + 50) });
        assert.equal(res.status, 200, JSON.stringify(res.json));
        assert.ok(res.json.added.every(Boolean), `client ${c}: a distinct key answered "not new"`);
      }
    }),
  );
  const checked = await req('POST', `/v1/filters/${name}/check`, { keys: all });
  assert.ok(checked.json.present.every(Boolean));
  assert.equal((await req('GET', `/v1/filters/${name}`)).json.total.count, all.length);
});

test('a snapshot whose second shard fails after the first was sent ends short, and the client sees it fail', async () => {
  const name = 'cut';
  assert.equal((await req('PUT', `/v1/filters/${name}`, { capacity: 10_000, errorRate: 0.01, shards: 2 })).status, 201);
  assert.equal((await req('POST', `/v1/filters/${name}/add`, { keys: urls('cut', 200) })).status, 200);
  const whole = await req('GET', `/v1/filters/${name}/snapshot`);
  assert.equal(whole.status, 200);
  assert.equal(whole.bytes.length, Number(whole.headers.get('Content-Length')));
  // Shard 1's storage is damaged: the front has sent the status, the
  // header and shard 0 by the time shard 1 refuses.
  const shard = `shard:${name}:1`;
  const { log } = (await w.hook(shard, '/_test/info')).json;
  assert.equal((await w.hook(shard, '/_test/corrupt', { log: log[0].seq })).status, 204);
  await assert.rejects(req('GET', `/v1/filters/${name}/snapshot`), 'the body ends short of its Content-Length');
  const after = await req('POST', `/v1/filters/${name}/check`, { keys: urls('cut', 200) });
  assert.equal(after.status, 500, 'the damaged shard refuses');
  assert.equal(after.json.error.code, 'shard_corrupt');
});

// Header fields cross between JS and Go as name and value pairs: a value
// comes back byte for byte (UTF-8 included), and a value with a line break
// in it (a handler that copies one unchecked) cannot add a field.
test('a header value crosses the bridge whole, and a line break in one adds no field', async () => {
  const utf8 = (s) => Buffer.from(s).toString('latin1'); // the bytes, as fetch sends a header
  for (const value of ['plain', 'a:b, c; d="e"', utf8('café ☃'), ' x-injected\tyes ']) {
    const res = await req('GET', '/_test/echo', undefined, { headers: { 'X-Echo': value } });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    assert.equal(res.headers.get('X-Echo'), value.trim());
    assert.equal(res.headers.get('X-Echo-Split'), `${value.trim()} x-injected yes  X-Injected: yes`);
    assert.equal(res.headers.get('X-Injected'), null);
    assert.equal(res.json.echo, Buffer.from(value.trim(), 'latin1').toString());
  }
});

// A request whose JS side never answers gives up with its context: when its
// client goes away (request.signal's abort), or at its deadline (here a
// test hook's own, shorter), and leaves no exchange and no question behind.
test('a request whose JS side never answers ends when its client leaves, or at its deadline', async () => {
  const left = await req('GET', '/_test/hang', undefined, { headers: { 'X-Edgebloom-Test-Abort-After': '50' } });
  assert.equal(left.status, 499, JSON.stringify(left.json));
  assert.equal(left.json.error.code, 'client_gone');
  const timedOut = await req('GET', '/_test/hang?ms=50');
  assert.equal(timedOut.status, 503, JSON.stringify(timedOut.json));
  assert.equal(timedOut.json.error.code, 'gave_up');
  const now = await instance();
  assert.equal(now.exchanges, 0, JSON.stringify(now));
  assert.equal(now.asks, 0, JSON.stringify(now));
});

// Expensive requests share a budget: past it they wait in a line, past the
// line they get 503 busy with Retry-After, and those in line go on once the
// budget is given back.
test('expensive requests past the budget wait in line, and past the line get 503 with Retry-After', async () => {
  const all = 24 << 20; // heavyBudget in front/bounds.go
  // It holds the whole budget until the front refuses a request.
  const holder = req('GET', `/_test/heavy?bytes=${all}`);
  for (const deadline = Date.now() + 30_000; ;) {
    const now = await instance();
    if (now.heavyBytes === all) break;
    assert.ok(Date.now() < deadline, `the budget was never taken: ${JSON.stringify(now)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const line = Array.from({ length: 256 }, () => req('GET', '/_test/heavy?bytes=1&ms=0'));
  for (const deadline = Date.now() + 30_000; ;) {
    const now = await instance();
    if (now.heavyWaiting === 256) break;
    assert.ok(Date.now() < deadline, `the line never filled: ${JSON.stringify(now)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const busy = await req('GET', '/_test/heavy?bytes=1&ms=0');
  assert.equal(busy.status, 503, JSON.stringify(busy.json));
  assert.equal(busy.json.error.code, 'busy');
  assert.equal(busy.headers.get('Retry-After'), '1');
  assert.equal((await holder).status, 200, 'the holder saw the refusal');
  for (const res of await Promise.all(line)) assert.equal(res.status, 200, new TextDecoder().decode(res.bytes));
  const now = await instance();
  assert.deepEqual([now.heavyBytes, now.heavyWaiting, now.exchanges, now.asks], [0, 0, 0, 0], JSON.stringify(now));
});
