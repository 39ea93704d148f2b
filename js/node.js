// Entry point for Node (also Deno and Bun): reads edgebloom.wasm next to
// this file.
//
// Imports are kept to what every start needs, because each one is paid at
// import time: node:crypto is required only where there is no global
// crypto (Node 18), and the wasm is read with readFileSync, one system call
// where fs/promises' readFile opens a FileHandle and reads in several turns,
// which costs a cold start more (bench/js/cold.mjs times one).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { setFlagsFromString } from 'node:v8';
import { start } from './core.js';

export * from './api.js';

/**
 * Loads the engine. Idempotent; a failed call can be retried.
 * @param {URL | Response | BufferSource | WebAssembly.Module} [source]
 * @param {{memoryLimit?: number}} [options] the engine\'s memory budget in bytes (default 64 MiB)
 */
export function init(source, options) {
  // V8 before 12 (Node 18 and 20) can crash the process when TurboFan has
  // inlined a call into wasm and the optimized function later deoptimizes on
  // an exception (a TypeError for a bad key was enough here). Turning that
  // inlining off avoids it; V8 12 (Node 22) does not need this.
  if (Number.parseInt(process.versions.v8, 10) < 12) setFlagsFromString('--no-turbo-inline-js-wasm-calls');
  // Node 18 has no global crypto without a flag; Go needs getRandomValues.
  const extra = globalThis.crypto ? undefined : { crypto: createRequire(import.meta.url)('node:crypto').webcrypto };
  return start(source, async () => readFileSync(new URL('./edgebloom.wasm', import.meta.url)), extra, options);
}
