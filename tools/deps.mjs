// What the build and the tests need installed, installed when it is not:
// the npm dependencies of a directory (npm ci, or another npm command) and
// the system programs the tests run (apt-get). Usage, from build.sh:
//
//   node tools/deps.mjs node [DIR [NPM-ARGS...]]   npm ci in DIR (default .) when stale
//   node tools/deps.mjs system                     the system packages below
//   node tools/deps.mjs setup                      both, as the tests need them
//
// Only Node's own modules are used: this runs on a fresh clone before any
// npm install.
import { execFileSync, spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, lstatSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

// System programs the tests run, as [command, Debian package]: e2e/ drives
// Debian's Chromium at /usr/bin/chromium through playwright-core, and the
// Redis tests start a real redis-server. What is missing is installed with
// one apt-get install when running as root; otherwise the run stops with
// one line naming the command.
export const systemPackages = [
  ['/usr/bin/chromium', 'chromium'],
  ['redis-server', 'redis-server'],
];

const log = (what) => process.stdout.write(`\n==> ${what}\n`);

/** The error of a step that failed; its message is printed alone. */
export class StepError extends Error {}

function run(cmd, args, options = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', ...options });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new StepError(`${cmd} ${args.join(' ')} exited with ${r.status ?? r.signal}`);
}

// stale reports whether dir needs an install: its node_modules is missing,
// or older than its package-lock.json. npm writes its install record, a
// hidden lockfile, into node_modules, so a fresh clone or a changed lockfile
// installs once and later runs skip it.
export function stale(dir) {
  const record = path.join(dir, 'node_modules/.package-lock.json');
  if (!existsSync(record)) return true;
  return statSync(path.join(dir, 'package-lock.json')).mtimeMs > statSync(record).mtimeMs;
}

/**
 * ensureNodeModules runs `npm ci` (or npm with args) in dir when its
 * node_modules is stale. A node_modules that is a link to another
 * directory's is never installed through: npm would first empty that
 * directory, which another checkout uses. npm is global, so running this
 * from inside "npm test" is safe.
 */
export function ensureNodeModules(dir = '.', args = ['ci']) {
  dir = path.resolve(root, dir);
  if (!stale(dir)) return;
  const modules = path.join(dir, 'node_modules');
  if (existsSync(modules) && lstatSync(modules).isSymbolicLink()) {
    process.stderr.write(
      `deps: ${path.relative(root, modules) || 'node_modules'} links to ${realpathSync(modules)}, installed before ` +
        `${path.relative(root, path.join(dir, 'package-lock.json'))} last changed: not reinstalled through the link; ` +
        `run npm ${args.join(' ')} there if the lockfile's content changed\n`,
    );
    return;
  }
  const rel = path.relative(root, dir);
  log(`npm ${args.join(' ')}${rel ? ` (in ${rel})` : ''}`);
  run('npm', [...args, '--no-audit', '--no-fund'], { cwd: dir });
}

// onPath reports whether cmd is an executable file on PATH.
function onPath(cmd) {
  return (process.env.PATH ?? '').split(path.delimiter).some((d) => {
    try {
      accessSync(path.join(d || '.', cmd), constants.X_OK);
      return statSync(path.join(d || '.', cmd)).isFile();
    } catch {
      return false;
    }
  });
}

function present(cmd) {
  if (!cmd.startsWith('/')) return onPath(cmd);
  try {
    accessSync(cmd, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** ensureSystemPackages installs the missing systemPackages with apt-get. */
export function ensureSystemPackages(packages = systemPackages) {
  const missing = [...new Set(packages.filter(([cmd]) => !present(cmd)).map(([, pkg]) => pkg))];
  if (missing.length === 0) return;
  // id, not process.getuid(): what the shell's user is, as sudo reports it.
  const uid = execFileSync('id', ['-u'], { encoding: 'utf8' }).trim();
  if (uid !== '0' || !onPath('apt-get')) {
    throw new StepError(
      `build.sh: the tests need ${missing.join(' ')}: run sudo apt-get install -y ${missing.join(' ')}`,
    );
  }
  log(`apt-get install ${missing.join(' ')}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  run('apt-get', ['update'], { env });
  run('apt-get', ['install', '-y', ...missing], { env });
}

// setup installs what the tests need: the npm dependencies, those of
// e2e/ecosystem/, then the system packages. e2e/ecosystem/ has its own
// package.json: the runtimes, bundlers and Node versions the ecosystem tests
// load the package in, an install many times the size of the library's
// own, kept out of its devDependencies. It is installed with "npm install
// --no-save", which installs what its lockfile pins and leaves the
// lockfile as it is: npm ci
// refuses a lockfile without the other platforms' builds of Bun, Deno and
// Rollup, which a registry serving one platform cannot list.
export function setup() {
  ensureNodeModules();
  ensureNodeModules('e2e/ecosystem', ['install', '--no-save']);
  ensureSystemPackages();
}

/** main runs fn and turns a StepError into its message and exit status 1. */
export function main(fn) {
  try {
    fn();
  } catch (err) {
    if (!(err instanceof StepError)) throw err;
    process.stderr.write(`${err.message}\n`);
    process.exitCode = 1;
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [what, dir, ...args] = process.argv.slice(2);
  main(() => {
    switch (what) {
      case 'node':
        return ensureNodeModules(dir, args.length ? args : undefined);
      case 'system':
        return ensureSystemPackages();
      case 'setup':
        return setup();
      default:
        throw new StepError('usage: node tools/deps.mjs node [DIR [NPM-ARGS...]] | system | setup');
    }
  });
}
