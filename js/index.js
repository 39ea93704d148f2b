// Entry point for browsers (pages, web workers, MV3 extension service
// workers) and the default: fetches edgebloom.wasm next to this file, or
// takes the source the caller gives.
import { start } from './core.js';
import { noModuleURL } from './load.js';

export * from './api.js';

/**
 * Loads the engine. Idempotent; a failed call can be retried.
 * @param {URL | string | Response | BufferSource | WebAssembly.Module} [source]
 * @param {{memoryLimit?: number}} [options] the engine\'s memory budget in bytes (default 64 MiB)
 */
export function init(source, options) {
  return start(
    source,
    async () => {
      // A bundle in a format without import.meta (esbuild --format=iife or
      // cjs) leaves it {}: say what to pass instead of "Invalid URL".
      if (typeof import.meta.url !== 'string') throw noModuleURL();
      // Written out in full: bundlers (webpack 5, Vite, Parcel) recognize
      // exactly this expression and emit the wasm as an asset.
      return new URL('./edgebloom.wasm', import.meta.url);
    },
    undefined,
    options,
  );
}
