// The package as the registry and the ecosystem's package linters see it:
// the files `npm publish` would upload (its dry run, against a registry on
// 127.0.0.1 that is never reached), and the packed tarball through publint
// and @arethetypeswrong/cli (attw), both clean.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';
import { cleanup, quietEnv, repoRoot, run, tempDir, timeout } from '../testkit/process.js';

const pkg = JSON.parse(await readFile(path.join(repoRoot, 'package.json'), 'utf8'));

// What the package holds, and nothing else: the module, its engine and
// glue, its types, the docs its README sends npm users to, the changelog.
// No tests, benches, examples, Go sources or tools.
const expected = [
  'CHANGELOG.md',
  'LICENSE',
  'README.md',
  'docs/format.md',
  'docs/npm.md',
  ...[
    'abi',
    'api',
    'args',
    'blocked',
    'canonical',
    'changes',
    'classic',
    'core',
    'counting',
    'crc32',
    'decode',
    'delta',
    'edge-light',
    'errors',
    'filter',
    'index',
    'keys',
    'load',
    'node',
    'rice',
    'scalable',
    'sharded',
    'sizing',
    'stream',
    'version',
    'wasm_exec',
    'window',
    'workerd',
  ].map((name) => `js/${name}.js`),
  'js/edgebloom.wasm',
  'js/index.d.ts',
  'package.json',
].sort();

let files; // what npm publish --dry-run lists
let tarball;

before(
  async () => {
    // prepack builds the engine, as for a real publish; --json prints the
    // package's summary on stdout after the build's own lines.
    const { stdout } = await promisify(execFile)(
      'npm',
      ['publish', '--dry-run', '--json', '--registry', 'http://127.0.0.1:9/'],
      { cwd: repoRoot, env: { ...process.env, ...quietEnv }, maxBuffer: 16 << 20 },
    );
    const summary = JSON.parse(stdout.slice(stdout.search(/^\{$/m)));
    files = summary[pkg.name].files.map((f) => f.path).sort();
    const dir = await tempDir('registry');
    // The engine prepack just built goes in as it is.
    await run('npm', ['pack', '--ignore-scripts', '--pack-destination', dir]);
    tarball = path.join(
      dir,
      (await readdir(dir)).find((f) => f.endsWith('.tgz')),
    );
  },
  { timeout },
);
after(cleanup);

test('npm publish --dry-run uploads the expected files', () => {
  assert.deepEqual(files, expected);
});

// imports returns the relative module specifiers of a JavaScript file:
// static imports and re-exports, and the URLs of files it reads beside it
// (new URL('./x', import.meta.url)).
const imports = (source) => [
  ...[...source.matchAll(/^\s*(?:import|export)\s[^'"]*?from\s*'(\.[^']+)'/gm)].map((m) => m[1]),
  ...[...source.matchAll(/^\s*import\s*'(\.[^']+)'/gm)].map((m) => m[1]),
  ...[...source.matchAll(/new URL\('(\.[^']+)', import\.meta\.url\)/g)].map((m) => m[1]),
];

test('every file an entry point reaches is in the package', async () => {
  const entries = [
    pkg.main,
    pkg.module,
    pkg.types,
    ...Object.values(pkg.exports).flatMap((e) => (typeof e === 'string' ? [e] : Object.values(e))),
  ].map((e) => path.posix.normalize(e));
  const reached = new Set();
  const walk = async (file) => {
    if (reached.has(file)) return;
    reached.add(file);
    if (!file.endsWith('.js')) return;
    const source = await readFile(path.join(repoRoot, file), 'utf8');
    for (const spec of imports(source)) {
      await walk(path.posix.join(path.posix.dirname(file), spec.replace(/\?.*$/, '')));
    }
  };
  for (const e of entries) await walk(e);
  assert.ok(reached.has('js/edgebloom.wasm') && reached.has('js/wasm_exec.js') && reached.has('js/version.js'));
  assert.deepEqual(
    [...reached].filter((f) => !files.includes(f)),
    [],
  );
  // ...and every JavaScript file in it is reached by one.
  assert.deepEqual(
    files.filter((f) => f.endsWith('.js') && !reached.has(f)),
    [],
  );
});

test('publint: no errors, warnings or suggestions on the packed tarball', { timeout }, async () => {
  const { messages, pkg: packed } = await publint({
    pack: { tarball: (await readFile(tarball)).buffer },
    level: 'suggestion',
    strict: true,
  });
  assert.deepEqual(
    messages.map((m) => `${m.type}: ${formatMessage(m, packed, { color: false })}`),
    [],
  );
});

// attw reads .attw.json, which says what the package is: ./edgebloom.wasm
// is an asset (a bundler's URL import or a file to copy, never a module
// with types), not an entry point to resolve types for; and the package is
// ESM that require() loads in every Node it supports (^20.19, >= 22.12: the
// ecosystem tests require it there), which attw 0.18 still reports as
// "ESM (dynamic import only)" (cjs-resolves-to-esm).
test('@arethetypeswrong/cli: no problem in any resolution mode', { timeout }, async () => {
  const out = await run(
    path.join(repoRoot, 'node_modules/.bin/attw'),
    [tarball, '--format', 'json', '--config-path', path.join(repoRoot, '.attw.json')],
    { cwd: repoRoot },
  );
  // attw exits 0 (run would reject otherwise); its report lists the
  // problems of the ignored rules too: that one, where it is expected.
  const report = JSON.parse(out.slice(out.indexOf('{')));
  assert.deepEqual(report.analysis.problems, [
    { kind: 'CJSResolvesToESM', entrypoint: '.', resolutionKind: 'node16-cjs' },
  ]);
  assert.deepEqual(Object.keys(report.analysis.entrypoints).sort(), ['.', './package.json']);
  for (const [kind, { resolution }] of Object.entries(report.analysis.entrypoints['.'].resolutions)) {
    assert.equal(resolution.fileName, '/node_modules/edgebloom/js/index.d.ts', kind);
  }
});
