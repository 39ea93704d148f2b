// Shared pieces of the e2e tests: a static server with explicit MIME types,
// Chromium (Debian's, through playwright-core) that may only talk to
// 127.0.0.1, child processes run in their own process group, temp dirs, and
// the golden vectors.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

export const repoRoot = fileURLToPath(new URL('..', import.meta.url));
export const e2eDir = fileURLToPath(new URL('.', import.meta.url));
export const vectorsPath = path.join(repoRoot, 'bloom/testdata/vectors.json');

// ---- temp dirs and cleanup --------------------------------------------------

/** A fresh temp dir; removed by cleanup(). */
export async function tempDir(prefix) {
  const dir = await mkdtemp(path.join(tmpdir(), `edgebloom-e2e-${prefix}-`));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const cleanups = [];

/** Runs fn at cleanup(), latest first. */
export function onCleanup(fn) {
  cleanups.push(fn);
}

/** Stops and removes everything started through this module. For `after`. */
export async function cleanup() {
  const errors = [];
  while (cleanups.length) {
    try {
      await cleanups.pop()();
    } catch (err) {
      errors.push(err);
    }
  }
  if (errors.length) throw new AggregateError(errors, 'e2e cleanup failed');
}

/** Writes files ({relative path: contents}) under dir, making directories. */
export async function writeFiles(dir, files) {
  for (const [name, contents] of Object.entries(files)) {
    const file = path.join(dir, name);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, typeof contents === 'string' ? contents : JSON.stringify(contents, null, 2));
  }
}

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

// ---- child processes ----------------------------------------------------------

/**
 * Runs a command in its own process group and resolves with its output when
 * it exits with status 0; rejects with the output otherwise. cleanup() kills
 * the group if it is still running.
 */
export function run(cmd, args, { cwd = repoRoot, env = {} } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd,
      env: { ...process.env, ...quietEnv, ...env },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    let running = true;
    cleanups.push(() => {
      if (!running) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch (err) {
        if (err.code !== 'ESRCH') throw err;
      }
    });
    child.on('error', (err) => {
      running = false;
      reject(err);
    });
    child.on('close', (code, signal) => {
      running = false;
      if (code === 0) resolve(output);
      else reject(new Error(`${cmd} ${args.join(' ')} (in ${cwd}) exited with ${code ?? signal}:\n${output}`));
    });
  });
}

// No telemetry, no update checks, no audit: nothing beyond this machine.
const quietEnv = {
  WRANGLER_SEND_METRICS: 'false',
  WRANGLER_HIDE_BANNER: 'true',
  CI: '1',
  NO_COLOR: '1',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
};

/** Runs wrangler from this repo's node_modules. */
export function wrangler(args, opts) {
  return run(process.execPath, [path.join(repoRoot, 'node_modules/wrangler/bin/wrangler.js'), ...args], opts);
}

/**
 * Bundles the Worker in projectDir (its wrangler.jsonc) with
 * `wrangler deploy --dry-run` and returns the outdir, the files wrangler
 * emitted there, the entry's name and text, and esbuild's metafile.
 */
export async function wranglerBundle(projectDir) {
  const outdir = path.join(projectDir, 'dist');
  const metafile = path.join(projectDir, 'bundle-meta.json');
  await wrangler(['deploy', '--dry-run', '--outdir', outdir, '--metafile', metafile], {
    cwd: projectDir,
    env: { WRANGLER_LOG_PATH: path.join(projectDir, 'wrangler-logs') },
  });
  const files = await readdir(outdir, { recursive: true });
  const entry = files.find((f) => f === 'index.js') ?? files.find((f) => f.endsWith('.js'));
  return {
    outdir,
    files,
    entry,
    text: await readFile(path.join(outdir, entry), 'utf8'),
    meta: JSON.parse(await readFile(metafile, 'utf8')),
  };
}

/** The package's entry points (index.js, node.js, workerd.js, edge-light.js) that an esbuild metafile lists as inputs. */
export function bundledEntries(meta) {
  const names = Object.keys(meta.inputs)
    .map((f) => f.match(/(?:^|\/)js\/(index|node|workerd|edge-light)\.js$/)?.[1])
    .filter(Boolean);
  return [...new Set(names)].sort();
}

// ---- static server ------------------------------------------------------------

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.map': 'application/json',
};

/**
 * A static server on 127.0.0.1 and an ephemeral port.
 * - pages: {'/path': html or {type, body}} served as given;
 * - dirs: {'/prefix/': directory} served from disk (no listings, no '..');
 * - wasmType: the Content-Type of .wasm files ('application/wasm', or
 *   'application/octet-stream' to make the loader take its arrayBuffer path).
 * Records every request as `${method} ${url} ${status}`. Closed by cleanup().
 */
export async function serve({ pages = {}, dirs = {}, wasmType = 'application/wasm' } = {}) {
  const log = [];
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    const reply = (status, type, body) => {
      log.push(`${req.method} ${url.pathname} ${status}`);
      res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store' });
      res.end(body);
    };
    const page = pages[url.pathname];
    if (page !== undefined) {
      return typeof page === 'string' ? reply(200, MIME['.html'], page) : reply(200, page.type, page.body);
    }
    for (const [prefix, dir] of Object.entries(dirs)) {
      if (!url.pathname.startsWith(prefix)) continue;
      const file = path.join(dir, decodeURIComponent(url.pathname.slice(prefix.length)));
      const ext = path.extname(file);
      if (!file.startsWith(dir + path.sep) || !(ext in MIME)) break;
      try {
        return reply(200, ext === '.wasm' ? wasmType : MIME[ext], await readFile(file));
      } catch {
        break;
      }
    }
    reply(404, 'text/plain', 'not found');
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  cleanups.push(
    () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { origin: `http://127.0.0.1:${server.address().port}`, log };
}

/** The package's files, for serve({dirs}): /js/ is the repo's js/. */
export const packageDirs = { '/js/': path.join(repoRoot, 'js'), '/e2e/': e2eDir.replace(/\/$/, '') };

// ---- Chromium -----------------------------------------------------------------

export const chromiumFlags = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  // Belt and braces for "nothing beyond 127.0.0.1": no name resolves.
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
];

// Schemes that never leave the browser.
const localSchemes = new Set(['data:', 'blob:', 'about:', 'chrome-extension:', 'chrome:', 'devtools:']);

/**
 * Launches Debian's Chromium with a fresh profile (closed and removed by
 * cleanup()). With extensionDir, loads that unpacked extension.
 * Every request any page makes is recorded in `requests`; one to a host
 * other than 127.0.0.1 is aborted and recorded in `blocked`. Console errors
 * (of pages and workers) and uncaught errors are recorded in `errors`.
 * assertClean() fails on either.
 */
export async function launchChromium({ extensionDir } = {}) {
  const userDataDir = await tempDir('profile');
  const args = [...chromiumFlags];
  if (extensionDir) args.push(`--disable-extensions-except=${extensionDir}`, `--load-extension=${extensionDir}`);
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args,
    // playwright-core turns extensions off by default.
    ignoreDefaultArgs: extensionDir ? ['--disable-extensions'] : [],
    timeout: 60_000,
  });
  cleanups.push(() => context.close());
  // Generous: the machine may be busy. Waits are on events, not on time.
  context.setDefaultTimeout(60_000);

  const requests = [];
  const blocked = [];
  const errors = [];
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    requests.push(url.href);
    if (localSchemes.has(url.protocol) || url.hostname === '127.0.0.1') return route.continue();
    blocked.push(url.href);
    return route.abort('blockedbyclient');
  });
  // The context's console has the pages', their workers' and the service
  // workers' messages.
  context.on('console', (msg) => {
    const where = msg.worker?.()?.url() ?? msg.page()?.url();
    if (msg.type() === 'error') errors.push(`console error in ${where}: ${msg.text()}`);
  });
  context.on('weberror', (err) => errors.push(`uncaught in ${err.page()?.url()}: ${err.error().stack}`));

  return {
    context,
    requests,
    blocked,
    errors,
    /** Fails if any request left 127.0.0.1 or any page logged an error. */
    assertClean() {
      assert.deepEqual(blocked, [], 'requests to hosts other than 127.0.0.1');
      assert.deepEqual(errors, [], 'console errors or page errors');
    },
  };
}

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

/** The node:test timeout of each e2e test: long enough for a busy machine, short of forever. */
export const timeout = 180_000;

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

/**
 * Runs a bundle from wranglerBundle in Miniflare (workerd) with the config
 * from writeWorkerProject, and extra Miniflare options (durableObjects, …);
 * disposed by cleanup().
 */
export async function startMiniflare(bundle, config, extra = {}) {
  const { Miniflare } = await import('miniflare'); // large: loaded only by the tests that need it
  const mf = new Miniflare({
    host: '127.0.0.1',
    port: 0,
    cf: false,
    compatibilityDate: config.compatibility_date,
    compatibilityFlags: config.compatibility_flags,
    modules: true,
    modulesRoot: bundle.outdir,
    scriptPath: path.join(bundle.outdir, bundle.entry),
    modulesRules: [{ type: 'CompiledWasm', include: ['**/*.wasm'] }],
    ...extra,
  });
  cleanups.push(() => mf.dispose());
  await mf.ready;
  return mf;
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
