// examples/sync/ in headless Chromium against the Worker in workerd
// (Miniflare, listening on 127.0.0.1): the page keeps a copy of a filter in
// IndexedDB and syncs it through the service's checkpoints on a timer; keys
// added to the service show up in the copy, the copy's bytes are
// /snapshot's, and a reloaded page resumes from IndexedDB with a delta
// rather than the snapshot. The page is served
// from an origin of its own, which the Worker lists in
// EDGEBLOOM_ALLOWED_ORIGINS, and holds a read token: its requests reach the
// Worker as any page's would (CORS, preflights), with no routing in the
// test. A page on an origin the Worker does not list gets nothing.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { buildWorker, startWorker } from '../testkit/worker.js';
import { cleanup, repoRoot, timeout } from '../testkit/process.js';
import { launchChromium, serve } from '../testkit/browser.js';
import { packageDirs } from './helpers.js';

const dir = mkdtempSync(path.join(tmpdir(), 'edgebloom-sync-example-'));
after(async () => {
  await cleanup();
  rmSync(dir, { recursive: true, force: true });
});

const urls = (prefix, n) => Array.from({ length: n }, (_, i) => `https://${prefix}.example/${i}`);

test('the sync example keeps a copy in IndexedDB that follows the service', { timeout }, async () => {
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
  const first = urls('first', 100);
  assert.equal((await w.request('POST', `/v1/filters/${name}/add`, { keys: first })).status, 200);

  const minted = await w.request('POST', '/v1/tokens', { scope: 'read', filter: name, expiresIn: 600 });
  assert.equal(minted.status, 200);
  const query = `service=${encodeURIComponent(service)}&token=${minted.json.token}&filter=${name}&every=200`;

  const page = await chromium.context.newPage();
  const open = () => page.goto(`${origin}/examples/sync/index.html?${query}`);
  const state = () => page.evaluate(() => window.syncExample?.state);
  const until = async (what, ok) => {
    for (let i = 0; ; i++) {
      const s = await state();
      if (s && ok(s)) return s;
      assert.ok(i < 300, `waited for ${what}: ${JSON.stringify(s)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const snapshot = async () => [...(await w.request('GET', `/v1/filters/${name}/snapshot`)).bytes];

  await open();
  await until('the first sync', (s) => s.formats.length >= 1);
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
  const again = await until('the first sync after the reload', (s) => s.syncs >= 1);
  assert.equal(again.fromStorage, true);
  const third = urls('third', 50);
  assert.equal((await w.request('POST', `/v1/filters/${name}/add`, { keys: third })).status, 200);
  const resumed = await until('the keys added after the reload', (s) => s.formats.length >= 1);
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
  assert.match(await page.locator('#status').textContent(), new RegExp(`; ${count} keys$`));
  chromium.assertClean();
  assert.ok(
    chromium.requests.some((u) => u.startsWith(`${service}/v1/filters/${name}/checkpoints/`)),
    'the page called the Worker itself',
  );

  // From an origin the Worker does not list, the same page gets nothing.
  const stranger = await chromium.context.newPage();
  await stranger.goto(`${elsewhere.origin}/examples/sync/index.html?${query}`);
  const failed = await (async () => {
    for (let i = 0; ; i++) {
      const s = await stranger.evaluate(() => window.syncExample?.state);
      if (s?.error) return s;
      assert.ok(i < 300, `waited for the sync from ${elsewhere.origin} to fail: ${JSON.stringify(s)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  assert.equal(failed.syncs, 0);
  assert.match(failed.error, /Failed to fetch/);
  assert.ok(
    chromium.errors.some((e) => e.includes(elsewhere.origin) && /CORS/.test(e)),
    `Chromium reports the CORS refusal: ${chromium.errors}`,
  );
});
