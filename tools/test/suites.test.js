// tools/suites.mjs: suites side by side (beside), and its list of Go
// modules against go.work's.
import assert from 'node:assert/strict';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { beside, goModules, run } from '../suites.mjs';

// capture runs fn with an output to a file and returns what it wrote and
// the error it failed with.
async function capture(fn) {
  const dir = mkdtempSync(path.join(tmpdir(), 'suites-test-'));
  const file = path.join(dir, 'out');
  const fd = openSync(file, 'w');
  let error = null;
  try {
    await fn({ out: fd, err: fd });
  } catch (err) {
    error = err;
  }
  closeSync(fd);
  const out = readFileSync(file, 'utf8');
  rmSync(dir, { recursive: true, force: true });
  return { out, error };
}

// A step that prints lines, the last after a delay, and exits with status.
const step =
  (name, status = 0, ms = 0) =>
  (io) =>
    run(io, process.execPath, [
      '-e',
      `console.log('${name} 1'); console.error('${name} 2'); setTimeout(() => { console.log('${name} 3'); process.exit(${status}); }, ${ms});`,
    ]);

test("beside runs both at once and prints the background step's output after the other's", async () => {
  const t0 = performance.now();
  const { out, error } = await capture((io) => beside(io, step('bg', 0, 400), step('fg', 0, 400)));
  assert.equal(error, null);
  assert.equal(out, 'fg 1\nfg 2\nfg 3\nbg 1\nbg 2\nbg 3\n');
  assert.ok(performance.now() - t0 < 4000, 'side by side');
});

test('beside fails when either step failed, after both ended, with both outputs', async () => {
  for (const [bg, fg, failed] of [
    [step('bg', 3), step('fg', 0, 300), /exited with 3/],
    [step('bg', 0, 300), step('fg', 4), /exited with 4/],
  ]) {
    const { out, error } = await capture((io) => beside(io, bg, fg));
    assert.match(error?.message ?? '', failed);
    assert.match(out, /^fg 1\nfg 2\n(fg 3\n)?bg 1\nbg 2\n(bg 3\n)?$/);
  }
});

test("the Go modules are go.work's", () => {
  const work = readFileSync(new URL('../../go.work', import.meta.url), 'utf8');
  const use = work.match(/^use \(\n([^)]*)\)/m)[1];
  const dirs = use
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .map((d) => path.posix.normalize(d));
  assert.deepEqual(Object.keys(goModules).sort(), dirs.sort());
});
