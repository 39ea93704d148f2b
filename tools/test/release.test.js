// tools/release.mjs: one version, in version.txt, and every copy of it
// current; a new version written everywhere; CHANGELOG.md as Keep a
// Changelog has it, and its entries released as RELEASING.md says; the Go
// modules tagged in dependency order.
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  bump,
  copies,
  entries,
  modulePath,
  notes,
  readVersion,
  release,
  stale,
  sync,
  tagOrder,
  tags,
  unpublished,
  workModules,
} from '../release.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const read = (dir, file) => readFileSync(path.join(dir, file), 'utf8');

// sandbox copies the files the version lives in (and CHANGELOG.md) into a
// temporary directory and returns it, with a function that removes it.
function sandbox() {
  const dir = mkdtempSync(path.join(tmpdir(), 'release-test-'));
  for (const file of ['version.txt', 'CHANGELOG.md', ...copies(root).map((c) => c.file)]) {
    try {
      mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      cpSync(path.join(root, file), path.join(dir, file));
    } catch (err) {
      if (err.code !== 'ENOENT') throw err;
    }
  }
  return [dir, () => rmSync(dir, { recursive: true, force: true })];
}

test('every copy of version.txt gives its version', () => {
  const v = readVersion(root);
  assert.deepEqual(stale(root), [], 'run node tools/release.mjs sync');
  const pkg = JSON.parse(read(root, 'package.json'));
  const lock = JSON.parse(read(root, 'package-lock.json'));
  assert.equal(pkg.version, v);
  assert.equal(lock.version, v);
  assert.equal(lock.packages[''].version, v);
  assert.match(read(root, 'internal/release/version.go'), new RegExp(`const Version = "${v}"`));
  assert.match(read(root, 'js/version.js'), new RegExp(`export const version = '${v}';`));
  for (const dir of workModules(root)) {
    for (const m of read(root, path.join(dir, 'go.mod')).matchAll(
      /^\s*(?:require\s+)?(github\.com\/edgebloom\/\S+) (\S+)/gm,
    )) {
      assert.equal(m[2], `v${v}`, `${dir}/go.mod requires ${m[1]} ${m[2]}`);
    }
  }
  assert.match(read(root, 'go.work'), new RegExp(`${modulePath} v${v} => \\./`));
});

test('sync writes a new version into every copy, and stale names each one it has not written', () => {
  const [dir, remove] = sandbox();
  try {
    writeFileSync(path.join(dir, 'version.txt'), '0.9.1\n');
    const before = stale(dir);
    for (const file of [
      'package.json',
      'package-lock.json',
      'internal/release/version.go',
      'js/version.js',
      'go.work',
    ]) {
      assert.ok(before.includes(file), `${file} is stale: ${before}`);
    }
    assert.ok(before.includes('redisfilter/go.mod') && before.includes('cmd/edgebloom/go.mod'), `${before}`);
    assert.ok(before.includes('examples/browser-page/package.json'), `${before}`);
    assert.deepEqual(sync(dir).sort(), before.sort());
    assert.deepEqual(stale(dir), []);

    assert.equal(JSON.parse(read(dir, 'package.json')).version, '0.9.1');
    assert.equal(JSON.parse(read(dir, 'package-lock.json')).packages[''].version, '0.9.1');
    assert.equal(JSON.parse(read(dir, 'examples/browser-page/package.json')).dependencies.edgebloom, '^0.9.1');
    assert.match(read(dir, 'internal/release/version.go'), /^const Version = "0\.9\.1"$/m);
    assert.match(read(dir, 'js/version.js'), /^export const version = '0\.9\.1';$/m);
    assert.match(read(dir, 'colly/go.mod'), /^\tgithub\.com\/edgebloom\/edgebloom\/redisfilter v0\.9\.1$/m);
    assert.match(read(dir, 'go.work'), /^\tgithub\.com\/edgebloom\/edgebloom\/urlkey v0\.9\.1 => \.\/urlkey$/m);
    // Third-party requirements stay as they were.
    assert.match(read(dir, 'redisfilter/go.mod'), /github\.com\/redis\/go-redis\/v9 v9\.\d+\.\d+/);
    assert.ok(!read(dir, 'README.md').match(/edgebloom[\w/]*@v0\.1\.0/), 'README.md still says @v0.1.0');
    // go's message quoted in docs/install.md keeps its colons.
    assert.match(
      read(dir, 'docs/install.md'),
      /colly\/\.\.\.@v0\.9\.1: github\.com\/edgebloom\/edgebloom@v0\.9\.1: reading/,
    );

    // Only the copies differ from the checkout's files: nothing else moved.
    const changed = (file) => read(dir, file) !== read(root, file);
    assert.ok(!changed('CHANGELOG.md'));
    writeFileSync(path.join(dir, 'js/version.js'), "export const version = '0.1.0';\n");
    assert.deepEqual(stale(dir), ['js/version.js']);
  } finally {
    remove();
  }
});

test('version.txt holds one version X.Y.Z', () => {
  const [dir, remove] = sandbox();
  try {
    for (const bad of ['v0.2.0', '0.2', '0.2.0 beta', '']) {
      writeFileSync(path.join(dir, 'version.txt'), `${bad}\n`);
      assert.throws(() => stale(dir), { message: `version.txt: "${bad}" is not a version X.Y.Z (semver.org)` });
    }
  } finally {
    remove();
  }
});

// ---- CHANGELOG.md ------------------------------------------------------------

const categories = ['Added', 'Changed', 'Deprecated', 'Removed', 'Fixed', 'Security'];

test('CHANGELOG.md: Unreleased, then each version, newest first, with Keep a Changelog categories', () => {
  const text = read(root, 'CHANGELOG.md');
  const list = entries(text);
  assert.equal(list[0]?.name, 'Unreleased');
  const versions = list.slice(1);
  assert.ok(versions.length >= 1);
  assert.ok(
    versions.some((e) => e.name === readVersion(root)),
    `an entry of version.txt's ${readVersion(root)}`,
  );
  for (const e of versions) {
    assert.match(e.name, /^\d+\.\d+\.\d+$/);
    assert.ok(e.date === 'Unreleased' || /^\d{4}-\d{2}-\d{2}$/.test(e.date), `${e.name}: date ${e.date}`);
    const body = text.slice(e.start, e.end);
    for (const m of body.matchAll(/^### (.*)$/gm)) assert.ok(categories.includes(m[1]), `${e.name}: ### ${m[1]}`);
    assert.ok(/^### /m.test(body), `${e.name} has categories`);
  }
  // What the project promises about compatibility is said once, here.
  assert.match(text, /^## Compatibility$/m);
  for (const what of ['docs/format.md', '/v1/', 'Go API', 'npm API']) assert.ok(text.includes(what), what);
  assert.equal(notes(text, '0.1.0').split('\n')[0], 'The first release.');
});

const changelog = (rest) => `# Changelog

Intro.

## [Unreleased]
${rest}`;

test('release dates a pending entry, or makes the Unreleased items the new entry, and links each version', () => {
  const first = release(changelog('\n## [0.1.0] - Unreleased\n\n### Added\n\n- Everything.\n'), '0.1.0', '2026-12-01');
  assert.equal(
    first,
    changelog(
      '\n## [0.1.0] - 2026-12-01\n\n### Added\n\n- Everything.\n\n' +
        '[Unreleased]: https://github.com/edgebloom/edgebloom/compare/v0.1.0...HEAD\n' +
        '[0.1.0]: https://github.com/edgebloom/edgebloom/releases/tag/v0.1.0\n',
    ),
  );
  const second = release(
    first.replace('## [Unreleased]\n', '## [Unreleased]\n\n### Fixed\n\n- A bug.\n'),
    '0.1.1',
    '2026-12-24',
  );
  assert.equal(
    second,
    changelog(
      '\n## [0.1.1] - 2026-12-24\n\n### Fixed\n\n- A bug.\n\n' +
        '## [0.1.0] - 2026-12-01\n\n### Added\n\n- Everything.\n\n' +
        '[Unreleased]: https://github.com/edgebloom/edgebloom/compare/v0.1.1...HEAD\n' +
        '[0.1.1]: https://github.com/edgebloom/edgebloom/compare/v0.1.0...v0.1.1\n' +
        '[0.1.0]: https://github.com/edgebloom/edgebloom/releases/tag/v0.1.0\n',
    ),
  );
  assert.equal(notes(second, '0.1.1'), '### Fixed\n\n- A bug.');
  assert.throws(() => release(second, '0.1.2', '2027-01-01'), { message: /Unreleased entry is empty/ });
  assert.throws(() => release(second, '0.1.1', '2027-01-01'), { message: /0\.1\.1 was released on 2026-12-24/ });
  assert.throws(() => release(first, '0.1.0', '2027-01-01'), { message: /0\.1\.0 was released on 2026-12-01/ });
  assert.throws(
    () => release(changelog('\n- Early.\n\n## [0.1.0] - Unreleased\n\n- Everything.\n'), '0.1.0', '2027-01-01'),
    { message: /move the Unreleased entry's items into 0\.1\.0's entry first/ },
  );
  assert.throws(() => notes(second, '0.3.0'), { message: 'CHANGELOG.md has no entry "## [0.3.0]"' });
});

test('bump sets the version everywhere and releases its changelog entry; it never goes back', () => {
  const [dir, remove] = sandbox();
  try {
    const v = readVersion(root);
    const [x, y] = v.split('.').map(Number);
    const next = `${x}.${y + 1}.0`;
    writeFileSync(
      path.join(dir, 'CHANGELOG.md'),
      changelog(`\n### Added\n\n- More.\n\n## [${v}] - 2026-12-01\n\n- Old.\n`),
    );
    assert.throws(() => bump('0.0.1', '2027-01-01', dir), {
      message: new RegExp(`0\\.0\\.1 is before version.txt's ${v.replaceAll('.', '\\.')}`),
    });
    assert.throws(() => bump('next', '2027-01-01', dir), {
      message: 'bump: "next" is not a version X.Y.Z (semver.org)',
    });
    const written = bump(next, '2027-01-01', dir);
    assert.ok(written.includes('version.txt') && written.includes('package.json') && written.includes('go.work'));
    assert.equal(read(dir, 'version.txt'), `${next}\n`);
    assert.deepEqual(stale(dir), []);
    assert.equal(notes(read(dir, 'CHANGELOG.md'), next), '### Added\n\n- More.');
  } finally {
    remove();
  }
});

// ---- tags ---------------------------------------------------------------------

test('the published modules are tagged each after the modules it requires', () => {
  const order = tagOrder(root);
  const v = readVersion(root);
  assert.deepEqual(
    tags(root),
    order.map((d) => (d === '.' ? `v${v}` : `${d}/v${v}`)),
  );
  assert.equal(order[0], '.');
  for (const [i, dir] of order.entries()) {
    for (const m of read(root, path.join(dir, 'go.mod')).matchAll(
      /^\s*(?:require\s+)?github\.com\/edgebloom\/edgebloom(\/\S+)? v/gm,
    )) {
      const req = m[1] ? m[1].slice(1) : '.';
      assert.ok(order.indexOf(req) >= 0 && order.indexOf(req) < i, `${dir} requires ${req}, tagged before it`);
    }
  }
  // Every module of go.work is tagged or listed as unpublished; those
  // modtest builds as a consumer are among the tagged.
  const modules = workModules(root);
  for (const u of unpublished) assert.ok(modules.includes(u), `${u} (unpublished) is a module of go.work`);
  assert.deepEqual([...order].sort(), modules.filter((d) => !unpublished.includes(d)).sort());
  const modtest = read(root, 'modtest/modules_test.go');
  for (const m of modtest.matchAll(/^\t\{"([^"]+)", root/gm)) assert.ok(order.includes(m[1]), `modtest's ${m[1]}`);
  for (const dir of ['.', 'urlkey', 'redisfilter', 'colly', 'cmd/edgebloom', 'worker']) assert.ok(order.includes(dir));
});
