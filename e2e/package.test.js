// The package as users get it: `npm pack` (which builds the wasm), then
// `npm install <tarball>` into a fresh project that uses it from Node, from
// an esbuild browser bundle in Chromium, from a Worker bundled by wrangler,
// and from TypeScript with --strict.

import assert from 'node:assert/strict';
import { copyFile, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import * as esbuild from 'esbuild';
import { cleanup, repoRoot, run, tempDir, timeout, writeFiles } from '../testkit/process.js';
import { launchChromium, serve } from '../testkit/browser.js';
import { startMiniflare } from '../testkit/workerd.js';
import {
  assertVectors,
  assertWorker,
  assertWorkerdBundle,
  checkPageHtml,
  checkPageModule,
  e2eDir,
  loadVectors,
  openCheckPage,
  writeWorkerProject,
} from './helpers.js';

let vectors;
let tarball;
let project; // the consumer: a Worker project (src/) plus the files below
let installed; // project/node_modules/edgebloom
let workerConfig;

// Node: the package by name, the golden vectors; prints the result as JSON.
const nodeMain = `
import { readFileSync } from 'node:fs';
import * as edgebloom from 'edgebloom';
import { runChecks } from './src/check.js';
const vectors = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const result = await runChecks(edgebloom, vectors);
console.log(JSON.stringify({ resolved: import.meta.resolve('edgebloom'), ...result }));
`;

// The browser app that esbuild bundles: the same checks, in a page.
const browserApp = checkPageModule({ edgebloom: 'edgebloom', check: './src/check.js' });

// A strict consumer, without skipLibCheck: the .d.ts itself is checked.
const tsconfig = (lib) => ({
  compilerOptions: {
    strict: true,
    noEmit: true,
    target: 'es2022',
    module: 'nodenext',
    moduleResolution: 'nodenext',
    lib,
    types: [],
  },
  files: ['usage.ts'],
});

before(
  async () => {
    vectors = await loadVectors();
    const packDir = await tempDir('pack');
    await run('npm', ['pack', '--pack-destination', packDir], { cwd: repoRoot });
    tarball = path.join(
      packDir,
      (await readdir(packDir)).find((f) => f.endsWith('.tgz')),
    );

    project = await tempDir('consumer');
    workerConfig = await writeWorkerProject(project);
    await writeFiles(project, {
      'main.js': nodeMain,
      'app.js': browserApp,
      'usage.ts': await readFile(path.join(e2eDir, 'usage.ts'), 'utf8'),
      'vectors.json': vectors,
      'tsconfig.json': tsconfig(['es2022', 'dom']),
      'tsconfig.esnext.json': tsconfig(['esnext', 'dom']),
    });
    await run('npm', ['install', '--offline', '--no-audit', '--no-fund', tarball], {
      cwd: project,
      env: { npm_config_cache: path.join(project, '.npm-cache') },
    });
    installed = path.join(project, 'node_modules/edgebloom');
  },
  { timeout },
);
after(cleanup);

test('the tarball holds the module, its wasm and types, and no tests or Go sources', { timeout }, async () => {
  const files = (await run('tar', ['-tzf', tarball])).trim().split('\n');
  for (const name of ['api', 'core', 'load', 'index', 'node', 'workerd', 'edge-light', 'wasm_exec']) {
    assert.ok(files.includes(`package/js/${name}.js`), `package/js/${name}.js in ${files}`);
  }
  assert.ok(files.includes('package/js/edgebloom.wasm'), `package/js/edgebloom.wasm in ${files}`);
  assert.ok(files.includes('package/js/index.d.ts'), `package/js/index.d.ts in ${files}`);
  const unwanted = files.filter((f) =>
    /\.go$|\/go\.(mod|sum)$|^package\/js\/test\/|^package\/(bloom|wasm|bench|worker|web-demo|e2e|testkit)\//.test(f),
  );
  assert.deepEqual(unwanted, []);
});

test('Node imports the installed package by name', { timeout }, async () => {
  const output = await run(process.execPath, ['main.js', 'vectors.json'], { cwd: project });
  const result = JSON.parse(output.trim().split('\n').at(-1));
  assert.equal(result.resolved, `file://${installed}/js/node.js`);
  assertVectors(result);
});

test('an esbuild browser bundle, with the wasm copied next to it, in Chromium', { timeout }, async () => {
  const site = path.join(project, 'site');
  const build = await esbuild.build({
    absWorkingDir: project,
    entryPoints: ['app.js'],
    bundle: true,
    platform: 'browser',
    format: 'esm',
    outfile: path.join(site, 'app.js'),
    metafile: true,
    logLevel: 'silent',
  });
  const inputs = Object.keys(build.metafile.inputs).filter((f) => f.startsWith('node_modules/edgebloom/'));
  assert.ok(inputs.includes('node_modules/edgebloom/js/index.js'), `bundled: ${inputs}`);
  assert.deepEqual(
    inputs.filter((f) => /js\/(node|workerd)\.js$/.test(f)),
    [],
  );
  // What docs/npm.md tells users: esbuild does not copy the wasm.
  await copyFile(path.join(installed, 'js/edgebloom.wasm'), path.join(site, 'edgebloom.wasm'));

  const server = await serve({ pages: { '/': checkPageHtml({ module: "import '/app.js';" }) }, dirs: { '/': site } });
  const browser = await launchChromium();
  const { result } = await openCheckPage(browser, `${server.origin}/`, vectors);
  assertVectors(result);
  assert.ok(server.log.includes('GET /edgebloom.wasm 200'), server.log.join('\n'));
  browser.assertClean();
});

test('a Worker bundled by wrangler uses the workerd build of the installed package', { timeout }, async () => {
  const bundle = await assertWorkerdBundle(project, installed);
  await assertWorker(await startMiniflare(bundle, workerConfig), vectors);
});

// Two libs: es2022 (no Symbol.dispose in TypeScript's lib) and esnext.
test('types: tsc --strict on a usage file', { concurrency: 2, timeout }, async (t) => {
  const tsc = path.join(repoRoot, 'node_modules/typescript/bin/tsc');
  await Promise.all(
    ['tsconfig.json', 'tsconfig.esnext.json'].map((config) =>
      t.test(config, () => run(process.execPath, [tsc, '-p', config], { cwd: project })),
    ),
  );
});
