// The module says which release it is (version, as version.txt and
// package.json give it, before init()), and its engine carries the same
// version: init() refuses an edgebloom.wasm of another release, which may
// size or check differently even where the interface is the same. Node runs
// each test file in its own process, so the engine starts here from nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import * as edgebloom from 'edgebloom';
import { initAfterRefusal } from './helpers.js';

const { init, version } = edgebloom;
const require = createRequire(import.meta.url);
const wasmPath = require.resolve('edgebloom/edgebloom.wasm');
const versionTxt = (await readFile(new URL('../../version.txt', import.meta.url), 'utf8')).trim();

// otherRelease returns the engine with its release version replaced by
// another of the same length (each digit one more), and that version.
function otherRelease(wasm) {
  const text = new TextEncoder().encode(version);
  const at = [];
  for (let i = 0; i + text.length <= wasm.length; i++) {
    if (text.every((b, j) => wasm[i + j] === b)) at.push(i);
  }
  assert.equal(at.length, 1, `the engine holds "${version}" once`);
  const other = version.replace(/\d/g, (d) => String((Number(d) + 1) % 10));
  const out = wasm.slice();
  out.set(new TextEncoder().encode(other), at[0]);
  return [out, other];
}

test('version is the release of version.txt and package.json, before init()', () => {
  assert.equal(version, versionTxt);
  assert.equal(version, require('edgebloom/package.json').version);
});

test('an edgebloom.wasm of another release is refused with ERR_VERSION, and init() then takes the right one', async () => {
  const [wasm, other] = otherRelease(new Uint8Array(await readFile(wasmPath)));
  await assert.rejects(init(wasm), (err) => {
    assert.equal(err.code, 'ERR_VERSION');
    assert.equal(
      err.message,
      `edgebloom: this edgebloom.wasm is the engine of release ${other} and this module is release ${version}: load the edgebloom.wasm shipped with this version of the module`,
    );
    return true;
  });
  await initAfterRefusal(edgebloom);
});
