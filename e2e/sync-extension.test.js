// examples/sync-extension/ loaded unpacked into headless Chromium, against
// the Worker in workerd (Miniflare, listening on 127.0.0.1) with no origin
// in EDGEBLOOM_ALLOWED_ORIGINS: the extension reaches the service through
// its host permission and a read token from POST /v1/tokens. Its copy
// follows the service (a snapshot, then deltas), its bytes are /snapshot's,
// a stopped service worker resumes from IndexedDB with a delta, and the
// read token it holds cannot add to or delete the filter.
/* global chrome */
import assert from 'node:assert/strict';
import { cp, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, test } from 'node:test';
import { buildWorker, startWorker } from '../testkit/worker.js';
import { cleanup, repoRoot, tempDir, timeout } from '../testkit/process.js';
import { launchChromium, serve } from '../testkit/browser.js';
import { copyPackageFiles } from './helpers.js';

after(cleanup);

const urls = (prefix, n) => Array.from({ length: n }, (_, i) => `https://${prefix}.example/${i}`);

test('the sync extension keeps its copy in sync with a read token', { timeout }, async () => {
  const dir = await tempDir('sync-extension');
  buildWorker(path.join(dir, 'bundle'));
  const w = await startWorker(path.join(dir, 'bundle'), path.join(dir, 'state'), { port: 0 });
  after(() => w.dispose());
  const service = new URL(w.url).origin;

  const name = 'crawl';
  assert.equal(
    (await w.request('PUT', `/v1/filters/${name}`, { capacity: 10_000, errorRate: 0.01, shards: 2 })).status,
    201,
  );
  const first = urls('first', 100);
  assert.equal((await w.request('POST', `/v1/filters/${name}/add`, { keys: first })).status, 200);
  const minted = await w.request('POST', '/v1/tokens', { scope: 'read', filter: name, expiresIn: 3600 });
  assert.equal(minted.status, 200);

  // The example as a user configures it: its service, filter and read
  // token in config.json, a host permission for the service.
  const ext = path.join(dir, 'extension');
  await cp(path.join(repoRoot, 'examples/sync-extension'), ext, { recursive: true, filter: (f) => !f.endsWith('.md') });
  await copyPackageFiles(path.join(ext, 'edgebloom'));
  await writeFile(
    path.join(ext, 'config.json'),
    JSON.stringify({ service, filter: name, token: minted.json.token, everyMinutes: 30 }),
  );
  const manifest = JSON.parse(await readFile(path.join(ext, 'manifest.json'), 'utf8'));
  manifest.host_permissions = ['http://127.0.0.1/*'];
  await writeFile(path.join(ext, 'manifest.json'), JSON.stringify(manifest));

  const browser = await launchChromium({ extensionDir: ext });
  const { context } = browser;
  const worker = context.serviceWorkers()[0] ?? (await context.waitForEvent('serviceworker'));
  // Resolves, in the worker, once n syncs are done since it started.
  const synced = (n) =>
    worker.evaluate(
      (n) =>
        new Promise((resolve) => {
          const check = () => {
            if (self.state?.syncs < n && !self.state.error) return;
            self.removeEventListener('synced', check);
            resolve(self.state);
          };
          self.addEventListener('synced', check);
          if (self.state) check();
        }),
      n,
    );
  const snapshot = async () => [...(await w.request('GET', `/v1/filters/${name}/snapshot`)).bytes];
  const copyBytes = async () => Object.values(await worker.evaluate(() => self.bytes()));

  let s = await synced(1);
  assert.equal(s.error, null);
  assert.deepEqual(s.formats, ['sharded'], 'the first sync is the snapshot');
  assert.deepEqual(
    await worker.evaluate((k) => self.has(k), first),
    first.map(() => true),
  );
  assert.deepEqual(await worker.evaluate(() => chrome.alarms.get('sync').then((a) => a.periodInMinutes)), 30);

  // What the alarm runs: a delta with the keys added since.
  const later = urls('later', 100);
  assert.equal((await w.request('POST', `/v1/filters/${name}/add`, { keys: later })).status, 200);
  s = await worker.evaluate(() => self.sync());
  assert.equal(s.error, null);
  assert.deepEqual(s.formats, ['sharded', 'delta']);
  assert.ok(s.bytes < 20_000, `a snapshot and a delta: ${s.bytes} bytes`);
  assert.deepEqual(
    await worker.evaluate((k) => self.has(k), later),
    later.map(() => true),
  );
  assert.deepEqual(await copyBytes(), await snapshot());

  // The token the extension holds reads, and nothing more.
  const tried = await worker.evaluate(
    async ({ service, name }) => {
      const { token } = await self.ready;
      const call = async (method, path, body) => {
        const res = await fetch(`${service}/v1/filters/${name}${path}`, {
          method,
          headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
          body: body && JSON.stringify(body),
        });
        return [res.status, (await res.json()).error.code];
      };
      return [await call('POST', '/add', { keys: ['https://evil.example/'] }), await call('DELETE', '')];
    },
    { service, name },
  );
  assert.deepEqual(tried, [
    [403, 'token_not_allowed'],
    [403, 'token_not_allowed'],
  ]);
  assert.equal((await w.request('GET', `/v1/filters/${name}`)).status, 200);

  // Stopped as Chrome stops an idle worker, woken by a page load, it starts
  // again from IndexedDB: its next sync is a delta.
  const cdp = await context.newCDPSession(await context.newPage());
  const status = new Map(); // versionId -> runningStatus of the extension's worker
  const waiters = new Set();
  cdp.on('ServiceWorker.workerVersionUpdated', ({ versions }) => {
    for (const v of versions) if (v.scriptURL === worker.url()) status.set(v.versionId, v.runningStatus);
    for (const check of waiters) check();
  });
  const until = (done) =>
    new Promise((resolve) => {
      const check = () => done() && (waiters.delete(check), resolve());
      waiters.add(check);
      check();
    });
  await cdp.send('ServiceWorker.enable');
  await cdp.send('ServiceWorker.stopAllWorkers');
  await until(() => status.size > 0 && [...status.values()].every((v) => v === 'stopped'));
  const site = await serve({ pages: { '/page': '<!doctype html><title>a page</title>' } });
  await (await context.newPage()).goto(`${site.origin}/page`);
  await until(() => [...status.values()].includes('running'));
  const again = await worker.evaluate(() => self.ready.then(() => self.sync()));
  assert.equal(again.fromStorage, true);
  assert.deepEqual(again.formats, ['delta']);
  assert.deepEqual(await copyBytes(), await snapshot());
  browser.assertClean();
});
