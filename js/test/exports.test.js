// What the published package offers is what index.d.ts declares: every
// entry point of package.json's "exports" (one a runtime) exports exactly
// the values the types declare, no test helper among them, and the files
// the package ships import nothing of js/test/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import * as edgebloom from 'edgebloom';

const root = new URL('../../', import.meta.url);
const pkg = JSON.parse(await readFile(new URL('package.json', root), 'utf8'));
const types = await readFile(new URL('js/index.d.ts', root), 'utf8');
const declared = [...types.matchAll(/^export (?:declare )?(?:function|class|const) (\w+)/gm)].map((m) => m[1]);
const want = [...new Set(declared)].sort();

// bundle returns the names entry (a path from the root) exports and the
// files its bundle reads, as esbuild bundles it for a browser or a Worker
// (Node cannot import the workerd entry, which imports edgebloom.wasm).
async function bundle(entry) {
  const out = await build({
    entryPoints: [fileURLToPath(new URL(entry, root))],
    absWorkingDir: fileURLToPath(root),
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    write: false,
    outdir: 'out',
    metafile: true,
    logLevel: 'silent',
    loader: { '.wasm': 'file' },
    external: ['node:*'],
  });
  const [output] = Object.values(out.metafile.outputs).filter((o) => o.entryPoint);
  return { names: [...output.exports].sort(), files: Object.keys(out.metafile.inputs) };
}

test('index.d.ts declares the API, and no name that looks internal', () => {
  assert.ok(want.length >= 15, `declared: ${want}`);
  for (const name of ['init', 'BloomFilter', 'fromBytes', 'applyDelta', 'MAX_BITS'])
    assert.ok(want.includes(name), name);
  assert.deepEqual(
    want.filter((n) => n.startsWith('_')),
    [],
  );
});

test('the package, imported by name in Node, exports what index.d.ts declares', () => {
  assert.deepEqual(Object.keys(edgebloom).sort(), want);
});

const entries = Object.entries(pkg.exports['.']).filter(([condition]) => condition !== 'types');

for (const [condition, entry] of entries) {
  test(`the "${condition}" entry (${entry}) exports what index.d.ts declares and ships no test code`, async () => {
    const { names, files } = await bundle(entry);
    assert.deepEqual(names, want);
    const code = files.filter((p) => !/\.wasm(\?module)?$/.test(p));
    assert.ok(code.length > 5, `files: ${files}`);
    for (const p of code) {
      assert.match(p, /^js\/[\w-]+\.js$/, `${entry} imports ${p}, which is not a file the package ships (js/*.js)`);
    }
  });
}

test('"files" ships js/*.js, which holds no test kit', () => {
  assert.ok(pkg.files.includes('js/*.js'));
  assert.ok(!pkg.files.some((f) => f.includes('test')), `files: ${pkg.files}`);
  assert.deepEqual(Object.keys(pkg.exports).sort(), ['.', './edgebloom.wasm', './package.json']);
});
