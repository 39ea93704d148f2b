// What the engine's design (wasm/main.go) rests on, measured in Go's
// js/wasm port in Node: a syscall/js function called with a string beside
// a //go:wasmexport function, the same export with a deferred recover, and
// runtime.GC after bitsets were dropped. It builds bench/cmd/boundary with
// the Go on PATH into a temporary directory and loads it with that Go's
// wasm_exec.js.
//
//   node bench/js/boundary.mjs [--calls N] [--rounds R]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: { calls: { type: 'string', default: '200000' }, rounds: { type: 'string', default: '7' } },
});
const calls = Number(values.calls);
const rounds = Number(values.rounds);
const dir = mkdtempSync(path.join(tmpdir(), 'boundary-'));
try {
  const bench = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
  const wasm = path.join(dir, 'boundary.wasm');
  // The collector the engine is built with (docs/size.md).
  const env = { ...process.env, GOOS: 'js', GOARCH: 'wasm', GOEXPERIMENT: 'nogreenteagc' };
  execFileSync('go', ['build', '-o', wasm, './cmd/boundary'], { cwd: bench, env, stdio: 'inherit' });
  const goroot = execFileSync('go', ['env', 'GOROOT'], { encoding: 'utf8' }).trim();
  // Go's glue defines globalThis.Go; it is a script, not a module.
  new Function(readFileSync(path.join(goroot, 'lib/wasm/wasm_exec.js'), 'utf8'))();
  const go = new globalThis.Go();
  const { instance } = await WebAssembly.instantiate(readFileSync(wasm), go.importObject);
  go.run(instance);
  const { plain, recovering, collect } = instance.exports;
  const viaJS = globalThis.boundaryViaJS;

  // ns a call of each, the median of rounds of calls each; the rounds of
  // the three take turns, after one round of each that is not counted (so
  // that the JIT has compiled the loops), so that the load of a shared
  // machine falls on all of them alike.
  const key = 'https://example.com/some/path?query=1';
  const cases = [
    ['a //go:wasmexport call', plain, calls],
    ['the same with a deferred recover', recovering, calls],
    ['a syscall/js call with a string', () => viaJS(key), Math.max(1, Math.floor(calls / 100))],
  ];
  const runs = cases.map(() => []);
  for (let r = -1; r < rounds; r++) {
    cases.forEach(([, f, n], c) => {
      const t = process.hrtime.bigint();
      for (let i = 0; i < n; i++) f(i);
      if (r >= 0) runs[c].push(Number(process.hrtime.bigint() - t) / n);
    });
  }
  const median = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1];
  const rows = cases.map(([name], c) => [name, median(runs[c])]);
  console.log(`Go's js/wasm in Node ${process.version}, median of ${rounds} rounds, ns a call:`);
  for (const [name, ns] of rows) console.log(`  ${name.padEnd(36)} ${ns.toFixed(1)}`);
  for (const [n, mib] of [
    [4, 1],
    [4, 8],
  ]) {
    const gcs = [];
    for (let r = 0; r < rounds; r++) gcs.push(Number(collect(n, mib)) / 1e6);
    gcs.sort((a, b) => a - b);
    console.log(`  runtime.GC after ${n} bitsets of ${mib} MiB dropped: ${gcs[gcs.length >> 1].toFixed(2)} ms`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
