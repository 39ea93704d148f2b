// examples/sync/ in headless Chromium against the Worker in workerd
// (Miniflare, listening on 127.0.0.1): the page keeps a copy of a filter in
// IndexedDB and syncs it through the service's checkpoints on a timer; keys
// added to the service show up in the copy, the copy's bytes are
// /snapshot's, and a reloaded page resumes from IndexedDB with a delta
// rather than the snapshot. The page is served
// from an origin of its own, which the Worker lists in
// EDGEBLOOM_ALLOWED_ORIGINS, and holds a read token: its requests reach the
// Worker as any page's would (CORS, preflights), with no routing in the
// test. A page on an origin the Worker does not list gets nothing, and
// says why, naming its origin and EDGEBLOOM_ALLOWED_ORIGINS. Through a
// proxy that answers 503 busy (testkit/busy.js), the page retries after
// Retry-After and syncs within seconds, not at its next period.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { buildWorker, startWorker } from '../testkit/worker.js';
import { cleanup, repoRoot, timeout } from '../testkit/process.js';
import { launchChromium, serve } from '../testkit/browser.js';
import { assertRetried, busyProxy } from '../testkit/busy.js';
import { packageDirs } from './helpers.js';

const dir = mkdtempSync(path.join(tmpdir(), 'edgebloom-sync-example-'));
after(async () => {
  await cleanup();
  rmSync(dir, { recursive: true, force: true });
});

const urls = (prefix, n) => Array.from({ length: n }, (_, i) => `https://${prefix}.example/${i}`);

// One Worker, two origins serving the page (one listed in
// EDGEBLOOM_ALLOWED_ORIGINS), one Chromium and a read token for the tests.
const setup = (async () => {
  buildWorker(path.join(dir, 'bundle'));
  const dirs = { ...packageDirs, '/examples/': path.join(repoRoot, 'examples') };
  const { origin } = await serve({ dirs });
  const elsewhere = await serve({ dirs });
  const w = await startWorker(path.join(dir, 'bundle'), path.join(dir, 'state'), {
    port: 0,
    bindings: { EDGEBLOOM_ALLOWED_ORIGINS: origin, EDGEBLOOM_CHECKPOINT_SECONDS: '1' },
  });
  after(() => w.dispose());
  const service = new URL(w.url).origin;
  assert.notEqual(service, origin);
  const chromium = await launchChromium();

  const name = 'example';
  assert.equal(
    (await w.request('PUT', `/v1/filters/${name}`, { capacity: 10_000, errorRate: 0.01, shards: 4 })).status,
    201,
  );
  const minted = await w.request('POST', '/v1/tokens', { scope: 'read', filter: name, expiresIn: 600 });
  assert.equal(minted.status, 200);
  const query = `service=${encodeURIComponent(service)}&token=${minted.json.token}&filter=${name}`;
  return { w, service, origin, elsewhere, chromium, name, query, token: minted.json.token };
})();
setup.catch(() => {}); // reported by the first test that awaits it

// Polls the page's state until ok(state), for at most 30 s.
async function until(page, what, ok) {
  for (let i = 0; ; i++) {
    const s = await page.evaluate(() => window.syncExample?.state);
    if (s && ok(s)) return s;
    assert.ok(i < 300, `waited for ${what}: ${JSON.stringify(s)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('the sync example keeps a copy in IndexedDB that follows the service', { timeout }, async () => {
  const { w, service, origin, chromium, name, query: q } = await setup;
  const query = `${q}&every=200`;
  const first = urls('first', 100);
  assert.equal((await w.request('POST', `/v1/filters/${name}/add`, { keys: first })).status, 200);

  const page = await chromium.context.newPage();
  const open = () => page.goto(`${origin}/examples/sync/index.html?${query}`);
  const state = () => page.evaluate(() => window.syncExample?.state);
  const snapshot = async () => [...(await w.request('GET', `/v1/filters/${name}/snapshot`)).bytes];

  await open();
  await until(page, 'the first sync', (s) => s.formats.length >= 1);
  // The copy's key count and the last sync, on a 4-shard filter too.
  assert.equal((await state()).keys, 100);
  assert.match(await page.textContent('#status'), /Last synced: \d.*; 100 keys\./);
  assert.deepEqual(
    await page.evaluate((k) => window.syncExample.has(k), first),
    first.map(() => true),
  );

  const later = urls('later', 100);
  assert.equal((await w.request('POST', `/v1/filters/${name}/add`, { keys: later })).status, 200);
  for (let i = 0; ; i++) {
    if ((await page.evaluate((k) => window.syncExample.has(k), later)).every(Boolean)) break;
    assert.ok(i < 300, 'the keys added later never reached the copy');
    await new Promise((r) => setTimeout(r, 100));
  }
  const s = await state();
  assert.equal(s.formats[0], 'sharded', 'the first sync is the snapshot');
  assert.ok(
    s.formats.slice(1).every((f) => f === 'delta'),
    `then deltas: ${s.formats}`,
  );
  assert.deepEqual(Object.values(await page.evaluate(() => window.syncExample.bytes())), await snapshot());

  // A reload resumes from IndexedDB: no snapshot again, the next keys come
  // as a delta.
  await page.reload();
  const again = await until(page, 'the first sync after the reload', (s) => s.syncs >= 1);
  assert.equal(again.fromStorage, true);
  const third = urls('third', 50);
  assert.equal((await w.request('POST', `/v1/filters/${name}/add`, { keys: third })).status, 200);
  const resumed = await until(page, 'the keys added after the reload', (s) => s.formats.length >= 1);
  assert.deepEqual(resumed.formats, ['delta']);
  for (let i = 0; ; i++) {
    if ((await page.evaluate((k) => window.syncExample.has(k), third)).every(Boolean)) break;
    assert.ok(i < 300, 'the keys added after the reload never reached the copy');
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.deepEqual(
    await page.evaluate((k) => window.syncExample.has(k), [...first, ...later]),
    [...first, ...later].map(() => true),
  );
  assert.deepEqual(Object.values(await page.evaluate(() => window.syncExample.bytes())), await snapshot());
  // The page prints the copy's count: a 4-shard copy's count is the
  // service's, the sum over its shards.
  const { count } = (await w.request('GET', `/v1/filters/${name}`)).json.total;
  assert.ok(count >= 245, `count ${count}`);
  assert.match(await page.locator('#status').textContent(), new RegExp(`; ${count} keys\\.$`));
  chromium.assertClean();
  assert.ok(
    chromium.requests.some((u) => u.startsWith(`${service}/v1/filters/${name}/checkpoints/`)),
    'the page called the Worker itself',
  );

  await page.close();
});

// From an origin the Worker does not list, the same page gets nothing,
// and says why.
test('a page on an origin the service does not list names the origin and the setting', { timeout }, async () => {
  const { elsewhere, chromium, query } = await setup;
  const stranger = await chromium.context.newPage();
  await stranger.goto(`${elsewhere.origin}/examples/sync/index.html?${query}`);
  const failed = await until(stranger, `the sync from ${elsewhere.origin} to fail`, (s) => s.error);
  assert.equal(failed.syncs, 0);
  assert.equal(failed.code, 'cors_refused');
  assert.ok(
    failed.error.includes(elsewhere.origin) && failed.error.includes('EDGEBLOOM_ALLOWED_ORIGINS'),
    `the failure names the page's origin and the setting: ${failed.error}`,
  );
  assert.ok(
    (await stranger.textContent('#status')).includes(
      `list ${elsewhere.origin} in the service's EDGEBLOOM_ALLOWED_ORIGINS`,
    ),
  );
  assert.ok(
    chromium.errors.some((e) => e.includes(elsewhere.origin) && /CORS/.test(e)),
    `Chromium reports the CORS refusal: ${chromium.errors}`,
  );
});

// A busy service: the first 3 checkpoint requests answered 503 with
// Retry-After: 1. The page waits about that long (with jitter, doubled at
// each try) and syncs, long before its 10-minute period.
test('a busy service is retried after its Retry-After, not at the next period', { timeout }, async () => {
  const { w, service, origin, chromium, name, query } = await setup;
  const proxy = await busyProxy(service, { match: /\/checkpoints\//, refuse: 3 });
  // The page on the listed origin, its service the proxy.
  const busy = await chromium.context.newPage();
  await busy.goto(
    `${origin}/examples/sync/index.html?${query.replace(encodeURIComponent(service), encodeURIComponent(proxy.url))}&every=600000`,
  );
  const retried = await until(busy, 'the sync through a busy service', (s) => s.syncs >= 1 || s.error);
  assert.equal(retried.error, null);
  assert.equal(proxy.refused.length, 3);
  assertRetried(retried.retries, proxy);
  assert.equal(retried.keys, (await w.request('GET', `/v1/filters/${name}`)).json.total.count);
  await busy.close();
});

// A token for another filter: the page says what is wrong with it and what
// to make instead, from the service's code (403 token_other_filter).
test('a token the service refuses is named with what to do', { timeout }, async () => {
  const { w, origin, chromium, name, query } = await setup;
  const other = await w.request('POST', '/v1/tokens', { scope: 'read', filter: 'another', expiresIn: 600 });
  assert.equal(other.status, 200);
  const page = await chromium.context.newPage();
  const token = new URLSearchParams(query).get('token');
  await page.goto(`${origin}/examples/sync/index.html?${query.replace(token, other.json.token)}`);
  const failed = await until(page, 'the sync with a token for another filter to fail', (s) => s.error);
  assert.equal(failed.code, 'token_other_filter');
  const status = await page.textContent('#status');
  assert.ok(
    status.includes('403 token_other_filter: the token is for another filter: make a read token for this one') &&
      status.includes(`"filter": "${name}"`),
    status,
  );
  await page.close();
});

// A filter made with "canonicalize": true holds canonical URLs (the
// service canonicalizes every key it adds or checks). The page reads the
// filter's parameters with its read token and looks up the canonical form
// of what is typed: another spelling of a URL the filter holds is seen.
test('the page looks up canonical URLs on a filter made with canonicalize', { timeout }, async () => {
  const { w, service, origin, chromium } = await setup;
  const name = 'canonical';
  const made = await w.request('PUT', `/v1/filters/${name}`, { capacity: 10_000, errorRate: 0.01, canonicalize: true });
  assert.equal(made.status, 201);
  assert.equal(
    (await w.request('POST', `/v1/filters/${name}/add`, { keys: ['https://Example.com/a/../b'] })).status,
    200,
  );
  const minted = await w.request('POST', '/v1/tokens', { scope: 'read', filter: name, expiresIn: 600 });
  assert.equal(minted.status, 200);
  const page = await chromium.context.newPage();
  await page.goto(
    `${origin}/examples/sync/index.html?service=${encodeURIComponent(service)}&token=${minted.json.token}&filter=${name}`,
  );
  const synced = await until(page, 'the first sync of the canonical filter', (s) => s.syncs >= 1 || s.error);
  assert.equal(synced.error, null);
  assert.equal(synced.keys, 1);
  assert.equal(synced.canonicalize, true, "the page read the filter's parameters");
  const answer = async (key) => {
    await page.fill('#key', key);
    await page.click('#check button');
    return page.textContent('#answer');
  };
  // Spellings canonicalURL makes https://example.com/b, as the service does.
  for (const key of ['HTTPS://EXAMPLE.COM:443/./b', 'https://example.com/x/../b?utm_source=mail#top']) {
    assert.equal(await answer(key), 'probably seen', key);
  }
  assert.equal(await answer('https://example.com/c'), 'certainly not seen');
  await page.close();
});
