// What the published package offers is what index.d.ts declares: every
// entry point of package.json's "exports" (one a runtime) exports exactly
// the values the types declare, no test helper among them, and the files
// the package ships import nothing of js/test/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import * as edgebloom from 'edgebloom';

const root = new URL('../../', import.meta.url);
const pkg = JSON.parse(await readFile(new URL('package.json', root), 'utf8'));
const types = await readFile(new URL('js/index.d.ts', root), 'utf8');
const declared = [...types.matchAll(/^export (?:declare )?(?:function|class|const) (\w+)/gm)].map((m) => m[1]);
const want = [...new Set(declared)].sort();

// exported returns the names module file (a path from the root) exports
// and the files it reads, following its relative imports and re-exports
// (the files of js/ use static ESM only: no dynamic import(), no require).
// Read, not imported: Node cannot import the workerd entry, which imports
// edgebloom.wasm.
async function exported(file, seen = new Set()) {
  seen.add(file);
  const src = await readFile(new URL(file, root), 'utf8');
  const names = new Set();
  for (const m of src.matchAll(/^export (?:async )?(?:function\*?|class|const|let) (\w+)/gm)) names.add(m[1]);
  for (const m of src.matchAll(/^export \{([^}]*)\}/gm)) {
    for (const part of m[1].split(','))
      if (part.trim())
        names.add(
          part
            .trim()
            .split(/\s+as\s+/)
            .pop(),
        );
  }
  for (const m of src.matchAll(/^(?:import|export)\b[^;]*?from '([^']+)'|^import '([^']+)'/gm)) {
    const spec = m[1] ?? m[2];
    if (spec.startsWith('node:')) continue;
    const dep = new URL(spec, new URL(file, root)).href.slice(root.href.length);
    if (!seen.has(dep) && dep.endsWith('.js')) await exported(dep, seen);
  }
  for (const m of src.matchAll(/^export \* from '([^']+)'/gm)) {
    const dep = new URL(m[1], new URL(file, root)).href.slice(root.href.length);
    for (const n of (await exported(dep, new Set())).names) names.add(n);
  }
  return { names: [...names].sort(), files: [...seen] };
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
    const { names, files } = await exported(entry.replace(/^\.\//, ''));
    assert.deepEqual(names, want);
    assert.ok(files.length > 5, `files: ${files}`);
    for (const p of files) {
      assert.match(p, /^js\/[\w-]+\.js$/, `${entry} imports ${p}, which is not a file the package ships (js/*.js)`);
    }
  });
}

test('"files" ships js/*.js, which holds no test kit', () => {
  assert.ok(pkg.files.includes('js/*.js'));
  assert.ok(!pkg.files.some((f) => f.includes('test')), `files: ${pkg.files}`);
  assert.deepEqual(Object.keys(pkg.exports).sort(), ['.', './edgebloom.wasm', './package.json']);
});
