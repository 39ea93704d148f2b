// Entry point for Vercel's Edge runtime (export condition "edge-light"):
// Vercel and Next.js compile a `.wasm?module` import into a
// WebAssembly.Module, since the Edge runtime, like workerd, compiles no
// wasm from bytes it fetched at run time in production.
import wasmModule from './edgebloom.wasm?module';
import { start } from './core.js';

export * from './api.js';

/**
 * Loads the engine. Idempotent; a failed call can be retried.
 * @param {URL | string | Response | BufferSource | WebAssembly.Module} [source]
 * @param {{memoryLimit?: number}} [options] the engine\'s memory budget in bytes (default 64 MiB)
 */
export function init(source, options) {
  return start(source, async () => wasmModule, undefined, options);
}
