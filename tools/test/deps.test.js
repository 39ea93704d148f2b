// tools/deps.mjs: when an npm install runs, and that it never installs
// through a node_modules that links to another checkout's. (e2e/setup.test.js
// runs build.sh setup as a whole, with npm and apt-get stubbed.)
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { stale } from '../deps.mjs';

const tool = fileURLToPath(new URL('../deps.mjs', import.meta.url));
const dirs = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function tempDir() {
  const d = mkdtempSync(path.join(tmpdir(), 'deps-test-'));
  dirs.push(d);
  return d;
}

const at = (file, seconds) => utimesSync(file, seconds, seconds);

test('stale: no install record, or a lockfile newer than it', () => {
  const dir = tempDir();
  writeFileSync(path.join(dir, 'package-lock.json'), '{}\n');
  at(path.join(dir, 'package-lock.json'), 1000);
  assert.equal(stale(dir), true, 'no node_modules');
  mkdirSync(path.join(dir, 'node_modules'));
  assert.equal(stale(dir), true, 'node_modules without its record');
  writeFileSync(path.join(dir, 'node_modules/.package-lock.json'), '{}\n');
  at(path.join(dir, 'node_modules/.package-lock.json'), 2000);
  assert.equal(stale(dir), false, 'installed after the lockfile');
  at(path.join(dir, 'package-lock.json'), 3000);
  assert.equal(stale(dir), true, 'the lockfile changed since');
});

// npmStub makes a bin directory whose npm records its calls and installs as
// npm ci would: it empties node_modules first.
function npmStub() {
  const bin = tempDir();
  writeFileSync(
    path.join(bin, 'npm'),
    `#!/bin/sh\necho "npm $*" >>"${bin}/calls"\nrm -rf node_modules/* node_modules/.package-lock.json\nmkdir -p node_modules && echo '{}' >node_modules/.package-lock.json\n`,
    { mode: 0o755 },
  );
  return bin;
}

const deps = (bin, dir) =>
  spawnSync(process.execPath, [tool, 'node', dir], {
    encoding: 'utf8',
    env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
  });

test('npm ci runs in a stale directory, and not again once installed', () => {
  const bin = npmStub();
  const dir = tempDir();
  writeFileSync(path.join(dir, 'package-lock.json'), '{}\n');
  let r = deps(bin, dir);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /==> npm ci/);
  assert.ok(existsSync(path.join(dir, 'node_modules/.package-lock.json')));
  r = deps(bin, dir);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, '', 'installed: nothing to do');
});

test('a stale node_modules that links to another directory is not installed through', () => {
  const bin = npmStub();
  const shared = tempDir(); // another checkout's install
  mkdirSync(path.join(shared, 'node_modules/some-package'), { recursive: true });
  writeFileSync(path.join(shared, 'node_modules/.package-lock.json'), '{}\n');
  at(path.join(shared, 'node_modules/.package-lock.json'), 1000);
  const dir = tempDir();
  writeFileSync(path.join(dir, 'package-lock.json'), '{}\n');
  at(path.join(dir, 'package-lock.json'), 2000); // a checkout made after that install
  symlinkSync(path.join(shared, 'node_modules'), path.join(dir, 'node_modules'));
  const r = deps(bin, dir);
  assert.equal(r.status, 0, r.stderr);
  assert.ok(!existsSync(path.join(bin, 'calls')), 'npm did not run');
  assert.match(r.stderr, /^deps: .*node_modules links to .*: not reinstalled through the link/);
  assert.deepEqual(readdirSync(path.join(shared, 'node_modules')), ['.package-lock.json', 'some-package']);
});

test('a failing npm fails the step with its command', () => {
  const bin = tempDir();
  writeFileSync(path.join(bin, 'npm'), '#!/bin/sh\nexit 3\n', { mode: 0o755 });
  const dir = tempDir();
  writeFileSync(path.join(dir, 'package-lock.json'), '{}\n');
  const r = deps(bin, dir);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /^npm ci --no-audit --no-fund exited with 3\n$/);
});
