// Counts the inputs the npm module refuses with another code than Go, over
// mutations of valid encodings made by Go's tests from the seeds given
// (bloom/mutations_test.go): TestMutations' 20,000 edits of small filters
// of every kind and of a sharded container, and TestMutationsLarge's edits
// of filters of 27 and 29 MiB, around the most a fresh engine's default
// memory budget loads. Each case carries two of Go's codes: under the case's
// maxBits alone ("native"), and with the bound the engine's budget adds
// ("budget", what the module's tests require).
//
//   node tools/refusal-codes.mjs [--module DIR] [--large N] SEED...
//
// --module DIR loads the npm module from DIR/js/node.js (another checkout,
// built), so that the same cases measure the module before and after a
// change; DIR defaults to this checkout. Run from the repository root; it
// writes only to a temporary directory, which it removes.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  options: { module: { type: 'string', default: '.' }, large: { type: 'string', default: '100' } },
  allowPositionals: true,
});
const root = new URL('..', import.meta.url).pathname;
const edgebloom = await import(join(resolve(values.module), 'js/node.js'));
await edgebloom.init();

function codeOf(bytes, maxBits) {
  try {
    edgebloom.fromBytes(bytes, { maxBits }).free();
    return 'no error';
  } catch (err) {
    return err?.code ?? `${err?.name}: ${err?.message}`;
  }
}

function tally(cases, bytesOf) {
  const budget = {};
  const native = {};
  let refusalsDiffer = 0;
  for (const c of cases) {
    const got = codeOf(bytesOf(c), c.maxBits);
    const goNative = c.native ?? c.code;
    if (got !== c.code) budget[`${got} where Go says ${c.code}`] = (budget[`${got} where Go says ${c.code}`] ?? 0) + 1;
    if (got !== goNative) {
      native[`${got} where Go says ${goNative}`] = (native[`${got} where Go says ${goNative}`] ?? 0) + 1;
      if (goNative !== 'no error' && got !== 'no error') refusalsDiffer++;
    }
  }
  const sum = (o) => Object.values(o).reduce((a, b) => a + b, 0);
  return {
    cases: cases.length,
    differFromBudget: sum(budget),
    budget,
    differFromNative: sum(native),
    refusalsDiffer,
    native,
  };
}

const go = (env) =>
  execFileSync('go', ['test', '-count=1', '-run', '^(TestMutations|TestMutationsLarge)$', './bloom'], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });

for (const seed of positionals) {
  const dir = mkdtempSync(join(tmpdir(), 'edgebloom-refusals-'));
  try {
    go({
      EDGEBLOOM_MUTATION_SEED: seed,
      EDGEBLOOM_MUTATIONS: join(dir, 'small.json'),
      EDGEBLOOM_MUTATIONS_LARGE: dir,
      EDGEBLOOM_MUTATIONS_LARGE_N: values.large,
    });
    const small = JSON.parse(readFileSync(join(dir, 'small.json'), 'utf8')).cases;
    const large = JSON.parse(readFileSync(join(dir, 'index.json'), 'utf8')).cases ?? [];
    const fromB64 = (c) => Buffer.from(c.base64, 'base64');
    console.log(
      JSON.stringify({
        seed,
        small: tally(small, fromB64),
        large: tally(large, (c) => readFileSync(join(dir, c.base64))),
      }),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
