// The browser entry point (js/index.js) in an MV3 extension's service worker,
// under the CSP docs/npm.md gives (script-src 'self' 'wasm-unsafe-eval'): a
// static import, init() on first use, the golden vectors.

import assert from 'node:assert/strict';
import { cp } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { cleanup, tempDir, timeout, writeFiles } from '../testkit/process.js';
import { launchChromium } from '../testkit/browser.js';
import { assertVectors, copyPackageFiles, e2eDir, loadVectors } from './helpers.js';

const manifest = {
  manifest_version: 3,
  name: 'edgebloom e2e',
  version: '1.0.0',
  background: { service_worker: 'background.js', type: 'module' },
  content_security_policy: { extension_pages: "script-src 'self' 'wasm-unsafe-eval'; object-src 'self'" },
};

// Service workers reject dynamic import() and top-level await: a static
// import, and init() only when asked.
const background = `
import * as edgebloom from './edgebloom/index.js';
import { runChecks } from './check.js';
self.runChecks = (vectors) => runChecks(edgebloom, vectors);
// What making a filter gives when the worker starts, before init().
self.beforeInit = (() => {
  try {
    new edgebloom.BloomFilter({ bits: 8, hashes: 1 }).free();
    return 'no error';
  } catch (err) {
    return err.code;
  }
})();
`;

let browser;
let dir;
before(
  async () => {
    dir = await tempDir('extension');
    await writeFiles(dir, {
      'manifest.json': manifest,
      'background.js': background,
      // A page of the extension that imports the package by its bare name.
      'bare.html': '<!doctype html><script type="module" src="bare.js"></script>',
      'bare.js': "import { init } from 'edgebloom';\ndocument.title = typeof init;\n",
    });
    await copyPackageFiles(path.join(dir, 'edgebloom'));
    await cp(path.join(e2eDir, 'check.js'), path.join(dir, 'check.js'));
    browser = await launchChromium({ extensionDir: dir });
  },
  { timeout },
);
after(cleanup);

test('MV3 service worker', { timeout }, async () => {
  const { context } = browser;
  const worker = context.serviceWorkers()[0] ?? (await context.waitForEvent('serviceworker'));
  assert.match(worker.url(), /^chrome-extension:\/\/[a-p]{32}\/background\.js$/);
  assert.equal(await worker.evaluate(() => self.beforeInit), 'ERR_NOT_INITIALIZED', 'the engine before init()');
  const result = await worker.evaluate((vectors) => self.runChecks(vectors), await loadVectors());
  assertVectors(result);
  browser.assertClean();
});

// docs/npm.md: an unpacked extension has no bundler, so a bare import of
// the package resolves nowhere in it; the files are copied in and imported
// by path, as the worker above does.
test('a bare import of the package does not resolve in an extension', { timeout }, async () => {
  const { context } = browser;
  const worker = context.serviceWorkers()[0] ?? (await context.waitForEvent('serviceworker'));
  const page = await context.newPage();
  const failed = page.waitForEvent('pageerror');
  await page.goto(new URL('bare.html', worker.url()).href);
  assert.match((await failed).message, /Failed to resolve module specifier "edgebloom"/);
  assert.equal(await page.title(), '', 'the module did not run');
  // The one error this test makes, and nothing else.
  assert.equal(browser.errors.length, 1, browser.errors.join('\n'));
  browser.errors.length = 0;
  browser.assertClean();
});
