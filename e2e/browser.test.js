// The browser entry point (js/index.js) in a page of headless Chromium: the
// golden vectors, and no globals left behind, with the wasm served once as
// application/wasm (WebAssembly.compileStreaming) and once as
// application/octet-stream (the arrayBuffer fallback).

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { assertVectors, checkPageHtml, checkPageModule, cleanup, launchChromium, loadVectors, openCheckPage, packageDirs, serve } from './helpers.js';

// Counts compileStreaming calls, to see which path the loader took; and, for
// one run, a global Go like the one syumai/workers installs, which the
// package must leave alone.
const countStreaming = `
window.__streamed = 0;
const compileStreaming = WebAssembly.compileStreaming;
WebAssembly.compileStreaming = function (...args) {
  window.__streamed++;
  return compileStreaming.apply(this, args);
};`;
const foreignGo = `globalThis.Go = class Go { foreign = true; };`;

const page = (setup) =>
  checkPageHtml({
    importMap: { edgebloom: '/js/index.js' },
    setup: countStreaming + setup,
    module: checkPageModule({
      edgebloom: 'edgebloom',
      check: '/e2e/check.js',
      extra: `result.streamed = window.__streamed;
result.goIsForeign = globalThis.Go ? new globalThis.Go().foreign === true : null;`,
    }),
  });

let browser;
let vectors;
before(async () => {
  vectors = await loadVectors();
  browser = await launchChromium();
});
after(cleanup);

for (const { wasmType, streamed, setup } of [
  { wasmType: 'application/wasm', streamed: 1, setup: '' },
  { wasmType: 'application/octet-stream', streamed: 0, setup: foreignGo },
]) {
  test(`page, wasm served as ${wasmType}`, async () => {
    const server = await serve({ pages: { '/': page(setup) }, dirs: packageDirs, wasmType });
    const { result } = await openCheckPage(browser, `${server.origin}/`, vectors);
    assertVectors(result);
    assert.equal(result.streamed, streamed, 'compileStreaming calls');
    assert.equal(result.goIsForeign, setup ? true : null, 'the global Go');
    assert.ok(server.log.includes('GET /js/edgebloom.wasm 200'), server.log.join('\n'));
    browser.assertClean();
  });
}
