// Entry point for Cloudflare Workers (workerd): the bundler turns this
// import into a compiled WebAssembly.Module, since Workers refuse to compile
// wasm from bytes. Call init() inside a handler, not at global scope: Go's
// runtime reads random bytes when it starts, which workerd forbids there.
import wasmModule from './edgebloom.wasm';
import { start } from './core.js';

export * from './api.js';

/**
 * Loads the engine. Idempotent; a failed call can be retried.
 * @param {WebAssembly.Module} [source]
 * @param {{memoryLimit?: number}} [options] the engine\'s memory budget in bytes (default 64 MiB)
 */
export function init(source, options) {
  return start(source, async () => wasmModule, undefined, options);
}
