// The package imported by name through each condition of its exports map:
// which file each resolver picks (Node, esbuild as a browser bundler and as
// wrangler runs it), and that every entry point exports the same names.

import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, test } from 'node:test';
import * as esbuild from 'esbuild';
import { cleanup, repoRoot, run, tempDir, timeout } from '../testkit/process.js';
import { bundledEntries } from '../testkit/workerd.js';
import { linkPackage } from './helpers.js';

let dir;
before(
  async () => {
    dir = await tempDir('exports');
    await linkPackage(dir);
  },
  { timeout },
);
after(cleanup);

// Node: import.meta.resolve with the conditions node adds (node, import)
// and those given with --conditions.
for (const { conditions, want } of [
  { conditions: [], want: 'node' },
  // "node" is listed before "browser": a browser condition does not win in Node.
  { conditions: ['browser'], want: 'node' },
  { conditions: ['workerd'], want: 'workerd' },
]) {
  test(`node ${conditions.map((c) => `--conditions=${c} `).join('')}resolves js/${want}.js`, { timeout }, async () => {
    const script = "console.log(import.meta.resolve('edgebloom'), import.meta.resolve('edgebloom/edgebloom.wasm'));";
    const args = [...conditions.map((c) => `--conditions=${c}`), '--input-type=module', '-e', script];
    const [entry, wasm] = (await run(process.execPath, args, { cwd: dir })).trim().split(' ');
    // node_modules/edgebloom links to the repo, and Node resolves links.
    assert.equal(path.relative(repoRoot, new URL(entry).pathname), `js/${want}.js`);
    assert.equal(path.relative(repoRoot, new URL(wasm).pathname), 'js/edgebloom.wasm');
  });
}

test('Node imports the package by name, and init() loads the wasm', { timeout }, async () => {
  const script = `import { init, BloomFilter } from 'edgebloom';
await init();
const f = new BloomFilter({ capacity: 10, errorRate: 0.01 });
console.log(JSON.stringify([f.add('a'), f.add('a'), f.has('a'), f.has('b')]));`;
  const output = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: dir });
  assert.deepEqual(JSON.parse(output), [true, false, true, false]);
});

// esbuild, as bundlers resolve: platform browser; wrangler's conditions
// (workerd, worker, browser), also with platform node as nodejs_compat
// projects may set; platform node; Vercel's Edge conditions.
const wranglers = ['workerd', 'worker', 'browser'];
const bundlers = [
  { name: 'platform browser', options: { platform: 'browser' }, want: 'index' },
  { name: 'platform neutral', options: { platform: 'neutral' }, want: 'index' },
  { name: "wrangler's conditions", options: { platform: 'browser', conditions: wranglers }, want: 'workerd' },
  {
    name: "wrangler's conditions, platform node",
    options: { platform: 'node', conditions: wranglers },
    want: 'workerd',
  },
  {
    name: 'a web worker (worker, browser)',
    options: { platform: 'browser', conditions: ['worker', 'browser'] },
    want: 'index',
  },
  { name: 'platform node', options: { platform: 'node' }, want: 'node' },
  // Vercel's Edge functions and Next.js middleware.
  {
    name: "Vercel Edge's conditions",
    options: { platform: 'browser', conditions: ['edge-light', 'worker', 'browser'] },
    want: 'edge-light',
  },
];

const exported = {};
for (const { name, options, want } of bundlers) {
  test(`esbuild, ${name}: js/${want}.js`, { timeout }, async () => {
    const result = await esbuild.build({
      ...options,
      absWorkingDir: dir,
      stdin: { contents: "export * from 'edgebloom';", resolveDir: dir },
      bundle: true,
      format: 'esm',
      write: false,
      metafile: true,
      external: ['*.wasm', '*.wasm?module'],
      logLevel: 'silent',
    });
    assert.deepEqual(bundledEntries(result.metafile), [want]);
    const [output] = Object.values(result.metafile.outputs);
    exported[want] = output.exports.sort();
  });
}

test('every entry point exports the same names', () => {
  assert.deepEqual(Object.keys(exported).sort(), ['edge-light', 'index', 'node', 'workerd']);
  assert.ok(exported.index.includes('init'), `exports: ${exported.index}`);
  assert.ok(exported.index.includes('BlockedBloomFilter'), `exports: ${exported.index}`);
  assert.deepEqual(exported.node, exported.index);
  assert.deepEqual(exported.workerd, exported.index);
  assert.deepEqual(exported['edge-light'], exported.index);
});
