// The engine, js/edgebloom.wasm, built from wasm/ as the npm module ships it,
// with its glue (js/wasm_exec.js) and its size budget. Usage, from build.sh:
//
//   node tools/wasm.mjs build        build the engine and its glue; fail over budget
//   node tools/wasm.mjs size [ROWS]  what each function and package costs in the
//                                    gzipped engine, beyond an empty Go program
//
// Why the budget, and why each build setting below: docs/size.md.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureNodeModules, main, StepError } from './deps.mjs';
import { wrapModule, writeAtomic } from './glue.mjs';
import { sync } from './release.mjs';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The size budget of js/edgebloom.wasm in bytes, raw and gzip -9 (docs/size.md). */
export const budget = { raw: 2_000_000, gzip: 602_000 };

/** The collector the engine is built with (docs/size.md). */
export const goExperiment = 'nogreenteagc';

/** Binaryen's wasm-opt settings: exactly the wasm features Go's output uses. */
export const wasmOptFlags = [
  '-Oz',
  '--mvp-features',
  '--enable-mutable-globals',
  '--enable-bulk-memory',
  '--enable-sign-ext',
  '--enable-nontrapping-float-to-int',
];

const log = (what) => process.stdout.write(`\n==> ${what}\n`);

const goEnv = (name) => execFileSync('go', ['env', name], { encoding: 'utf8' }).trim();

function run(cmd, args, options = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', ...options });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new StepError(`${cmd} ${args.join(' ')} exited with ${r.status ?? r.signal}`);
}

/**
 * goWasm builds the Go main package in dir pkg into the wasm file out as
 * the engine is built: GOOS=js GOARCH=wasm, the runtime without bounds
 * checks and with goExperiment's collector, then wasm-opt. With names, the
 * function names stay in (for tools/wasm-size.mjs). wasm-opt's output is
 * kept in .cache/wasm-opt under the sha256 of its input, its version and
 * its flags, so a rebuild of the same Go code reuses it.
 */
export function goWasm(pkg, out, { names = false } = {}) {
  const ldflags = names ? '-buildid=' : '-s -w -buildid=';
  const flags = names ? [...wasmOptFlags, '-g'] : wasmOptFlags;
  run(
    'go',
    ['build', '-trimpath', '-buildvcs=false', '-gcflags=runtime=-B', `-ldflags=${ldflags}`, '-o', `${out}.tmp`, '.'],
    { cwd: pkg, env: { ...process.env, GOEXPERIMENT: goExperiment, GOOS: 'js', GOARCH: 'wasm' } },
  );
  // wasm-opt comes with the devDependencies: a fresh clone installs them
  // once here (npm start builds before anything else ran).
  const wasmOpt = path.join(root, 'node_modules/binaryen/bin/wasm-opt');
  if (!existsSync(wasmOpt)) ensureNodeModules();
  const version = JSON.parse(readFileSync(path.join(root, 'node_modules/binaryen/package.json'), 'utf8')).version;
  const key = createHash('sha256')
    .update(readFileSync(`${out}.tmp`))
    .update(`${version}\n${flags.join(' ')}\n`)
    .digest('hex');
  const cached = path.join(root, '.cache/wasm-opt', `${key}.wasm`);
  if (!existsSync(cached)) {
    mkdirSync(path.dirname(cached), { recursive: true });
    run(process.execPath, [wasmOpt, ...flags, `${out}.tmp`, '-o', `${cached}.tmp`]);
    renameSync(`${cached}.tmp`, cached);
  }
  copyFileSync(cached, `${out}.tmp`);
  renameSync(`${out}.tmp`, out);
}

/** gzipSize is the length of gzip -9 of file, as the budget counts it. */
export function gzipSize(file) {
  return execFileSync('gzip', ['-9c', file], { maxBuffer: 1 << 30 }).length;
}

/** overBudget returns what of size ({raw, gzip}) is over the budget, or null. */
export function overBudget(size, limit = budget) {
  const over = [];
  if (size.raw > limit.raw) over.push(`${size.raw} bytes raw > ${limit.raw}`);
  if (size.gzip > limit.gzip) over.push(`${size.gzip} bytes gzipped > ${limit.gzip}`);
  return over.length ? over.join(', ') : null;
}

/**
 * build writes version.txt's copies that are stale, then builds
 * js/edgebloom.wasm and js/wasm_exec.js (the glue from the
 * GOROOT that compiled the wasm, tools/glue.mjs), prints the engine's size
 * and sha256 and fails over the budget.
 */
export function build() {
  // version.txt's version into package.json and the engine's source first
  // (tools/release.mjs): a no-op unless version.txt was edited by hand.
  for (const file of sync()) console.log(`wrote ${file} (version.txt)`);
  log(`wasm (${goEnv('GOVERSION')}, GOEXPERIMENT=${goExperiment})`);
  const wasm = path.join(root, 'js/edgebloom.wasm');
  goWasm(path.join(root, 'wasm'), wasm);
  const src = readFileSync(path.join(goEnv('GOROOT'), 'lib/wasm/wasm_exec.js'), 'utf8');
  // Renamed into place, so a test importing the module meanwhile never
  // reads half a file.
  writeAtomic(path.join(root, 'js/wasm_exec.js'), wrapModule(src, goEnv('GOVERSION')));
  const size = { raw: readFileSync(wasm).length, gzip: gzipSize(wasm) };
  console.log(`js/edgebloom.wasm: ${size.raw} bytes, ${size.gzip} gzipped (budget ${budget.raw}, ${budget.gzip})`);
  console.log(`sha256: ${createHash('sha256').update(readFileSync(wasm)).digest('hex')}`);
  const over = overBudget(size);
  if (over) throw new StepError(`js/edgebloom.wasm is over its size budget: ${over} (docs/size.md)`);
}

/**
 * size prints what each function and package of the engine costs in the
 * gzipped wasm, beyond an empty Go program built the same way
 * (tools/wasm-size.mjs).
 */
export function size(rows = '60') {
  const dir = mkdtempSync(path.join(tmpdir(), 'edgebloom-size-'));
  try {
    mkdirSync(path.join(dir, 'empty'));
    writeFileSync(path.join(dir, 'empty/main.go'), 'package main\n\nfunc main() { select {} }\n');
    execFileSync('go', ['mod', 'init', 'empty'], {
      cwd: path.join(dir, 'empty'),
      env: { ...process.env, GOWORK: 'off' },
      stdio: 'ignore',
    });
    log('engine and an empty program, with function names');
    goWasm(path.join(root, 'wasm'), path.join(dir, 'engine.wasm'), { names: true });
    goWasm(path.join(dir, 'empty'), path.join(dir, 'empty.wasm'), { names: true });
    run(process.execPath, [
      path.join(root, 'tools/wasm-size.mjs'),
      path.join(dir, 'engine.wasm'),
      path.join(dir, 'empty.wasm'),
      rows,
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [what, rows] = process.argv.slice(2);
  main(() => {
    switch (what) {
      case 'build':
        return build();
      case 'size':
        return size(rows || undefined);
      default:
        throw new StepError('usage: node tools/wasm.mjs build | size [ROWS]');
    }
  });
}
