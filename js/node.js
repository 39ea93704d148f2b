// Entry point for Node (also Deno and Bun): reads edgebloom.wasm next to
// this file.
import { readFile } from 'node:fs/promises';
import { webcrypto } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { start } from './core.js';

export * from './api.js';

/**
 * Loads the engine. Idempotent; a failed call can be retried.
 * @param {URL | Response | BufferSource | WebAssembly.Module} [source]
 */
export function init(source) {
  // V8 before 12 (Node 18 and 20) can crash the process when TurboFan has
  // inlined a call into wasm and the optimized function later deoptimizes on
  // an exception (a TypeError for a bad key was enough here). Turning that
  // inlining off avoids it; V8 12 (Node 22) does not need this.
  if (Number.parseInt(process.versions.v8, 10) < 12) setFlagsFromString('--no-turbo-inline-js-wasm-calls');
  // Node 18 has no global crypto without a flag; Go needs getRandomValues.
  const extra = globalThis.crypto ? undefined : { crypto: webcrypto };
  return start(source, () => readFile(new URL('./edgebloom.wasm', import.meta.url)), extra);
}
