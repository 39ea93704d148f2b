// The engine as tests see it: its memory, its live filters, and ways to
// stop it. Tests, benchmarks and the edge service's test hooks import this
// file by its path; the package neither ships it (package.json "files"
// takes js/*.js, not js/test/) nor exports it, and no module of js/ imports
// it.
import { OP_CRASH, OP_LIVE } from '../abi.js';
import { budgetRoom, call, live, loadRoom, registry } from '../core.js';

/** The number of live filters in the engine, for leak tests. */
export function liveFilters() {
  return call(live(), OP_LIVE);
}

/**
 * Stops the engine as a panic outside recover would, so that the
 * ERR_ENGINE_EXITED path can be tested. Filters of the stopped engine throw
 * from then on; init() starts a fresh engine.
 */
export function crashEngine() {
  call(live(), OP_CRASH);
}

/**
 * Stops the engine from inside a FinalizationRegistry callback, as a free()
 * of a dropped filter does when the Go program dies in it, after the next
 * garbage collection that finds the returned object unreachable. No call is
 * being checked then: the next call must notice.
 * @returns {object} drop it, then collect garbage
 */
export function crashEngineInFinalizer() {
  const token = {};
  registry.register(token, { handle: 0, e: live(), op: OP_CRASH });
  return token;
}

/**
 * The memory budget, what counts against it and the room it has left (for a
 * load: loadRoom), in bytes.
 */
export function memoryBudget() {
  const e = live();
  return { limit: e.limit, used: e.used, scratch: e.scratchSize, room: budgetRoom(e), loadRoom: loadRoom(e) };
}

/** The size of the engine's linear memory in bytes. */
export function memoryBytes() {
  return live().memory.buffer.byteLength;
}
