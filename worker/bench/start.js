// What a fresh Go instance of the front costs before it serves, split in
// two, beside bench/floor (net/http alone on syumai/workers): instantiating
// the compiled module (which copies its data segments into a new linear
// memory) and Go's start (the runtime and every package's init, until
// main signals ready). syumai/workers pays both on every request. Both run
// here in Node on one compiled module, 200 times each, with the globals
// syumai/workers reads at init stubbed; the sizes of the code and data
// sections come first. Run from the repository root:
//
//   node worker/bench/start.js
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { WORKER_DIR } from '../../testkit/worker.js';

const N = 200;
const goroot = execFileSync('go', ['env', 'GOROOT']).toString().trim();

// sections sums the sizes of a module's code (10) and data (11) sections.
function sections(bytes) {
  const size = {};
  let i = 8;
  const leb = () => {
    let r = 0;
    let s = 0;
    let x;
    do {
      x = bytes[i++];
      r += (x & 0x7f) * 2 ** s;
      s += 7;
    } while (x & 0x80);
    return r;
  };
  while (i < bytes.length) {
    const id = bytes[i++];
    const n = leb();
    size[id] = (size[id] ?? 0) + n;
    i += n;
  }
  return { code: size[10] ?? 0, data: size[11] ?? 0 };
}

// Go's wasm_exec.js and what syumai/workers reads at package init.
globalThis.context = { binding: {} };
await import(pathToFileURL(join(goroot, 'lib', 'wasm', 'wasm_exec.js')).href);

async function measure(file) {
  const bytes = readFileSync(file);
  const mod = await WebAssembly.compile(bytes);
  const inst = [];
  const start = [];
  for (let i = 0; i < N + 20; i++) {
    const go = new globalThis.Go();
    let ready;
    const isReady = new Promise((r) => (ready = r));
    const t0 = performance.now();
    const instance = new WebAssembly.Instance(mod, { ...go.importObject, workers: { ready: () => ready() } });
    const t1 = performance.now();
    go.run(instance).catch(() => {});
    await isReady;
    if (i < 20) continue; // warm-up
    inst.push(t1 - t0);
    start.push(performance.now() - t1);
  }
  const q = (xs, f) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * f)].toFixed(2);
  const { code, data } = sections(bytes);
  return `| ${(bytes.length / 2 ** 20).toFixed(2)} MiB (code ${(code / 2 ** 10).toFixed(0)} KiB, data ${(data / 2 ** 10).toFixed(0)} KiB) | ${q(inst, 0.5)} ms (${q(inst, 0.1)}) | ${q(start, 0.5)} ms (${q(start, 0.1)}) |`;
}

const dir = mkdtempSync(join(tmpdir(), 'edgebloom-start-'));
try {
  const build = (out, pkg) =>
    execFileSync('go', ['build', '-trimpath', '-buildvcs=false', '-ldflags=-s -w -buildid=', '-o', out, pkg], {
      cwd: WORKER_DIR,
      env: { ...process.env, GOOS: 'js', GOARCH: 'wasm' },
    });
  build(join(dir, 'front.wasm'), './front');
  build(join(dir, 'floor.wasm'), './bench/floor');
  console.log(`| Go program (${N} starts each) | module | instantiate, median (p10) | Go start, median (p10) |`);
  console.log('| --- | --- | --- | --- |');
  console.log(`| the front ${await measure(join(dir, 'front.wasm'))}`);
  console.log(`| bench/floor ${await measure(join(dir, 'floor.wasm'))}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
