// The packed package where users build and run: `npm pack`, then
// `npm install <tarball>` into a fresh project, loaded by
// - Node's require() and import on the lowest and highest Node versions
//   package.json's engines names (binaries from npm's `node` package),
// - Bun and Deno (from their npm packages),
// - Vercel's edge-runtime, through the "edge-light" export condition and
//   through init(url) with the runtime's own (foreign) Response,
// - Vite 7 and 8 (dev server and build) and webpack 5, each in Chromium,
// each giving Go's answers for the golden vectors (e2e/check.js), and the
// types under --strict with and without the DOM lib and in each module
// resolution. The tools come from this directory's package.json, installed
// by `bash build.sh setup`, so the library's devDependencies stay lean.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import * as esbuild from 'esbuild';
import { cleanup, onCleanup, repoRoot, run, tempDir, timeout, writeFiles } from '../../testkit/process.js';
import { launchChromium, serve } from '../../testkit/browser.js';
import { bundledEntries } from '../../testkit/workerd.js';
import { assertVectors, e2eDir, loadVectors, openCheckPage } from '../helpers.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const bin = (name) => path.join(here, 'node_modules/.bin', name);
const nodeBin = (version) => path.join(here, `node_modules/node-${version}/bin/node`);

let vectors;
let tarball;
let installed; // <project>/node_modules/edgebloom
let browser;

// Node, Bun and Deno: the package by name; prints the result as JSON.
const mainESM = `import { readFileSync } from 'node:fs';
import * as edgebloom from 'edgebloom';
import { runChecks } from './check.js';
const vectors = JSON.parse(readFileSync(new URL('./vectors.json', import.meta.url), 'utf8'));
const result = await runChecks(edgebloom, vectors);
console.log(JSON.stringify({ resolved: import.meta.resolve('edgebloom'), ...result }));
`;

const mainCJS = `const { readFileSync } = require('node:fs');
const edgebloom = require('edgebloom');
const { runChecks } = require('./check.js');
const vectors = JSON.parse(readFileSync(require.resolve('./vectors.json'), 'utf8'));
runChecks(edgebloom, vectors).then((result) => {
  console.log(JSON.stringify({ resolved: require.resolve('edgebloom'), ...result }));
});
`;

// The web app the bundlers build: reports init()'s error, or the checks.
const webMain = `import * as edgebloom from 'edgebloom';
import { runChecks } from './check.js';
(async () => {
  try {
    await edgebloom.init();
  } catch (err) {
    await window.report({ error: { name: err.name, code: err.code, message: err.message } });
    return;
  }
  await window.report(await runChecks(edgebloom, await window.vectors()));
})();
`;
const webPage = `<!doctype html>
<meta charset="utf-8">
<link rel="icon" href="data:,">
<title>edgebloom ecosystem</title>
<script type="module" src="./main.js"></script>
`;

// An Edge function as Vercel runs one: a fetch listener. POST /check runs
// the checks on the posted vectors; with ?wasm=URL, init(URL) first.
const edgeFunction = `import * as edgebloom from 'edgebloom';
import { runChecks } from './check.js';
addEventListener('fetch', (event) => {
  event.respondWith((async () => {
    const wasm = new URL(event.request.url).searchParams.get('wasm');
    try {
      if (wasm) await edgebloom.init(wasm);
    } catch (err) {
      return Response.json({ error: { code: err.code, message: err.message } });
    }
    return Response.json(await runChecks(edgebloom, await event.request.json()));
  })());
});
`;

/** A fresh project with the tarball installed and the app files above. */
async function project(name, files = {}) {
  const dir = await tempDir(name);
  await writeFiles(dir, {
    'package.json': { name: `edgebloom-${name}`, private: true, type: 'module' },
    'check.js': await readFile(path.join(e2eDir, 'check.js'), 'utf8'),
    'vectors.json': vectors,
    ...files,
  });
  await run('npm', ['install', '--offline', '--no-audit', '--no-fund', tarball], {
    cwd: dir,
    env: { npm_config_cache: path.join(dir, '.npm-cache') },
  });
  return dir;
}

let nodeProject;

before(
  async () => {
    vectors = await loadVectors();
    const packDir = await tempDir('pack');
    await run('npm', ['pack', '--pack-destination', packDir], { cwd: repoRoot });
    tarball = path.join(
      packDir,
      (await readdir(packDir)).find((f) => f.endsWith('.tgz')),
    );
    nodeProject = await project('node', { 'main.js': mainESM, 'main.cjs': mainCJS });
    installed = path.join(nodeProject, 'node_modules/edgebloom');
    browser = await launchChromium();
  },
  { timeout },
);
after(cleanup);

function lastJSON(output) {
  return JSON.parse(output.trim().split('\n').at(-1));
}

// The tests below are mostly waiting on child processes and Chromium: two at
// a time.
describe('the packed package', { concurrency: 2 }, () => {
  // ---- Node versions ------------------------------------------------------------

  // engines: the lowest 20.x with require(esm), the first 22.x with it, and
  // the newest release; both import and require.
  test('engines names the Node versions tested here', async () => {
    const pkg = JSON.parse(await readFile(path.join(installed, 'package.json'), 'utf8'));
    assert.equal(pkg.engines.node, '^20.19.0 || >=22.12.0');
  });

  for (const version of ['20.19.0', '22.12.0', '26.10.0']) {
    test(`Node ${version}: require('edgebloom') and import 'edgebloom'`, { timeout }, async () => {
      assert.equal((await run(nodeBin(version), ['--version'])).trim(), `v${version}`);
      for (const main of ['main.cjs', 'main.js']) {
        const result = lastJSON(await run(nodeBin(version), [main], { cwd: nodeProject }));
        assert.equal(result.resolved.replace(/^file:\/\//, ''), path.join(installed, 'js/node.js'), main);
        assertVectors(result);
      }
    });
  }

  // ---- Bun and Deno --------------------------------------------------------------

  test('Bun runs the Node entry', { timeout }, async () => {
    const result = lastJSON(await run(bin('bun'), ['main.js'], { cwd: nodeProject }));
    assert.equal(result.resolved.replace(/^file:\/\//, ''), path.join(installed, 'js/node.js'));
    assertVectors(result);
  });

  test(
    'Deno runs the Node entry with read access to the package (and fails saying so without it)',
    { timeout },
    async () => {
      const env = { DENO_DIR: path.join(nodeProject, '.deno'), DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' };
      const args = (...flags) => ['run', '--no-prompt', ...flags, 'main.js'];
      const denied = lastJSON(await run(bin('deno'), args('--allow-read=vectors.json'), { cwd: nodeProject, env }));
      assert.equal(denied.failures.length, 1, JSON.stringify(denied));
      assert.match(
        denied.failures[0],
        /NotCapable: Requires read access to ".*\/node_modules\/edgebloom\/js\/edgebloom\.wasm"/,
      );
      const read = '--allow-read=vectors.json,node_modules/edgebloom';
      const result = lastJSON(await run(bin('deno'), args(read), { cwd: nodeProject, env }));
      assert.match(result.resolved, /\/node_modules\/edgebloom\/js\/node\.js$/);
      assertVectors(result);
    },
  );

  // ---- Vercel's edge-runtime ------------------------------------------------------

  // What Vercel and Next.js make of a `.wasm?module` import: the module
  // compiled by the host, handed to the function's context as a global
  // (so a WebAssembly.Module of another realm).
  const wasmModulePlugin = (globals) => ({
    name: 'wasm-module',
    setup(build) {
      build.onResolve({ filter: /\.wasm\?module$/ }, (args) => ({
        path: path.join(args.resolveDir, args.path.replace(/\?module$/, '')),
        namespace: 'wasm-module',
      }));
      build.onLoad({ filter: /.*/, namespace: 'wasm-module' }, async (args) => {
        const bytes = await readFile(args.path);
        const name = `wasm_${createHash('sha1').update(bytes).digest('hex')}`;
        globals[name] = await WebAssembly.compile(bytes);
        return { contents: `export default globalThis[${JSON.stringify(name)}];`, loader: 'js' };
      });
    },
  });

  async function edgeRuntime(dir, conditions) {
    const globals = {};
    const build = await esbuild.build({
      absWorkingDir: dir,
      entryPoints: ['edge.js'],
      bundle: true,
      format: 'iife',
      platform: 'browser',
      conditions,
      write: false,
      metafile: true,
      logLevel: 'silent',
      plugins: [wasmModulePlugin(globals)],
    });
    const entries = bundledEntries(build.metafile);
    const { EdgeRuntime } = await import('edge-runtime');
    const runtime = new EdgeRuntime({
      initialCode: build.outputFiles[0].text,
      extend: (context) => Object.assign(context, globals),
    });
    return { runtime, entries };
  }

  test(
    'edge-runtime: the "edge-light" condition takes js/edge-light.js and its .wasm?module',
    { timeout },
    async () => {
      const dir = await project('edge', { 'edge.js': edgeFunction });
      // Vercel's conditions for an Edge function.
      const { runtime, entries } = await edgeRuntime(dir, ['edge-light', 'worker', 'browser']);
      assert.deepEqual(entries, ['edge-light']);
      const res = await runtime.dispatchFetch('http://127.0.0.1/check', {
        method: 'POST',
        body: JSON.stringify(vectors),
      });
      assertVectors(await res.json());
    },
  );

  // The runtime's fetch gives a Response of its own realm, which the host's
  // compileStreaming refuses: init() reads it with arrayBuffer() instead.
  test("edge-runtime: init(url) with the runtime's own Response served as application/wasm", { timeout }, async () => {
    const dir = await project('edge-url', { 'edge.js': edgeFunction });
    const server = await serve({ dirs: { '/': path.join(installed, 'js') } });
    const { runtime, entries } = await edgeRuntime(dir, ['browser']);
    assert.deepEqual(entries, ['index']);
    const url = `http://127.0.0.1/check?wasm=${encodeURIComponent(`${server.origin}/edgebloom.wasm`)}`;
    const res = await runtime.dispatchFetch(url, { method: 'POST', body: JSON.stringify(vectors) });
    assertVectors(await res.json());
    assert.ok(server.log.includes('GET /edgebloom.wasm 200'), server.log.join('\n'));
  });

  // ---- bundlers in Chromium --------------------------------------------------------

  /** Starts a long-running child (a dev server) and resolves with the URL it prints. */
  function startServer(args, cwd) {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, args, { cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      onCleanup(() => {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch (err) {
          if (err.code !== 'ESRCH') throw err;
        }
      });
      const onData = (d) => {
        output += d;
        const url = output.match(/listening (http:\/\/127\.0\.0\.1:\d+\/)/)?.[1];
        if (url) resolve(url);
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      child.on('close', (code) => reject(new Error(`${args.join(' ')} exited with ${code}:\n${output}`)));
    });
  }

  async function webProject(name, config) {
    const files = { 'index.html': webPage, 'main.js': webMain };
    if (config) files['tool-config.json'] = config;
    return project(name, files);
  }

  // Serves dist/ and opens its index.html (webpack writes none: pass one).
  async function openBuilt(dir, indexHtml) {
    const pages = indexHtml ? { '/index.html': indexHtml } : {};
    const server = await serve({ pages, dirs: { '/': path.join(dir, 'dist') } });
    return openCheckPage(browser, `${server.origin}/index.html`, vectors);
  }

  async function devServer(toolName, dir, withConfig) {
    const args = [path.join(here, 'tool.js'), toolName, 'dev', dir];
    if (withConfig) args.push(path.join(dir, 'tool-config.json'));
    return startServer(args, dir);
  }

  // Vite 7's dev server pre-bundles the package into node_modules/.vite/deps
  // and answers the wasm's URL there with index.html: without docs/npm.md's
  // optimizeDeps line, init() says so.
  test('Vite 7 dev server: without optimizeDeps.exclude, ERR_WASM_FETCH naming the URL', { timeout }, async () => {
    const dir = await webProject('vite7-dev-plain');
    const { result } = await openCheckPage(browser, await devServer('vite7', dir), vectors);
    assert.equal(result.error?.code, 'ERR_WASM_FETCH', JSON.stringify(result));
    assert.match(
      result.error.message,
      /\/node_modules\/\.vite\/deps\/edgebloom\.wasm\S* \(status 200, Content-Type text\/html\)/,
    );
  });

  const viteExclude = { optimizeDeps: { exclude: ['edgebloom'] } };
  for (const { name, toolName, config } of [
    { name: 'Vite 7 dev server, optimizeDeps.exclude', toolName: 'vite7', config: viteExclude },
    { name: 'Vite 8 dev server', toolName: 'vite8' },
  ]) {
    test(name, { timeout }, async () => {
      const dir = await webProject(`${toolName}-dev`, config);
      const { result } = await openCheckPage(browser, await devServer(toolName, dir, config), vectors);
      assertVectors(result);
    });
  }

  for (const { name, toolName } of [
    { name: 'Vite 7 build', toolName: 'vite7' },
    { name: 'Vite 8 build', toolName: 'vite8' },
  ]) {
    test(name, { timeout }, async () => {
      const dir = await webProject(`${toolName}-build`);
      await run(process.execPath, [path.join(here, 'tool.js'), toolName, 'build', dir], { cwd: dir });
      const emitted = await readdir(path.join(dir, 'dist/assets'));
      assert.ok(
        emitted.some((f) => /^edgebloom-.*\.wasm$/.test(f)),
        `the wasm is an asset: ${emitted}`,
      );
      const { result } = await openBuilt(dir);
      assertVectors(result);
    });
  }

  test('webpack 5 build, no configuration', { timeout }, async () => {
    const dir = await webProject('webpack');
    await run(process.execPath, [path.join(here, 'tool.js'), 'webpack', 'build', dir], { cwd: dir });
    const emitted = await readdir(path.join(dir, 'dist'));
    assert.ok(
      emitted.some((f) => f.endsWith('.wasm')),
      `the wasm is an asset: ${emitted}`,
    );
    // webpack's output is a classic script, which finds its public path (the
    // wasm's URL) through document.currentScript.
    const { result } = await openBuilt(dir, webPage.replace('type="module" ', ''));
    assertVectors(result);
  });

  // ---- types ---------------------------------------------------------------------

  // Without skipLibCheck, so index.d.ts itself is checked: lib ES2022 with
  // @types/node (no DOM), with the DOM, and each module resolution.
  test('types: tsc --strict, with and without the DOM lib, each moduleResolution', { timeout }, async () => {
    const dir = await project('types', { 'usage.ts': await readFile(path.join(e2eDir, 'usage.ts'), 'utf8') });
    const typeRoots = [path.join(here, 'node_modules/@types')];
    const configs = [
      { lib: ['es2022'], types: ['node'], module: 'nodenext', moduleResolution: 'nodenext' },
      { lib: ['es2022'], types: ['node'], module: 'node16', moduleResolution: 'node16' },
      { lib: ['es2022'], types: ['node'], module: 'esnext', moduleResolution: 'bundler' },
      { lib: ['es2022', 'dom'], types: [], module: 'esnext', moduleResolution: 'bundler' },
      { lib: ['es2022', 'dom'], types: [], module: 'nodenext', moduleResolution: 'nodenext' },
      { lib: ['es2022', 'dom'], types: ['node'], module: 'node16', moduleResolution: 'node16' },
    ];
    const files = configs.map(
      (c) => `tsconfig.${c.lib.join('-')}${c.types.length ? '-types-node' : ''}-${c.moduleResolution}.json`,
    );
    await writeFiles(
      dir,
      Object.fromEntries(
        configs.map((c, i) => [
          files[i],
          { compilerOptions: { strict: true, noEmit: true, target: 'es2022', typeRoots, ...c }, files: ['usage.ts'] },
        ]),
      ),
    );
    // One tsc process checks them all (it reads the libs once); --verbose
    // names the config of each error.
    const tsc = path.join(repoRoot, 'node_modules/typescript/bin/tsc');
    await run(process.execPath, [tsc, '-b', '--verbose', ...files], { cwd: dir });
  });
});
