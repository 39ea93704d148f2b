// init() given what the field gives it: a server answering the wasm's URL
// with a page (Vite 7's dev server answers unknown files with index.html), a
// 404, HTML served as application/wasm, a Response that the host's
// compileStreaming refuses (one of another realm, as in Vercel's
// edge-runtime), and a bundle without import.meta.url (esbuild
// --format=iife). Each error names the URL, the status and the content type
// and says what to do; the module keeps working after each.
//
// The engine starts once a process, so every failing call comes before the
// first one that succeeds.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import vm from 'node:vm';
import * as esbuild from 'esbuild';
import { init, BloomFilter } from '../index.js';

const wasm = readFileSync(new URL('../edgebloom.wasm', import.meta.url));
const page = '<!doctype html><html><body>app</body></html>';
let origin;
let server;

before(async () => {
  server = http.createServer((req, res) => {
    const answers = {
      '/edgebloom.wasm': [200, 'application/wasm', wasm],
      '/octet/edgebloom.wasm': [200, 'application/octet-stream', wasm],
      '/spa/edgebloom.wasm': [200, 'text/html', page],
      '/lying/edgebloom.wasm': [200, 'application/wasm', page],
    };
    const [status, type, body] = answers[req.url] ?? [404, 'text/plain', 'not found'];
    res.writeHead(status, { 'Content-Type': type });
    res.end(body);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${server.address().port}`;
});
after(() => new Promise((resolve) => server.close(resolve)));

// What every ERR_WASM_FETCH says: the URL, the status, the content type,
// and the two ways out.
function fetchError(url, status, type, what) {
  return (err) => {
    assert.equal(err.code, 'ERR_WASM_FETCH', err.stack);
    assert.ok(err.message.startsWith(`edgebloom: ${url} (status ${status}, Content-Type ${type}) `), err.message);
    assert.match(err.message, what);
    assert.match(err.message, /init\(url \| bytes \| Module\)/);
    assert.match(err.message, /serve edgebloom\.wasm at the URL above/);
    return true;
  };
}

const notInitialized = () =>
  assert.throws(() => new BloomFilter({ capacity: 10, errorRate: 0.1 }), { code: 'ERR_NOT_INITIALIZED' });

test('a page where the wasm should be: ERR_WASM_FETCH naming the URL, status and type', async () => {
  const url = `${origin}/spa/edgebloom.wasm`;
  await assert.rejects(
    init(url),
    fetchError(url, 200, 'text/html', /is not WebAssembly: it starts with "<!doctype html><"/),
  );
  await assert.rejects(init(new URL(url)), { code: 'ERR_WASM_FETCH' });
  await assert.rejects(init(await fetch(url)), fetchError(url, 200, 'text/html', /is not WebAssembly/));
  notInitialized();
});

test('a 404: ERR_WASM_FETCH with the status', async () => {
  const url = `${origin}/missing/edgebloom.wasm`;
  await assert.rejects(init(url), fetchError(url, 404, 'text/plain', /did not answer 200 OK/));
  notInitialized();
});

test('HTML served as application/wasm: ERR_WASM_FETCH, with the CompileError as its cause', async () => {
  const url = `${origin}/lying/edgebloom.wasm`;
  await assert.rejects(init(url), (err) => {
    fetchError(url, 200, 'application/wasm', /served as application\/wasm but is not WebAssembly/)(err);
    assert.equal(err.cause?.name, 'CompileError');
    return true;
  });
  notInitialized();
});

test('nothing listening: ERR_WASM_FETCH naming the URL', async () => {
  const closed = http.createServer();
  await new Promise((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${closed.address().port}/edgebloom.wasm`;
  await new Promise((resolve) => closed.close(resolve));
  await assert.rejects(init(url), (err) => {
    assert.equal(err.code, 'ERR_WASM_FETCH');
    assert.ok(err.message.startsWith(`edgebloom: ${url} could not be fetched`), err.message);
    return true;
  });
  notInitialized();
});

test('bytes that are not WebAssembly still reject with CompileError; a number with a TypeError', async () => {
  await assert.rejects(init(new TextEncoder().encode(page)), WebAssembly.CompileError);
  await assert.rejects(init(42), { name: 'TypeError', code: 'ERR_ARG', message: /init\(source\) takes a URL/ });
  notInitialized();
});

test('a bundle without import.meta.url: ERR_WASM_URL asks for init(url | bytes | Module), and init(bytes) works', async () => {
  const { outputFiles } = await esbuild.build({
    entryPoints: [new URL('../index.js', import.meta.url).pathname],
    bundle: true,
    format: 'iife',
    globalName: 'edgebloomIIFE',
    write: false,
    logLevel: 'silent',
  });
  const context = vm.createContext({
    ...globalThis,
    console,
    WebAssembly,
    TextEncoder,
    TextDecoder,
    crypto,
    performance,
  });
  vm.runInContext(outputFiles[0].text, context);
  const iife = context.edgebloomIIFE;
  await assert.rejects(iife.init(), (err) => {
    assert.equal(err.code, 'ERR_WASM_URL');
    assert.match(err.message, /import\.meta\.url is missing/);
    assert.match(err.message, /init\(url \| bytes \| Module\)/);
    return true;
  });
  await iife.init(wasm);
  const f = new iife.BloomFilter({ capacity: 10, errorRate: 0.1 });
  assert.deepEqual([f.add('a'), f.add('a'), f.has('b')], [true, false, false]);
});

// Node's compileStreaming takes only Node's own Response: it refuses one of
// another realm with "must be an instance of Response" before reading it.
test('a Response that compileStreaming refuses is read with arrayBuffer()', async () => {
  const real = await fetch(`${origin}/edgebloom.wasm`);
  const foreign = {
    ok: real.ok,
    status: real.status,
    url: real.url,
    headers: real.headers,
    get bodyUsed() {
      return real.bodyUsed;
    },
    arrayBuffer: () => real.arrayBuffer(),
  };
  await assert.rejects(WebAssembly.compileStreaming(foreign), { name: 'TypeError' });
  assert.equal(foreign.bodyUsed, false);
  await init(foreign);
  const f = new BloomFilter({ capacity: 10, errorRate: 0.1 });
  assert.deepEqual([f.add('a'), f.add('a'), f.has('a'), f.has('b')], [true, false, true, false]);
});
