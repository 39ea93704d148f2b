// What `npm test` installs before it tests (build.sh setup: tools/deps.mjs),
// with npm, apt-get and id replaced by stubs that record their calls: npm ci runs when
// node_modules is missing or older than package-lock.json and not otherwise,
// and npm install --no-save the same way in e2e/ecosystem/; missing system
// packages go into one apt-get install as root, and stop the run with one
// line naming the command otherwise.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { mkdir, readFile, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, test } from 'node:test';
import { cleanup, repoRoot, tempDir } from '../testkit/process.js';

after(async () => {
  await cleanup();
});

// A copy of build.sh and tools/deps.mjs in dir, the list of system packages
// of deps.mjs replaced by `packages`, and stubs of npm, apt-get and id (as
// `uid`) that append their arguments to calls.log. npm ci makes
// node_modules/.package-lock.json as npm does.
const packageList = /^export const systemPackages = \[\n(?: {2}\[.*\],\n)*\];$/m;

async function sandbox({ uid, packages }) {
  const dir = await tempDir('setup');
  const bin = path.join(dir, 'bin');
  await mkdir(bin);
  await mkdir(path.join(dir, 'tools'));
  await writeFile(path.join(dir, 'build.sh'), await readFile(path.join(repoRoot, 'build.sh')));
  const deps = await readFile(path.join(repoRoot, 'tools/deps.mjs'), 'utf8');
  assert.match(deps, packageList, 'tools/deps.mjs has its systemPackages list');
  const entries = packages.map(([cmd, pkg]) => `  [${JSON.stringify(cmd)}, ${JSON.stringify(pkg)}],\n`).join('');
  await writeFile(
    path.join(dir, 'tools/deps.mjs'),
    deps.replace(packageList, `export const systemPackages = [\n${entries}];`),
  );
  await writeFile(path.join(dir, 'package-lock.json'), '{}\n');
  await mkdir(path.join(dir, 'e2e/ecosystem'), { recursive: true });
  await writeFile(path.join(dir, 'e2e/ecosystem/package-lock.json'), '{}\n');
  const stub = (name, body = '') =>
    writeFile(
      path.join(bin, name),
      `#!/bin/bash\necho "${name} $* DEBIAN_FRONTEND=\${DEBIAN_FRONTEND:-}" >>"${dir}/calls.log"\n${body}`,
      {
        mode: 0o755,
      },
    );
  await stub('npm', 'mkdir -p node_modules && echo "{}" >node_modules/.package-lock.json\n');
  await stub('apt-get');
  await writeFile(path.join(bin, 'id'), `#!/bin/bash\necho ${uid}\n`, { mode: 0o755 });
  const setup = () => {
    const r = spawnSync('bash', ['build.sh', 'setup'], {
      cwd: dir,
      env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, DEBIAN_FRONTEND: '' },
      encoding: 'utf8',
    });
    return { status: r.status, stderr: r.stderr, calls: takeCalls(dir) };
  };
  return { dir, setup };
}

function takeCalls(dir) {
  const log = path.join(dir, 'calls.log');
  if (!existsSync(log)) return [];
  const calls = readFileSync(log, 'utf8').trim().split('\n');
  rmSync(log);
  return calls;
}

const present = [['/bin/sh', 'dash']];

const ci = 'npm ci --no-audit --no-fund DEBIAN_FRONTEND=';
const ecosystem = 'npm install --no-save --no-audit --no-fund DEBIAN_FRONTEND=';

test('npm ci when node_modules is missing or older than package-lock.json, and only then', async () => {
  const { dir, setup } = await sandbox({ uid: 0, packages: present });
  let r = setup();
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(r.calls, [ci, ecosystem], "fresh clone: npm ci, then the ecosystem tests' deps");
  assert.ok(existsSync(path.join(dir, 'e2e/ecosystem/node_modules/.package-lock.json')), 'installed in e2e/ecosystem');

  r = setup();
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(r.calls, [], 'installed: nothing to do');

  // A pull that changes a lockfile makes it newer than the install.
  const later = new Date(Date.now() + 60_000);
  await utimes(path.join(dir, 'package-lock.json'), later, later);
  r = setup();
  assert.deepEqual(r.calls, [ci], 'changed lockfile: npm ci');
  await utimes(path.join(dir, 'node_modules/.package-lock.json'), later, later);
  assert.deepEqual(setup().calls, []);
  await utimes(path.join(dir, 'e2e/ecosystem/package-lock.json'), later, later);
  assert.deepEqual(setup().calls, [ecosystem], "changed ecosystem lockfile: that directory's install alone");
  await utimes(path.join(dir, 'e2e/ecosystem/node_modules/.package-lock.json'), later, later);
  assert.deepEqual(setup().calls, []);
});

const missing = [
  ['/bin/sh', 'dash'],
  ['/nonexistent/chromium', 'chromium'],
  ['edgebloom-no-such-command', 'redis-server'],
  ['edgebloom-no-such-command-either', 'redis-server'],
];

test('missing system packages: one apt-get install as root', async () => {
  const { setup } = await sandbox({ uid: 0, packages: missing });
  const r = setup();
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(r.calls.slice(2), [
    'apt-get update DEBIAN_FRONTEND=noninteractive',
    'apt-get install -y chromium redis-server DEBIAN_FRONTEND=noninteractive',
  ]);
});

test('missing system packages: one line naming the command otherwise', async () => {
  const { setup } = await sandbox({ uid: 1000, packages: missing });
  const r = setup();
  assert.notEqual(r.status, 0);
  assert.equal(
    r.stderr,
    'build.sh: the tests need chromium redis-server: run sudo apt-get install -y chromium redis-server\n',
  );
  assert.ok(!r.calls.some((c) => c.startsWith('apt-get')), r.calls.join('\n'));
});

test('the system package list names Chromium and redis-server', async () => {
  const { systemPackages } = await import('../tools/deps.mjs');
  assert.deepEqual(systemPackages, [
    ['/usr/bin/chromium', 'chromium'],
    ['redis-server', 'redis-server'],
  ]);
});
