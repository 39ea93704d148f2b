// Entry point for browsers (pages, web workers, MV3 extension service
// workers) and the default: fetches edgebloom.wasm next to this file, or
// takes the source the caller gives.
import { start } from './core.js';

export * from './api.js';

/**
 * Loads the engine. Idempotent; a failed call can be retried.
 * @param {URL | string | Response | BufferSource | WebAssembly.Module} [source]
 */
export function init(source) {
  return start(source, () => fetch(new URL('./edgebloom.wasm', import.meta.url)));
}
