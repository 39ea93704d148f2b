// What a release runs, run here so that it cannot rot (npm run
// release:check; .ci/run runs it after npm test): actionlint on the
// workflows, goreleaser check on .goreleaser.yaml, and RELEASING.md's
// commands, as written, in a copy of the repository whose origin is a local
// bare repository; those of the release workflow in their dry-run forms
// (goreleaser release --snapshot, for one target; npm publish --dry-run).
// The tools are the versions tools/release/go.mod pins, built from the
// module proxy once into .cache/bin (tools/release.mjs toolPath).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, cpSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { notes, readVersion, tags, toolPath } from '../release.mjs';
import { cleanup, quietEnv, repoRoot, run, tempDir } from '../../testkit/process.js';

const timeout = 40 * 60_000; // a cold build of goreleaser alone takes minutes
const tools = {};

before(
  () => {
    for (const name of ['actionlint', 'goreleaser']) tools[name] = toolPath(name, repoRoot);
  },
  { timeout },
);
after(cleanup);

test('actionlint: the workflows are valid', { timeout }, async () => {
  const files = readdirSync(path.join(repoRoot, '.github/workflows')).map((f) => `.github/workflows/${f}`);
  assert.deepEqual(files.sort(), ['.github/workflows/ci.yml', '.github/workflows/release.yml']);
  await run(tools.actionlint, ['-no-color', ...files]);
  // The CI runs the README's test command and the release checks.
  const ci = readFileSync(path.join(repoRoot, '.github/workflows/ci.yml'), 'utf8');
  assert.match(ci, /bash \.ci\/run/);
  assert.match(readFileSync(path.join(repoRoot, '.ci/run'), 'utf8'), /^npm run release:check$/m);
});

test('goreleaser check: the release config is valid', { timeout }, async () => {
  await run(tools.goreleaser, ['check']);
});

// The sh blocks of RELEASING.md's section title, each a list of commands
// without their comments.
function commands(title) {
  const doc = readFileSync(path.join(repoRoot, 'RELEASING.md'), 'utf8');
  const section = doc.slice(doc.indexOf(`\n## ${title}\n`)).split(/\n## /)[1];
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) =>
    m[1]
      .split('\n')
      .map((l) => l.replace(/\s+#.*$/, '').trim())
      .filter(Boolean),
  );
}

// sandbox copies the repository (the files git tracks or would track) into
// a new git repository with a bare one as its origin, whose hook records
// each ref it receives, in order.
async function sandbox() {
  const dir = await tempDir('release');
  const repo = path.join(dir, 'repo');
  const origin = path.join(dir, 'origin.git');
  const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], {
    cwd: repoRoot,
    encoding: 'utf8',
  })
    .split('\0')
    .filter(Boolean);
  for (const f of files) {
    mkdirSync(path.dirname(path.join(repo, f)), { recursive: true });
    try {
      cpSync(path.join(repoRoot, f), path.join(repo, f));
    } catch (err) {
      if (err.code !== 'ENOENT') throw err; // deleted, not yet from the index
    }
  }
  symlinkSync(path.join(repoRoot, 'node_modules'), path.join(repo, 'node_modules'));
  const env = {
    GIT_AUTHOR_NAME: 'Release Test',
    GIT_AUTHOR_EMAIL: 'release@example.invalid',
    GIT_COMMITTER_NAME: 'Release Test',
    GIT_COMMITTER_EMAIL: 'release@example.invalid',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_CONFIG_NOSYSTEM: '1',
  };
  const git = (cwd, ...args) => run('git', args, { cwd, env });
  await git(dir, 'init', '--bare', '-b', 'main', origin);
  const log = path.join(dir, 'received');
  writeFileSync(
    path.join(origin, 'hooks/pre-receive'),
    `#!/bin/sh\nwhile read old new ref; do echo "$ref" >> '${log}'; done\n`,
  );
  chmodSync(path.join(origin, 'hooks/pre-receive'), 0o755);
  await git(repo, 'init', '-b', 'main');
  // node_modules is a link, which .gitignore's node_modules/ (a directory) does not cover.
  writeFileSync(path.join(repo, '.git/info/exclude'), 'node_modules\n');
  await git(repo, 'add', '-A');
  await git(repo, 'commit', '-qm', 'main');
  await git(repo, 'remote', 'add', 'origin', origin);
  return { dir, repo, env, log };
}

test('RELEASING.md: a release cut as written, pushed in order; the workflow dry-run', { timeout }, async () => {
  const { dir, repo, env, log } = await sandbox();
  // The version the doc's example releases (0.2.0) becomes the version to
  // release here: version.txt's while its changelog entry is pending (the
  // first release), else the next minor version with an item to release.
  const current = readVersion(repo);
  const changelog = path.join(repo, 'CHANGELOG.md');
  let v = current;
  if (!readFileSync(changelog, 'utf8').includes(`## [${current}] - Unreleased`)) {
    const [x, y] = current.split('.').map(Number);
    v = `${x}.${y + 1}.0`;
    writeFileSync(
      changelog,
      readFileSync(changelog, 'utf8').replace('## [Unreleased]\n', '## [Unreleased]\n\n### Fixed\n\n- A test.\n'),
    );
    await run('git', ['commit', '-qam', 'a change'], { cwd: repo, env });
  }

  const [cut] = commands('Cut a release');
  const runs = {
    // What is running this test.
    'npm test': null,
    'npm run release:check': null,
  };
  const ran = [];
  for (const line of cut) {
    const cmd = line.replaceAll('0.2.0', v);
    if (cmd in runs) continue;
    assert.match(cmd, /^(node tools\/release\.mjs (bump \S+|tag|push origin)|git diff|git commit -am "[^"]+")$/, cmd);
    await run('bash', ['-c', cmd], { cwd: repo, env });
    ran.push(cmd);
  }
  assert.equal(ran.length, 5, `ran: ${ran.join('; ')}`);
  assert.equal(readVersion(repo), v);

  // Every tag at the release commit, in origin, having arrived one at a
  // time after main, each after the modules it requires.
  const want = tags(repo);
  assert.equal(want[0], `v${v}`);
  assert.deepEqual(readFileSync(log, 'utf8').trim().split('\n'), [
    'refs/heads/main',
    ...want.map((t) => `refs/tags/${t}`),
  ]);
  const head = (await run('git', ['rev-parse', 'HEAD'], { cwd: repo })).trim();
  for (const t of want) {
    const at = (await run('git', ['rev-parse', `${t}^{commit}`], { cwd: path.join(dir, 'origin.git') })).trim();
    assert.equal(at, head, t);
  }

  // The release workflow's commands, as RELEASING.md gives them, in their
  // dry-run forms: goreleaser's snapshot, for the host's platform only (the
  // six take six times as long), and npm's.
  const [workflow] = commands('Cut a release').slice(1);
  assert.deepEqual(workflow, [
    'node tools/release.mjs notes > "$RUNNER_TEMP/notes.md"',
    'node tools/release.mjs tool goreleaser release --clean --release-notes "$RUNNER_TEMP/notes.md"',
    'npm publish --provenance --access public',
  ]);
  const yml = readFileSync(path.join(repoRoot, '.github/workflows/release.yml'), 'utf8');
  for (const cmd of workflow) assert.ok(yml.includes(cmd), `release.yml runs ${cmd}`);

  const runnerTemp = path.join(dir, 'runner');
  mkdirSync(runnerTemp);
  // GoReleaser takes the tag the workflow gives it, not one of the
  // modules' tags at the same commit.
  assert.match(yml, /GORELEASER_CURRENT_TAG: \$\{\{ github\.ref_name \}\}/);
  const renv = { ...env, RUNNER_TEMP: runnerTemp, GORELEASER_CURRENT_TAG: `v${v}` };
  await run('bash', ['-c', workflow[0]], { cwd: repo, env: renv });
  assert.equal(
    readFileSync(path.join(runnerTemp, 'notes.md'), 'utf8').trim(),
    notes(readFileSync(changelog, 'utf8'), v),
  );

  const goos = process.platform === 'win32' ? 'windows' : process.platform;
  const goarch = { x64: 'amd64', arm64: 'arm64' }[process.arch];
  const config = readFileSync(path.join(repo, '.goreleaser.yaml'), 'utf8')
    .replace(/^(\s+goos:) \[.*\]$/m, `$1 [${goos}]`)
    .replace(/^(\s+goarch:) \[.*\]$/m, `$1 [${goarch}]`);
  writeFileSync(path.join(runnerTemp, 'goreleaser.yaml'), config);
  await run(
    tools.goreleaser,
    [
      'release',
      '--snapshot',
      '--clean',
      '--release-notes',
      path.join(runnerTemp, 'notes.md'),
      '--config',
      path.join(runnerTemp, 'goreleaser.yaml'),
    ],
    { cwd: repo, env: renv },
  );
  const dist = path.join(repo, 'dist');
  const archive = readdirSync(dist).find((f) => f.endsWith(`_${goos}_${goarch}.tar.gz`));
  assert.ok(archive, `an archive for ${goos}/${goarch} in ${readdirSync(dist)}`);
  const sums = readFileSync(path.join(dist, 'checksums.txt'), 'utf8');
  const sha = createHash('sha256')
    .update(readFileSync(path.join(dist, archive)))
    .digest('hex');
  assert.ok(sums.includes(`${sha}  ${archive}`), sums);
  const listed = (await run('tar', ['-tzf', path.join(dist, archive)])).trim().split('\n').sort();
  assert.deepEqual(listed, ['CHANGELOG.md', 'LICENSE', 'docs/cli.md', 'edgebloom']);
  await run('tar', ['-xzf', path.join(dist, archive), '-C', runnerTemp, 'edgebloom']);
  assert.equal(await run(path.join(runnerTemp, 'edgebloom'), ['version']), `edgebloom ${v}\n`);

  const publish = `${workflow[2]} --dry-run --registry http://127.0.0.1:9/`;
  const out = await run('bash', ['-c', publish], { cwd: repo, env: { ...renv, ...quietEnv } });
  assert.match(out, new RegExp(`edgebloom@${v.replaceAll('.', '\\.')}`));
});
