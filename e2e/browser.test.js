// The browser entry point (js/index.js) in headless Chromium, checked against
// the golden vectors: in a page, with the wasm served as application/wasm
// (WebAssembly.compileStreaming) and as application/octet-stream (the
// arrayBuffer fallback), with each kind of source init() takes, and in a
// module web worker. No global is left behind, not even a foreign Go.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { cleanup, timeout } from '../testkit/process.js';
import { launchChromium, serve } from '../testkit/browser.js';
import { assertVectors, checkPageHtml, checkPageModule, loadVectors, openCheckPage, packageDirs } from './helpers.js';

// Counts compileStreaming calls, to see which path the loader took.
const countStreaming = `
window.__streamed = 0;
const compileStreaming = WebAssembly.compileStreaming;
WebAssembly.compileStreaming = function (...args) {
  window.__streamed++;
  return compileStreaming.apply(this, args);
};`;

// A global Go like the one syumai/workers installs: the package must leave it alone.
const foreignGo = `globalThis.Go = class Go { foreign = true; };`;

// What the page passes to init(), by ?source=.
const chooseSource = `
const wasmURL = new URL('/js/edgebloom.wasm', location.href);
const bytes = async () => new Uint8Array(await (await fetch(wasmURL)).arrayBuffer());
const sources = {
  default: async () => undefined,
  url: async () => wasmURL,
  string: async () => '/js/edgebloom.wasm',
  response: () => fetch(wasmURL),
  bytes,
  module: async () => WebAssembly.compile(await bytes()),
};
await edgebloom.init(await sources[new URLSearchParams(location.search).get('source')]());`;

const page = (setup) =>
  checkPageHtml({
    importMap: { edgebloom: '/js/index.js' },
    setup: countStreaming + setup,
    module: checkPageModule({
      edgebloom: 'edgebloom',
      check: '/e2e/check.js',
      setup: chooseSource,
      extra: `result.streamed = window.__streamed;
result.goIsForeign = globalThis.Go ? new globalThis.Go().foreign === true : null;`,
    }),
  });

// Import maps do not reach into workers: the worker imports the file.
const workerPage = checkPageHtml({
  module: `
const worker = new Worker('/worker.js', { type: 'module' });
worker.onmessage = (e) => window.report(e.data);
worker.onerror = (e) => window.report({ checked: 0, failures: [\`worker error: \${e.message}\`] });
worker.postMessage(await window.vectors());`,
});
const workerScript = `
import * as edgebloom from '/js/index.js';
import { runChecks } from '/e2e/check.js';
onmessage = async (e) => postMessage(await runChecks(edgebloom, e.data));`;

let browser;
let vectors;
before(
  async () => {
    vectors = await loadVectors();
    browser = await launchChromium();
  },
  { timeout },
);
after(cleanup);

for (const { wasmType, source, streamed, setup = '' } of [
  { wasmType: 'application/wasm', source: 'default', streamed: 1 },
  { wasmType: 'application/octet-stream', source: 'default', streamed: 0, setup: foreignGo },
  { wasmType: 'application/wasm', source: 'url', streamed: 1 },
  { wasmType: 'application/octet-stream', source: 'string', streamed: 0 },
  { wasmType: 'application/wasm', source: 'response', streamed: 1 },
  { wasmType: 'application/wasm', source: 'bytes', streamed: 0 },
  { wasmType: 'application/wasm', source: 'module', streamed: 0 },
]) {
  test(`page, wasm served as ${wasmType}, init(${source})`, { timeout }, async () => {
    const server = await serve({ pages: { '/': page(setup) }, dirs: packageDirs, wasmType });
    const { result } = await openCheckPage(browser, `${server.origin}/?source=${source}`, vectors);
    assertVectors(result);
    assert.equal(result.streamed, streamed, 'compileStreaming calls');
    assert.equal(result.goIsForeign, setup ? true : null, 'the global Go');
    assert.equal(server.log.filter((r) => r.startsWith('GET /js/edgebloom.wasm ')).length, 1, server.log.join('\n'));
    browser.assertClean();
  });
}

test('module web worker', { timeout }, async () => {
  const server = await serve({
    pages: { '/': workerPage, '/worker.js': { type: 'text/javascript', body: workerScript } },
    dirs: packageDirs,
  });
  const { result } = await openCheckPage(browser, `${server.origin}/`, vectors);
  assertVectors(result);
  assert.ok(server.log.includes('GET /js/edgebloom.wasm 200'), server.log.join('\n'));
  browser.assertClean();
});
