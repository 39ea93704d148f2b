// The test suites and what each runs, so that build.sh stays a list of
// targets. Usage, from build.sh: node tools/suites.mjs TARGET [ARG], where
// TARGET is one of those of `targets` below (build.sh lists them).
//
// Every step runs its commands as child processes and writes to an output
// (`io`): the terminal, or a file when the step runs beside another one and
// its output is printed after that one's (beside).
import { spawn, spawnSync } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureNodeModules, ensureSystemPackages, setup, StepError } from './deps.mjs';
import { build, goExperiment } from './wasm.mjs';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Every Go module of the repository, as go.work lists them, with what its
 * tests need: race runs them with the race detector; wasm vets and tests it
 * for GOOS=js GOARCH=wasm too (the npm module's engine and the Worker run
 * there); build only compiles its tests (the benchmarks: bench/README.md
 * says how to run them); example marks an example of examples/, tested by
 * test-examples rather than test-go; waits marks a module whose tests
 * leave most of the machine idle, waiting on servers, timers and child
 * processes (Redis round trips, crawls of local sites, leases that run out;
 * modtest's go commands: 35 s of CPU in 56 s here), which test-go runs
 * beside the others rather than after them. lint-go fails when go.work and
 * this list disagree, so a new module cannot be left out.
 */
export const goModules = {
  '.': ['race', 'wasm'],
  'cmd/edgebloom': [],
  urlkey: ['race', 'wasm'],
  redisfilter: ['race', 'waits'],
  colly: ['waits'],
  'examples/colly-crawler': ['example', 'race'],
  'examples/parquet': ['example'],
  parquettest: [],
  modtest: ['waits'],
  bench: ['build'],
  worker: ['wasm'],
};

const has = (dir, flag) => (goModules[dir] ?? []).includes(flag);

/**
 * thirtyTwoBit says how the filter's tests run on a 32-bit platform here:
 * GOARCH=386 where this kernel runs i386 programs, else GOARCH=arm under
 * qemu-arm (Debian's qemu-user, installed when missing). Some kernels are
 * built without IA32 emulation (exec format error), and qemu-i386 crashes
 * Go's 386 runtime at start; qemu-arm runs Go's arm programs.
 */
function thirtyTwoBit() {
  const dir = mkdtempSync(path.join(tmpdir(), 'edgebloom-386-'));
  try {
    writeFileSync(path.join(dir, 'main.go'), 'package main\n\nfunc main() {}\n');
    const bin = path.join(dir, 'probe');
    const env = { ...process.env, GOARCH: '386', GO111MODULE: 'off' };
    const built = spawnSync('go', ['build', '-o', bin, 'main.go'], { cwd: dir, env, stdio: 'ignore' });
    if (built.status === 0 && spawnSync(bin, [], { stdio: 'ignore' }).status === 0) {
      return { name: 'GOARCH=386', env: { GOARCH: '386' }, args: [] };
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  ensureSystemPackages([['qemu-arm', 'qemu-user']]);
  return {
    name: 'GOARCH=arm under qemu-arm: this kernel runs no i386 program',
    env: { GOARCH: 'arm', GOARM: '7', EDGEBLOOM_TEST_EXEC: 'qemu-arm' },
    args: ['-exec', 'qemu-arm'],
  };
}

/** The terminal. */
const terminal = { out: 1, err: 2 };

// Each step's header says when it began: the wall time since this program
// started and, where /proc tells it (Linux), the CPU time its finished
// children had used by then, so the gaps between two headers show where a
// run's time went and which steps mostly wait.
const started = Date.now();
const clock = (s) => `${Math.floor(s / 60)}:${String(Math.floor(s % 60)).padStart(2, '0')}`;
function childrenCpu() {
  try {
    // Fields 16 and 17 of /proc/self/stat: cutime and cstime, in ticks (100 a second).
    const f = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
    return (Number(f[13]) + Number(f[14])) / 100;
  } catch {
    return undefined;
  }
}
const when = () => {
  const cpu = childrenCpu();
  return `at ${clock((Date.now() - started) / 1000)}${cpu === undefined ? '' : `, CPU ${clock(cpu)}`}`;
};
const log = (io, what) => writeSync(io.out, `\n==> ${what} [${when()}]\n`);

// The children running now. A SIGTERM or SIGHUP to this program (a
// timeout, a closed terminal) is passed on to them, as it reached the
// command itself when build.sh exec'd it; Ctrl-C reaches them from the
// terminal already.
const children = new Set();
for (const signal of ['SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    const status = 128 + (signal === 'SIGTERM' ? 15 : 1);
    if (children.size === 0) process.exit(status);
    process.exitCode = status;
    for (const child of children) {
      child.on('close', () => children.size === 0 && process.exit(status));
      child.kill(signal);
    }
  });
}

/**
 * run runs cmd with args in dir (default the repository root), its output
 * to io, and fails when it fails. stdout 'ignore' discards what it prints.
 */
export function run(io, cmd, args, { dir = '.', env, stdout, capture = false } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd: path.resolve(root, dir),
      env: env ? { ...process.env, ...env } : process.env,
      stdio: ['ignore', capture ? 'pipe' : (stdout ?? io.out), io.err],
    });
    children.add(child);
    let text = '';
    child.stdout?.on('data', (d) => (text += d));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      children.delete(child);
      if (code === 0) resolve(text);
      else
        reject(
          new StepError(`${cmd} ${args.join(' ')}${dir === '.' ? '' : ` (in ${dir})`} exited with ${code ?? signal}`),
        );
    });
  });
}

/**
 * beside runs the step bg with its output kept in a file and the step fg on
 * io, then prints bg's output after fg's, and fails when either failed
 * (after both ended).
 */
export async function beside(io, bg, fg) {
  const dir = mkdtempSync(path.join(tmpdir(), 'edgebloom-beside-'));
  const file = path.join(dir, 'log');
  const fd = openSync(file, 'w');
  try {
    const results = await Promise.allSettled([bg({ out: fd, err: fd }), fg(io)]);
    closeSync(fd);
    writeSync(io.out, readFileSync(file));
    const failed = results.filter((r) => r.status === 'rejected');
    if (failed.length) throw failed[0].reason;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// staticcheck, pinned in tools/go.mod (its own module, outside go.work, so
// that neither the library's go.mod nor the workspace's build list takes its
// dependencies), built once into .cache/bin from the module proxy.
async function staticcheck(io, dir) {
  const bin = path.join(root, '.cache/bin/staticcheck');
  const off = { GOWORK: 'off' };
  const version = (
    await run(io, 'go', ['list', '-m', '-f', '{{.Version}}', 'honnef.co/go/tools'], {
      dir: 'tools',
      env: off,
      capture: true,
    })
  ).trim();
  let built = '';
  try {
    built = readFileSync(`${bin}.version`, 'utf8').trim();
  } catch {}
  if (built !== version) {
    log(io, `build staticcheck ${version} (tools/go.mod)`);
    await run(io, 'go', ['build', '-o', bin, 'honnef.co/go/tools/cmd/staticcheck'], { dir: 'tools', env: off });
    writeFileSync(`${bin}.version`, `${version}\n`);
  }
  await run(io, bin, ['./...'], { dir });
}

/** lintGo: gofmt over the tree, then go vet (also for js/wasm where the module runs there) and staticcheck. */
export async function lintGo(io) {
  log(io, 'gofmt');
  let files;
  try {
    files = (await run(io, 'git', ['ls-files', '*.go'], { capture: true })).split('\n').filter(Boolean);
  } catch {
    files = (await run(io, 'find', ['.', '-name', '*.go', '-not', '-path', './node_modules/*'], { capture: true }))
      .split('\n')
      .filter(Boolean);
  }
  const unformatted = (await run(io, 'gofmt', ['-l', ...files], { capture: true })).trim();
  if (unformatted) throw new StepError(`gofmt would change: ${unformatted}`);
  const listed = Object.keys(goModules).sort();
  const workspace = (await run(io, 'go', ['list', '-m', '-f', '{{.Dir}}'], { capture: true }))
    .split('\n')
    .filter(Boolean)
    .map((d) => path.relative(root, d) || '.')
    .sort();
  if (listed.join('\n') !== workspace.join('\n')) {
    throw new StepError(
      `tools/suites.mjs: goModules and go.work list different modules:\n  goModules: ${listed.join(' ')}\n  go.work:   ${workspace.join(' ')}`,
    );
  }
  for (const dir of listed) {
    log(io, `go vet and staticcheck (${dir})`);
    await run(io, 'go', ['vet', './...'], { dir });
    if (has(dir, 'wasm')) await run(io, 'go', ['vet', './...'], { dir, env: { GOOS: 'js', GOARCH: 'wasm' } });
    await staticcheck(io, dir);
  }
}

/**
 * testModule runs the Go tests of module dir (a key of goModules) and what
 * else that module needs:
 * - . (the library): also 32-bit (thirtyTwoBit) and GOOS=js GOARCH=wasm (twice: as
 *   built by default, and with the runtime built as for the npm module), a
 *   short fuzz run of every Fuzz target, and each benchmark run once.
 * - urlkey (golang.org/x/net): also in js/wasm, where the Worker runs it,
 *   and a short fuzz run.
 * - redisfilter (go-redis): starts Debian's redis-server on 127.0.0.1
 *   (setup installs it) and fails, never skips, without one.
 * - colly (Colly and go-redis): crawls of a local site, one of them against
 *   a real redis-server.
 * - parquettest (parquet-go): writes Parquet files with edgebloom bitsets
 *   and reads them back through the library's bloom-filter check, and the
 *   other way round.
 * - modtest: builds every published module (root, redisfilter, urlkey,
 *   colly, cmd/edgebloom) as a consumer would: GOWORK=off, go get and go
 *   install of v0.1.0 from a module proxy it writes from this checkout,
 *   third-party modules from the module cache and, for what it lacks,
 *   GOPROXY (most of it compiling the modules' dependencies once);
 *   then the install steps of the README and of the Go examples' READMEs,
 *   run by bash in a new module outside the checkout beside a link to it
 *   at ../edgebloom (the replace lines a clone needs), and built: the
 *   first run on a machine compiles arrow-go and parquet-go for minutes.
 * - bench: its tests and benchmarks are compiled, not run (bench/README.md).
 * - worker: the Go front's handler tests on the host; test-worker runs the
 *   Worker in workerd.
 */
export async function testModule(io, dir) {
  if (!(dir in goModules))
    throw new StepError(`build.sh: no Go module ${dir}; those are: ${Object.keys(goModules).join(' ')}`);
  if (has(dir, 'build')) {
    log(io, `go test: compile only (${dir})`);
    await run(io, 'go', ['build', './...'], { dir });
    await run(io, 'go', ['test', '-count=1', '-run', '^$', './...'], { dir, stdout: 'ignore' });
    return;
  }
  const race = has(dir, 'race') ? ['-race'] : [];
  log(io, `go test (${dir}${race.length ? ', race' : ''})`);
  await run(io, 'go', ['test', ...race, '-count=1', './...'], { dir });
  const wasm = {
    PATH: `${path.join(await goroot(io), 'lib/wasm')}:${process.env.PATH}`,
    GOOS: 'js',
    GOARCH: 'wasm',
  };
  if (dir === '.') {
    const bits32 = thirtyTwoBit();
    log(io, `go test (${bits32.name})`);
    await run(io, 'go', ['test', '-count=1', ...bits32.args, './bloom/...'], { env: bits32.env });
    log(io, 'go test (GOOS=js GOARCH=wasm, in node)');
    await run(io, 'go', ['test', '-count=1', './bloom/...'], { env: wasm });
    log(io, 'go test (GOOS=js GOARCH=wasm, runtime built as for the npm module)');
    await run(io, 'go', ['test', '-count=1', '-gcflags=runtime=-B', './bloom/...'], {
      env: { ...wasm, GOEXPERIMENT: goExperiment },
    });
    log(io, 'fuzz smoke');
    const list = await run(io, 'go', ['test', '-list', 'Fuzz.*', './bloom'], { capture: true });
    for (const f of list.split('\n').filter((l) => l.startsWith('Fuzz'))) {
      await run(io, 'go', ['test', '-run', '^$', '-fuzz', `^${f}$`, '-fuzztime', '10s', './bloom']);
    }
    log(io, 'benchmarks compile and run once');
    await run(io, 'go', ['test', '-run', '^$', '-bench', '.', '-benchtime', '1x', './bloom']);
  } else if (dir === 'urlkey') {
    log(io, 'go test (urlkey, GOOS=js GOARCH=wasm; fuzz smoke)');
    await run(io, 'go', ['test', '-count=1', '.'], { dir, env: wasm });
    await run(io, 'go', ['test', '-run', '^$', '-fuzz', '^FuzzCanonical$', '-fuzztime', '10s', '.'], { dir });
  }
}

async function goroot(io) {
  return (await run(io, 'go', ['env', 'GOROOT'], { capture: true })).trim();
}

/**
 * testGo: lint, then every module's tests but the examples', one after
 * another; those marked waits run meanwhile, beside the lint and the
 * others, one after another too.
 */
export async function testGo(io) {
  const dirs = Object.keys(goModules).filter((dir) => !has(dir, 'example'));
  const inTurn = (dirs) => async (io) => {
    for (const dir of dirs) await testModule(io, dir);
  };
  await beside(io, inTurn(dirs.filter((dir) => has(dir, 'waits'))), async (io) => {
    await lintGo(io);
    await inTurn(dirs.filter((dir) => !has(dir, 'waits')))(io);
  });
}

// lintJs: ESLint's recommended rules (eslint.config.js) and prettier's
// formatting (.prettierrc.json, .prettierignore) over every JavaScript and
// TypeScript file.
async function lintJs(io) {
  log(io, 'eslint and prettier');
  ensureNodeModules();
  await run(io, 'node_modules/.bin/eslint', ['.']);
  await run(io, 'node_modules/.bin/prettier', ['--check', '--log-level', 'warn', '.']);
}

const nodeTest = (io, ...args) => run(io, process.execPath, ['--test', '--test-reporter=spec', ...args]);

// The Node tests: the npm module (js/test), the programs build.sh runs
// (tools/test) and the demo's modules (web-demo/test).
async function testJs(io) {
  log(io, 'node tests (js/test, tools/test, web-demo/test)');
  await nodeTest(io, 'js/test/', 'tools/test/', 'web-demo/test/');
}

async function testE2e(io) {
  log(io, 'browser and workerd tests (e2e)');
  const files = readdirSync(path.join(root, 'e2e'))
    .filter((f) => f.endsWith('.test.js'))
    .sort()
    .map((f) => `e2e/${f}`);
  await nodeTest(io, '--test-concurrency=1', ...files);
}

// The packed package in Node 20.19/22.12/26, Bun, Deno, Vercel's
// edge-runtime, Vite 7 and 8, webpack 5 and tsc (e2e/ecosystem/), mostly
// waiting on child processes and Chromium.
async function testEcosystem(io) {
  log(io, 'ecosystem tests (e2e/ecosystem)');
  await nodeTest(io, 'e2e/ecosystem/');
}

// The Worker in workerd (Miniflare and wrangler dev); its Go handler tests
// run with the other modules' (testModule worker). The files run two at a
// time: dev.test.js spends a minute idle (on purpose: the service must
// survive it), and the others (Miniflare, and workerd killed mid-write) fill
// that minute. worker/build.sh makes their concurrent builds safe.
async function testWorkerJs(io) {
  log(io, 'worker tests in workerd');
  await nodeTest(io, '--test-concurrency=2', 'worker/test/');
}

// The docs' code blocks, taken from the Markdown and run
// (tools/docblocks.mjs says which and how).
async function testDocs(io) {
  log(io, "docs' code blocks (tools/docblocks.mjs)");
  await run(io, process.execPath, ['tools/docblocks.mjs']);
}

// pack packs the package as npm publishes it into a temporary directory and
// returns [the tarball, a function that removes it].
async function pack(io) {
  const dir = mkdtempSync(path.join(tmpdir(), 'edgebloom-pack-'));
  await run(io, 'npm', ['pack', '--silent', '--pack-destination', dir], { stdout: 'ignore' });
  const tgz = readdirSync(dir).find((f) => /^edgebloom-.*\.tgz$/.test(f));
  return [path.join(dir, tgz), () => rmSync(dir, { recursive: true, force: true })];
}

// The examples (examples/): the npm ones against the package as users get
// it, packed here once (npm pack builds the wasm) and installed into a copy
// of each example by its test (examples/test/); the Go ones are the modules
// marked "example" in goModules. Every one runs even when one fails.
async function testExamples(io) {
  log(io, 'examples (examples/)');
  const [tarball, remove] = await pack(io);
  const errors = [];
  try {
    const files = readdirSync(path.join(root, 'examples/test'))
      .filter((f) => f.endsWith('.test.js'))
      .sort()
      .map((f) => `examples/test/${f}`);
    await run(io, process.execPath, ['--test', '--test-concurrency=2', '--test-reporter=spec', ...files], {
      env: { EDGEBLOOM_TARBALL: tarball },
    }).catch((err) => errors.push(err));
  } finally {
    remove();
  }
  for (const dir of Object.keys(goModules)) {
    if (has(dir, 'example')) await testModule(io, dir).catch((err) => errors.push(err));
  }
  if (errors.length) throw errors[0];
}

// example NAME: what "npm install && npm start" does in examples/NAME once
// edgebloom is on npm, with the package packed from this checkout instead
// (npm install --no-save leaves the example's package.json as it is).
async function runExample(io, name) {
  const npmExamples = readdirSync(path.join(root, 'examples')).filter((d) =>
    existsSync(path.join(root, 'examples', d, 'package.json')),
  );
  if (!npmExamples.includes(name)) {
    throw new StepError(
      `build.sh: examples/${name} is no npm example; those are: ${npmExamples.join(' ')} (a Go one runs with go run . in its directory)`,
      { cause: 2 },
    );
  }
  const [tarball, remove] = await pack(io);
  try {
    await run(io, 'npm', ['install', '--no-save', '--no-audit', '--no-fund', tarball], { dir: `examples/${name}` });
  } finally {
    remove();
  }
  await run(io, 'npm', ['start'], { dir: `examples/${name}` });
}

/** endToEnd: the examples, then the e2e suite, beside the workerd suite (npm test's last step). */
export async function endToEnd(io) {
  await beside(
    io,
    async (io) => {
      await testExamples(io);
      await testE2e(io);
    },
    testWorkerJs,
  );
}

const withBuild = (step) => async (io) => {
  setup();
  build();
  await step(io);
};

/** The targets build.sh hands to this program. */
export const targets = {
  'test-go': async (io) => (setup(), testGo(io)),
  lint: lintJs,
  'lint-go': lintGo,
  'test-module': async (io, dir) => {
    if (!dir) throw new StepError('usage: build.sh test-module DIR (a Go module of go.work)');
    setup();
    await testModule(io, dir);
  },
  'test-redis': async (io) => (setup(), testModule(io, 'redisfilter')),
  'test-colly': async (io) => (setup(), testModule(io, 'colly')),
  'test-parquet': (io) => testModule(io, 'parquettest'),
  'test-modules': (io) => testModule(io, 'modtest'),
  'test-js': withBuild(testJs),
  'test-e2e': withBuild(testE2e),
  'test-ecosystem': withBuild(testEcosystem),
  'test-docs': withBuild(testDocs),
  'test-worker': withBuild(async (io) => {
    await testModule(io, 'worker');
    await testWorkerJs(io);
  }),
  // What a release runs (RELEASING.md), which npm test leaves out: the
  // first run builds GoReleaser from the module proxy, a large build
  // (tools/release/go.mod). .ci/run runs it after npm test.
  'release-check': async (io) => {
    ensureNodeModules();
    log(io, 'release checks (tools/release)');
    await nodeTest(io, 'tools/release/');
  },
  'test-examples': async (io) => {
    ensureNodeModules();
    ensureSystemPackages();
    await testExamples(io);
  },
  example: async (io, name) => {
    if (!name) throw new StepError('usage: build.sh example NAME (a directory of examples/)', { cause: 2 });
    await runExample(io, name);
  },
  // Everything npm test runs. The ecosystem suite mostly waits on child
  // processes, so it runs beside the Node tests; the examples, then the
  // e2e suite, run beside the workerd suite: all three spend most of their
  // time waiting on Chromium, workerd, npm and timers (a whole run here:
  // 4:15 of CPU in the 10:37 they took one after the other, examples aside).
  test: async (io) => {
    setup();
    log(io, 'npm test');
    await lintJs(io);
    await testGo(io);
    build();
    await beside(io, testEcosystem, async (io) => {
      await testJs(io);
      await testDocs(io);
    });
    await endToEnd(io);
    log(io, 'npm test passed');
  },
};

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [target, arg] = process.argv.slice(2);
  if (!(target in targets)) {
    console.error(`usage: node tools/suites.mjs TARGET [ARG]; targets: ${Object.keys(targets).join(' ')}`);
    process.exit(2);
  }
  targets[target](terminal, arg).catch((err) => {
    if (!(err instanceof StepError)) throw err;
    process.stderr.write(`${err.message}\n`);
    process.exitCode = err.cause === 2 ? 2 : 1;
  });
}
