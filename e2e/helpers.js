// What the e2e tests share beyond the test kit (../testkit/: processes,
// Chromium, static servers, workerd): the package linked or copied, the
// golden vectors, pages and a Worker that run check.js on them.

import assert from 'node:assert/strict';
import { cp, mkdir, readFile, symlink } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { repoRoot, writeFiles } from '../testkit/process.js';
import { bundledEntries, wranglerBundle } from '../testkit/workerd.js';

export const e2eDir = fileURLToPath(new URL('.', import.meta.url));
export const vectorsPath = path.join(repoRoot, 'bloom/testdata/vectors.json');

// ---- the package ------------------------------------------------------------

/** Makes dir/node_modules/edgebloom a link to this repo. */
export async function linkPackage(dir) {
  await mkdir(path.join(dir, 'node_modules'), { recursive: true });
  await symlink(repoRoot, path.join(dir, 'node_modules/edgebloom'), 'dir');
}

/** Copies the package's runtime files (js/*.js and js/edgebloom.wasm) to dir. */
export async function copyPackageFiles(dir) {
  await cp(path.join(repoRoot, 'js'), dir, {
    recursive: true,
    filter: (src) => src === path.join(repoRoot, 'js') || /\.(js|wasm)$/.test(src),
  });
}

/** The package's files, for serve({dirs}): /js/ is the repo's js/. */
export const packageDirs = { '/js/': path.join(repoRoot, 'js'), '/e2e/': e2eDir.replace(/\/$/, '') };

// ---- golden vectors -----------------------------------------------------------

/** bloom/testdata/vectors.json, written by Go, urlkey's table as urlCases and the malformed corpus as malformed. */
export async function loadVectors() {
  const vectors = JSON.parse(await readFile(vectorsPath, 'utf8'));
  vectors.urlCases = JSON.parse(await readFile(path.join(repoRoot, 'urlkey/testdata/cases.json'), 'utf8'));
  vectors.malformed = JSON.parse(await readFile(path.join(repoRoot, 'bloom/testdata/malformed.json'), 'utf8'));
  return vectors;
}

/** Asserts a checkVectors result: no failures, and it checked something. */
export function assertVectors(result) {
  assert.deepEqual(result.failures, []);
  assert.ok(result.checked > 0, 'no vector was checked');
}

// ---- pages that run check.js --------------------------------------------------

/**
 * A page whose module script runs `module` after a classic script snapshots
 * the globals (in window.__before; `setup` runs first, in the same classic
 * script). The module calls window.vectors() and window.report(result),
 * which openCheckPage provides.
 */
export function checkPageHtml({ importMap, setup = '', module }) {
  return `<!doctype html>
<meta charset="utf-8">
<link rel="icon" href="data:,">
<title>edgebloom e2e</title>
<script>
${setup}
window.__before = { fs: globalThis.fs, process: globalThis.process, path: globalThis.path, Go: globalThis.Go };
</script>
${importMap ? `<script type="importmap">${JSON.stringify({ imports: importMap })}</script>` : ''}
<script type="module">
${module}
</script>
`;
}

/**
 * The module code of a check page: imports the package from `edgebloom` and
 * check.js from `check`, runs `setup` (which may call edgebloom.init), runs
 * the checks, runs `extra` (which may add to `result`) and reports.
 */
export function checkPageModule({ edgebloom, check, setup = '', extra = '' }) {
  return `import * as edgebloom from ${JSON.stringify(edgebloom)};
import { runChecks } from ${JSON.stringify(check)};
${setup}
const result = await runChecks(edgebloom, await window.vectors(), window.__before);
${extra}
await window.report(result);
`;
}

/**
 * Opens url in a new page of browser (from launchChromium), hands it the
 * vectors and resolves with what the page reports; rejects as soon as the
 * page logs an error, throws, crashes or closes instead.
 */
export async function openCheckPage(browser, url, vectors) {
  const page = await browser.context.newPage();
  let report;
  let fail;
  const reported = new Promise((resolve, reject) => {
    report = resolve;
    fail = reject;
  });
  reported.catch(() => {}); // awaited below, maybe after it failed
  page.on('console', (msg) => msg.type() === 'error' && fail(new Error(`console error in ${url}: ${msg.text()}`)));
  page.on('pageerror', (err) => fail(new Error(`uncaught in ${url}: ${err.stack ?? err}`)));
  page.on('crash', () => fail(new Error(`${url} crashed`)));
  page.on('close', () => fail(new Error(`${url} closed before it reported`)));
  await page.exposeFunction('vectors', () => vectors);
  await page.exposeFunction('report', (result) => report(result));
  await page.goto(url);
  const result = await reported;
  return { page, result };
}

// ---- Workers --------------------------------------------------------------------

export const compatibilityDate = '2026-04-20';

// A Worker that imports the package by name. Global scope only imports
// (foreign-go.js first: a global Go like the one syumai/workers installs,
// which the package must leave alone); init() runs in the handler.
// GET /before-init tries to make a filter without init(); GET /add does
// init() and a test-and-add; POST /check runs check.js on the posted vectors.
const workerSource = `
import './foreign-go.js';
import { init, BloomFilter } from 'edgebloom';
import * as edgebloom from 'edgebloom';
import { runChecks } from './check.js';

export default {
  async fetch(request) {
    const { pathname } = new URL(request.url);
    if (pathname === '/before-init') {
      try {
        new BloomFilter({ bits: 64, hashes: 2 }).free();
        return Response.json({ code: 'no error' });
      } catch (err) {
        return Response.json({ code: err.code });
      }
    }
    if (pathname === '/add') {
      await init();
      const f = new BloomFilter({ capacity: 100, errorRate: 0.01 });
      const added = f.add('https://example.com/');
      const again = f.add('https://example.com/');
      f.free();
      return Response.json({ added, again });
    }
    if (pathname === '/check' && request.method === 'POST') {
      const result = await runChecks(edgebloom, await request.json());
      return Response.json({ ...result, goIsForeign: new globalThis.Go().foreign === true });
    }
    return new Response('not found', { status: 404 });
  },
};
`;

/**
 * Writes a wrangler project (wrangler.jsonc, src/) to dir and returns its
 * config. The caller provides node_modules/edgebloom.
 */
export async function writeWorkerProject(dir, { flags = [] } = {}) {
  const config = {
    name: 'edgebloom-e2e',
    main: 'src/index.js',
    compatibility_date: compatibilityDate,
    compatibility_flags: flags,
  };
  await writeFiles(dir, {
    'package.json': { name: 'edgebloom-e2e-worker', private: true, type: 'module' },
    'wrangler.jsonc': config,
    'src/index.js': workerSource,
    'src/foreign-go.js': 'globalThis.Go = class Go { foreign = true; };\n',
    'src/check.js': await readFile(path.join(e2eDir, 'check.js'), 'utf8'),
  });
  return config;
}

/**
 * Checks what `wrangler deploy --dry-run` made of the project in dir: the
 * entry bundles the workerd build of the package, and the wasm is emitted as
 * a module of its own, byte for byte the package's. Returns the bundle.
 */
export async function assertWorkerdBundle(dir, packageDir) {
  const bundle = await wranglerBundle(dir);
  assert.deepEqual(bundledEntries(bundle.meta), ['workerd'], "the package's entry points in the bundle");
  const wasm = bundle.files.filter((f) => f.endsWith('.wasm'));
  assert.equal(wasm.length, 1, `one wasm module in ${bundle.files}`);
  const importsWasm = bundle.text
    .split('\n')
    .some((line) => /^import \w+ from "\.\/(.*)";$/.exec(line)?.[1] === wasm[0]);
  assert.ok(importsWasm, `the bundle imports ${wasm[0]}`);
  const [emitted, original] = await Promise.all([
    readFile(path.join(bundle.outdir, wasm[0])),
    readFile(path.join(packageDir, 'js/edgebloom.wasm')),
  ]);
  assert.ok(emitted.equals(original), 'the emitted wasm is the package one');
  return bundle;
}

/** The checks every Worker test makes against a running Miniflare. */
export async function assertWorker(mf, vectors) {
  const get = async (pathname, init) => {
    const res = await mf.dispatchFetch(`http://worker${pathname}`, init);
    assert.equal(res.status, 200, `${pathname}: ${res.status}`);
    return res.json();
  };
  // The module loaded without init(): nothing ran at global scope.
  assert.deepEqual(await get('/before-init'), { code: 'ERR_NOT_INITIALIZED' });
  assert.deepEqual(await get('/add'), { added: true, again: false });
  const result = await get('/check', { method: 'POST', body: JSON.stringify(vectors) });
  assertVectors(result);
  assert.equal(result.goIsForeign, true, 'the global Go');
}
