// docs/pipeline.md end to end: the Worker in workerd (Miniflare on
// 127.0.0.1), examples/colly-crawler crawling a site on 127.0.0.1 with a
// write token (its seen-set the service filter "crawl", the pages that hold
// a password field published to "blocklist"), then examples/sync-extension
// in headless Chromium with a read token of "blocklist": after its first
// sync, its copy holds every page the crawler published and none of the
// others, and a second crawl fetches nothing.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { cp, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { once } from 'node:events';
import path from 'node:path';
import { after, test } from 'node:test';
import { buildWorker, startWorker } from '../testkit/worker.js';
import { cleanup, repoRoot, tempDir, timeout } from '../testkit/process.js';
import { launchChromium } from '../testkit/browser.js';
import { copyPackageFiles } from './helpers.js';

after(cleanup);

const pages = 30;
// Page i links to 2i+1 and 2i+2; every third page holds a password field.
const suspicious = (i) => i % 3 === 0;

async function startSite() {
  const server = createServer((req, res) => {
    const i = Number(/^\/p\/(\d+)$/.exec(req.url)?.[1]);
    if (!(i >= 0 && i < pages)) return res.writeHead(404).end();
    const links = [2 * i + 1, 2 * i + 2].filter((c) => c < pages).map((c) => `<a href="/p/${c}">${c}</a>`);
    const form = suspicious(i) ? '<form><input type="password" name="p"></form>' : '';
    res.writeHead(200, { 'Content-Type': 'text/html' }).end(`<html><body>${links.join(' ')}${form}</body></html>`);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  after(() => server.close());
  return `http://127.0.0.1:${server.address().port}`;
}

test('a crawler publishes what it finds, an extension knows it offline', { timeout }, async () => {
  const dir = await tempDir('pipeline');
  buildWorker(path.join(dir, 'bundle'));
  const w = await startWorker(path.join(dir, 'bundle'), path.join(dir, 'state'), { port: 0 });
  after(() => w.dispose());
  const service = new URL(w.url).origin;
  const site = await startSite();

  // The secret makes the filters and the tokens.
  for (const [name, errorRate] of [
    ['crawl', 0.000001],
    ['blocklist', 0.001],
  ])
    assert.equal((await w.request('PUT', `/v1/filters/${name}`, { capacity: 10_000, errorRate })).status, 201);
  const mint = async (scope, filter) => {
    const res = await w.request('POST', '/v1/tokens', { scope, filter, expiresIn: 3600 });
    assert.equal(res.status, 200);
    return res.json.token;
  };
  const write = await mint('write', '*');
  const read = await mint('read', 'blocklist');

  // The crawler, with the write token.
  const crawler = path.join(dir, 'crawler');
  execFileSync('go', ['build', '-o', crawler, '.'], { cwd: path.join(repoRoot, 'examples/colly-crawler') });
  // Run asynchronously: the site is served by this process.
  const crawl = () =>
    new Promise((resolve) => {
      const args = [
        ...[
          '-storage',
          'service',
          '-service',
          service,
          '-name',
          'crawl',
          '-frontier',
          path.join(dir, 'crawl.frontier'),
        ],
        ...['-publish', 'blocklist', '-match', 'type="password"', `${site}/p/0`],
      ];
      execFile(crawler, args, { env: { ...process.env, EDGEBLOOM_TOKEN: write } }, (err, stdout, stderr) =>
        resolve({ status: err ? (err.code ?? 1) : 0, stdout, stderr }),
      );
    });
  const first = await crawl();
  assert.equal(first.status, 0, first.stderr);
  const all = Array.from({ length: pages }, (_, i) => `${site}/p/${i}`);
  assert.deepEqual(first.stdout.split('\n').filter(Boolean).sort(), [...all].sort());
  const published = all.filter((_, i) => suspicious(i));
  assert.match(first.stderr, new RegExp(`published ${published.length} pages to blocklist`));
  const again = await crawl();
  assert.equal(again.status, 0, again.stderr);
  assert.equal(again.stdout, '', 'the second crawl fetches nothing: the seen-set is the service filter');

  // The extension, with the read token, as its README configures it.
  const ext = path.join(dir, 'extension');
  await cp(path.join(repoRoot, 'examples/sync-extension'), ext, { recursive: true, filter: (f) => !f.endsWith('.md') });
  await copyPackageFiles(path.join(ext, 'edgebloom'));
  await writeFile(
    path.join(ext, 'config.json'),
    JSON.stringify({ service, filter: 'blocklist', token: read, everyMinutes: 30 }),
  );
  const manifest = JSON.parse(await readFile(path.join(ext, 'manifest.json'), 'utf8'));
  manifest.host_permissions = ['http://127.0.0.1/*'];
  await writeFile(path.join(ext, 'manifest.json'), JSON.stringify(manifest));
  const browser = await launchChromium({ extensionDir: ext });
  const worker = browser.context.serviceWorkers()[0] ?? (await browser.context.waitForEvent('serviceworker'));
  const state = await worker.evaluate(
    () =>
      new Promise((resolve) => {
        const check = () => {
          if (self.state?.syncs < 1 && !self.state.error) return;
          self.removeEventListener('synced', check);
          resolve(self.state);
        };
        self.addEventListener('synced', check);
        if (self.state) check();
      }),
  );
  assert.equal(state.error, null);
  assert.deepEqual(
    await worker.evaluate((keys) => self.has(keys), all),
    all.map((_, i) => suspicious(i)),
    'the copy holds the pages the crawler published, and none of the others',
  );
  browser.assertClean();
});
