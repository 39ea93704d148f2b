// examples/sync/ in headless Chromium against the Worker in workerd
// (Miniflare): the page keeps a copy of a filter in IndexedDB and syncs it
// on a timer; keys added to the service show up in the copy, the copy's
// bytes are /snapshot's, and a reloaded page resumes from IndexedDB with a
// delta rather than the snapshot. The page's requests to /v1/ are answered
// by the Worker (same origin, as when the page is served next to the API).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { buildWorker, startMiniflare, TOKEN } from '../worker/harness.js';
import { cleanup, launchChromium, packageDirs, repoRoot, serve, timeout } from './helpers.js';

const dir = mkdtempSync(path.join(tmpdir(), 'edgebloom-sync-example-'));
after(async () => {
  await cleanup();
  rmSync(dir, { recursive: true, force: true });
});

const urls = (prefix, n) => Array.from({ length: n }, (_, i) => `https://${prefix}.example/${i}`);

test('the sync example keeps a copy in IndexedDB that follows the service', { timeout }, async () => {
  buildWorker(path.join(dir, 'bundle'));
  const w = await startMiniflare(path.join(dir, 'bundle'), path.join(dir, 'state'));
  // The page syncs on a timer until Chromium is closed, after this test:
  // its requests after the Worker is gone are aborted, not failures.
  let stopped = false;
  after(() => {
    stopped = true;
    return w.dispose();
  });
  const { origin } = await serve({ dirs: { ...packageDirs, '/examples/': path.join(repoRoot, 'examples') } });
  const chromium = await launchChromium();
  await chromium.context.route(/\/v1\//, async (route) => {
    const req = route.request();
    const url = new URL(req.url());
    let res;
    try {
      res = await w.request(req.method(), url.pathname + url.search, undefined, {
        token: null,
        headers: { Authorization: req.headers().authorization ?? '' },
      });
    } catch (err) {
      if (stopped) return route.abort().catch(() => {});
      throw err;
    }
    await route.fulfill({ status: res.status, headers: Object.fromEntries(res.headers), body: Buffer.from(res.bytes) });
  });

  const name = 'example';
  assert.equal(
    (await w.request('PUT', `/v1/filters/${name}`, { capacity: 10_000, errorRate: 0.01, shards: 2 })).status,
    201,
  );
  const first = urls('first', 100);
  assert.equal((await w.request('POST', `/v1/filters/${name}/add`, { keys: first })).status, 200);

  const page = await chromium.context.newPage();
  const open = () => page.goto(`${origin}/examples/sync/index.html?token=${TOKEN}&filter=${name}&every=200`);
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
  await until('the first sync', (s) => s.syncs >= 1);
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

  // A reload resumes from IndexedDB: its first sync is a delta.
  await page.reload();
  const again = await until('the first sync after the reload', (s) => s.syncs >= 1);
  assert.equal(again.fromStorage, true);
  assert.equal(again.formats[0], 'delta');
  assert.deepEqual(
    await page.evaluate((k) => window.syncExample.has(k), [...first, ...later]),
    [...first, ...later].map(() => true),
  );
  chromium.assertClean();
});
