// The engine and this module agree on their interface (internal/abi): an
// edgebloom.wasm built from other sources is refused at init(), before it
// can answer anything. Node runs each test file in its own process, so the
// engine starts here from nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { init, BloomFilter } from 'edgebloom';
import { initAfterRefusal } from './helpers.js';
import { VERSION } from '../abi.js';

const wasmPath = createRequire(import.meta.url).resolve('edgebloom/edgebloom.wasm');

// withoutExport returns the wasm with its export `name` renamed (same
// length, so the binary stays valid): the engine as it was built before
// that export existed.
function withoutExport(wasm, name) {
  const entry = [name.length, ...new TextEncoder().encode(name), 0x00]; // a function export
  const at = [];
  for (let i = 0; i + entry.length <= wasm.length; i++) {
    if (entry.every((b, j) => wasm[i + j] === b)) at.push(i);
  }
  assert.equal(at.length, 1, `the export "${name}" appears once`);
  const out = wasm.slice();
  out[at[0] + name.length] ^= 0x01; // "abi" becomes "abh"
  return out;
}

test('the engine exports the version of the interface it serves', async () => {
  const exports = WebAssembly.Module.exports(new WebAssembly.Module(await readFile(wasmPath))).map((e) => e.name);
  assert.ok(exports.includes('abi'), `exports: ${exports.join(', ')}`);
  assert.ok(Number.isInteger(VERSION) && VERSION >= 1);
});

test('a stale edgebloom.wasm (no abi export) is refused with ERR_VERSION, and init() then takes the right one', async () => {
  const stale = withoutExport(new Uint8Array(await readFile(wasmPath)), 'abi');
  await assert.rejects(init(stale), (err) => {
    assert.equal(err.code, 'ERR_VERSION');
    assert.match(err.message, /stale/);
    assert.match(err.message, new RegExp(`needs version ${VERSION}`));
    return true;
  });
  await initAfterRefusal({ init, BloomFilter });
});
