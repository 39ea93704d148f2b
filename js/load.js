// From what init() was given to a compiled WebAssembly.Module, with errors
// that say what went wrong and what to do about it.
//
// Checks are by brand, not instanceof, where a value may come from another
// realm: Vercel's edge-runtime runs code in a vm context whose Response,
// ArrayBuffer and WebAssembly.Module are not the host's, and whose
// compileStreaming (the host's) refuses the context's Response.

import { codedError } from './errors.js';

const tag = (value) => Object.prototype.toString.call(value);

// What every "the wasm could not be loaded" message ends with.
const FIXES =
  'Either pass the wasm to init(url | bytes | Module) yourself (for example, copy node_modules/edgebloom/js/edgebloom.wasm ' +
  'to your static files and call init("/edgebloom.wasm")), or serve edgebloom.wasm at the URL above.';

/**
 * The error of an entry point that finds the wasm next to itself through
 * import.meta.url, when the bundle it is in has none (esbuild --format=iife
 * or cjs replace import.meta with {}).
 */
export function noModuleURL() {
  return codedError(
    Error,
    'ERR_WASM_URL',
    'edgebloom: import.meta.url is missing (this bundle format drops it), so init() cannot find edgebloom.wasm next to the module. ' +
      'Pass the wasm to init(url | bytes | Module): a URL where edgebloom.wasm is served, its bytes, or a compiled WebAssembly.Module.',
  );
}

function isModule(value) {
  return value instanceof WebAssembly.Module || tag(value) === '[object WebAssembly.Module]';
}

function isBytes(value) {
  return ArrayBuffer.isView(value) || value instanceof ArrayBuffer || tag(value) === '[object ArrayBuffer]';
}

function isResponse(value) {
  if (typeof Response !== 'undefined' && value instanceof Response) return true;
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof value.arrayBuffer === 'function' &&
    typeof value.status === 'number' &&
    typeof value.headers?.get === 'function'
  );
}

// The first bytes of an answer, as text when they are printable: an HTML
// page where the wasm should be shows as "<!doctype html>".
function preview(bytes) {
  const head = new Uint8Array(bytes, 0, Math.min(16, bytes.byteLength));
  if (head.length === 0) return 'it is empty';
  if (head.every((b) => b >= 0x20 && b < 0x7f)) return `it starts with ${JSON.stringify(String.fromCharCode(...head))}`;
  return `it starts with bytes ${[...head.subarray(0, 4)].map((b) => b.toString(16).padStart(2, '0')).join(' ')}`;
}

function fetchError(url, response, what, cause) {
  const type = response ? (response.headers.get('Content-Type') ?? 'none') : undefined;
  const answer = response ? ` (status ${response.status}, Content-Type ${type})` : '';
  return codedError(Error, 'ERR_WASM_FETCH', `edgebloom: ${url}${answer} ${what}. ${FIXES}`, cause);
}

const WASM_MAGIC = [0x00, 0x61, 0x73, 0x6d];

async function fromResponse(response, requested) {
  const url = response.url || requested || 'the Response given to init()';
  if (!response.ok) throw fetchError(url, response, 'is not the engine: the server did not answer 200 OK');
  const type = response.headers.get('Content-Type') ?? '';
  if (typeof WebAssembly.compileStreaming === 'function' && type.split(';')[0].trim() === 'application/wasm') {
    try {
      return await WebAssembly.compileStreaming(response);
    } catch (err) {
      // A Response of another realm: the host's compileStreaming refuses it
      // with a TypeError before reading it, and arrayBuffer() below can.
      // Names, not instanceof: the error is the host's too.
      if (err?.name === 'CompileError')
        throw fetchError(url, response, 'is served as application/wasm but is not WebAssembly', err);
      if (err?.name !== 'TypeError' || response.bodyUsed) throw err;
    }
  }
  let bytes;
  try {
    bytes = await response.arrayBuffer();
  } catch (err) {
    throw fetchError(url, response, 'could not be read', err);
  }
  const head = new Uint8Array(bytes, 0, Math.min(4, bytes.byteLength));
  if (!WASM_MAGIC.every((b, i) => head[i] === b)) {
    throw fetchError(url, response, `is not WebAssembly: ${preview(bytes)}`);
  }
  return WebAssembly.compile(bytes);
}

/**
 * Compiles what init() was given: a WebAssembly.Module as it is, bytes,
 * a Response (also of another realm), or a URL (a string or URL) to fetch.
 * Bytes are compiled as given, so bytes that are not WebAssembly reject with
 * WebAssembly's CompileError.
 */
export async function toModule(source) {
  if (isModule(source)) return source;
  // Bytes before Response: in Node the first use of the global Response
  // loads its fetch implementation (undici), a large part of a cold start
  // that only needed the bytes Node's entry point had read (bench/README.md,
  // "Figures the code's design rests on").
  if (isBytes(source)) return WebAssembly.compile(source);
  if (isResponse(source)) return fromResponse(source);
  if (source instanceof URL || tag(source) === '[object URL]' || typeof source === 'string') {
    const url = String(source);
    let response;
    try {
      response = await fetch(url);
    } catch (err) {
      throw fetchError(url, undefined, `could not be fetched (${err?.message ?? err})`, err);
    }
    return fromResponse(response, url);
  }
  throw codedError(
    TypeError,
    'ERR_ARG',
    'edgebloom: init(source) takes a URL, a Response, a BufferSource or a WebAssembly.Module',
  );
}
