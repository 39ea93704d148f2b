// The engine: loading edgebloom.wasm, starting the Go program in it, and
// calling its exports, with the memory budget and the checks that a dead
// engine is always seen. Each entry point (node.js, index.js, workerd.js,
// edge-light.js) only says where the wasm comes from; the filters are in
// filter.js and one file per kind, keys go in through keys.js.
//
// Keys never cross the boundary as JS values: they are written as UTF-8 into
// a scratch buffer that Go owns in linear memory. The hot exports, key (one
// key) and keys (a batch), take a handle, offsets and lengths; everything
// else goes through one export, eb, with an operation code. The codes,
// statuses, kinds and stat indexes come from abi.js, generated from
// internal/abi/abi.go, which the engine is built with; the engine's abi
// export says which version of them it serves.

import { makeGo } from './wasm_exec.js';
import { toModule } from './load.js';
import { codedError } from './errors.js';
import {
  VERSION as ABI_VERSION,
  OP_SCRATCH,
  OP_ERROR_PTR,
  OP_ERROR_LEN,
  OP_FREE,
  OP_RELEASE,
  ERROR_CODES,
} from './abi.js';
import { version as RELEASE } from './version.js';
import { options, positiveInteger } from './args.js';

/** The memory budget of the engine unless init() sets another: 64 MiB, half a Workers isolate. */
export const DEFAULT_MEMORY_LIMIT = 64 * 2 ** 20;
// What the Go runtime takes of the budget before any filter: its linear
// memory after start-up, and room for its collector's work.
const RUNTIME_RESERVE = 8 * 2 ** 20;
const decoder = new TextDecoder();

// The engine: null before init(); after the Go program exited, the dead
// engine stays here (dead: true) until init() starts a fresh one, so that
// every call in between throws ERR_ENGINE_EXITED.
let engine = null;
let starting = null;

function notInitialized() {
  return codedError(Error, 'ERR_NOT_INITIALIZED', 'edgebloom: call "await init()" before using the module');
}

export function engineExited(cause) {
  const err = codedError(
    Error,
    'ERR_ENGINE_EXITED',
    'edgebloom: the engine has stopped and its filters are gone; call init() to start a fresh engine',
  );
  if (cause !== undefined) err.cause = cause;
  return err;
}

// dead reports whether engine e has stopped, and marks it so once its Go
// program exited (which may have happened in a call nobody checked, such
// as a free() run by the FinalizationRegistry).
export function dead(e) {
  if (!e.dead && e.go.exited) e.dead = true;
  return e.dead;
}

// lost is the error for an exception thrown out of a call into engine e.
// The exports never throw while Go runs (they return a status), so any
// exception means the instance broke mid-call: Go exited and its glue threw
// (a TypeError from a write to the dead instance's memory), or the wasm
// trapped. Either way the instance cannot be trusted again: it is marked
// dead, and the caller gets ERR_ENGINE_EXITED, whatever was thrown.
function lost(e, err) {
  e.dead = true;
  return engineExited(err);
}

// A global object for Go's wasm_exec.js that reads through to the real one
// and keeps what it writes (Go, fs, process, path) to itself.
function shadowGlobal(extra) {
  const own = { ...extra };
  return new Proxy(globalThis, {
    get: (target, prop) => (prop in own ? own[prop] : Reflect.get(target, prop)),
    set: (target, prop, value) => {
      own[prop] = value;
      return true;
    },
    has: (target, prop) => prop in own || prop in target,
    deleteProperty: (target, prop) => delete own[prop],
    defineProperty: (target, prop, desc) => Reflect.defineProperty(own, prop, desc),
    getOwnPropertyDescriptor: (target, prop) =>
      Object.getOwnPropertyDescriptor(own, prop) ?? Object.getOwnPropertyDescriptor(target, prop),
  });
}

/**
 * Starts the engine once; later calls return at once. A failed start leaves
 * the module as it was, so the caller can call again.
 * @param {*} source what the caller passed to init(), or undefined
 * @param {() => Promise<*>} defaultSource where the entry point finds the wasm
 * @param {object} [extraGlobals] globals Go needs that this runtime lacks
 * @param {{memoryLimit?: number}} [opts] init()'s options; a running engine
 *   takes a new memoryLimit at once (its collector's limit at the next start)
 */
export function start(source, defaultSource, extraGlobals, opts) {
  let settings;
  try {
    settings = initOptions(opts);
  } catch (err) {
    return Promise.reject(err);
  }
  if (engine && !dead(engine)) {
    if (opts?.memoryLimit !== undefined) engine.limit = settings.memoryLimit;
    return Promise.resolve();
  }
  if (!starting) {
    starting = instantiate(source, defaultSource, extraGlobals, settings).then(
      (e) => {
        engine = e;
        starting = null;
      },
      (err) => {
        starting = null;
        throw err;
      },
    );
  }
  return starting;
}

// initOptions checks init()'s options: { memoryLimit } in bytes, from 16 MiB
// to 4 GiB (what wasm32 addresses).
function initOptions(opts) {
  let memoryLimit = DEFAULT_MEMORY_LIMIT;
  if (opts !== undefined) {
    options(opts, 'init');
    if (opts.memoryLimit !== undefined) {
      memoryLimit = positiveInteger('memoryLimit', opts.memoryLimit, 2 ** 32);
      if (memoryLimit < 2 * RUNTIME_RESERVE) {
        throw new RangeError(
          `edgebloom: "memoryLimit" must be at least ${2 * RUNTIME_RESERVE} bytes (16 MiB), got ${memoryLimit}`,
        );
      }
    }
  }
  return { memoryLimit };
}

async function instantiate(source, defaultSource, extraGlobals, settings) {
  const module = await toModule(source ?? (await defaultSource()));
  const Go = makeGo(shadowGlobal(extraGlobals));
  const go = new Go();
  // Go's collector keeps its heap within the budget (a soft limit: it
  // collects more often as the heap nears it), so linear memory, which
  // never shrinks, stays near what the budget allows.
  go.env = { GOMEMLIMIT: String(settings.memoryLimit) };
  const instance = await WebAssembly.instantiate(module, go.importObject);
  // main blocks forever, so run() returns (to its first await) once main
  // has started; its promise settles only if the Go program exits.
  go.run(instance).catch(() => {});
  if (go.exited) throw new Error('edgebloom: the Go program exited during start-up');
  const x = instance.exports;
  // An engine built from other sources than this module (a stale
  // edgebloom.wasm) would read the operations differently and answer
  // wrong: refuse it. Engines from before the abi export have none.
  const version = typeof x.abi === 'function' ? x.abi() : 0;
  if (version !== ABI_VERSION) {
    throw codedError(
      Error,
      'ERR_VERSION',
      `edgebloom: this edgebloom.wasm serves version ${version || '(none)'} of the engine's interface and this module needs version ${ABI_VERSION}: the .wasm is stale; rebuild it ("npm run build") or load the one shipped with this version of the module`,
    );
  }
  const e = {
    go,
    dead: false,
    eb: x.eb,
    key: x.key, // key(add, handle, offset, length)
    keys: x.keys, // keys(add, handle, count, lengths, text, end, results, stride)
    memory: x.mem,
    u8: new Uint8Array(0),
    u32: new Uint32Array(0),
    view: new Uint8Array(0), // the scratch buffer, for encodeInto
    slots: null, // views of a string batch's key slots (keys.js)
    scratch: 0,
    scratchSize: 0,
    limit: settings.memoryLimit, // the memory budget in bytes (see budgetRoom)
    used: 0, // bytes of the live filters this module made or loaded
  };
  scratch(e, 64 * 1024);
  // An engine of another release may size, hash or check differently from
  // this module's JavaScript (sizing.js is Go's rules, translated) even
  // where the interface is the same: refuse it, as the interface check does.
  const release = decoder.decode(mem(e).slice(e.scratch, e.scratch + call(e, OP_RELEASE)));
  if (release !== RELEASE) {
    throw codedError(
      Error,
      'ERR_VERSION',
      `edgebloom: this edgebloom.wasm is the engine of release ${release} and this module is release ${RELEASE}: load the edgebloom.wasm shipped with this version of the module`,
    );
  }
  return e;
}

export function live() {
  if (!engine) throw notInitialized();
  if (dead(engine)) throw engineExited();
  return engine;
}

// mem returns a view of linear memory, made anew after memory grew.
export function mem(e) {
  // Growth detaches the old buffer, which leaves views of it empty: no need
  // to call the memory.buffer getter on every key.
  if (e.u8.byteLength === 0) e.u8 = new Uint8Array(e.memory.buffer);
  return e.u8;
}

// keyView returns a view of the whole scratch buffer.
export function keyView(e) {
  if (e.view.byteLength === 0) e.view = new Uint8Array(e.memory.buffer, e.scratch, e.scratchSize);
  return e.view;
}

// check turns a negative status into a thrown error, and notices a Go
// program that exited: its answer is garbage, and every filter is gone.
export function check(e, status) {
  if (dead(e)) throw engineExited();
  if (status >= 0) return status;
  const ptr = eb(e, OP_ERROR_PTR) >>> 0;
  const len = eb(e, OP_ERROR_LEN);
  const message = decoder.decode(mem(e).subarray(ptr, ptr + len));
  const code = ERROR_CODES[status] ?? 'ERR_INTERNAL';
  throw codedError(code === 'ERR_ARG' || code === 'ERR_TOO_LARGE' ? RangeError : Error, code, message);
}

// eb calls the eb export of a live engine; an exception out of it means
// the engine is gone (see lost).
function eb(e, op, h = 0, a = 0, b = 0, c = 0, d = 0, x = 0, y = 0) {
  if (dead(e)) throw engineExited();
  try {
    return e.eb(op, h, a, b, c, d, x, y);
  } catch (err) {
    throw lost(e, err);
  }
}

export function call(e, op, h = 0, a = 0, b = 0, c = 0, d = 0, x = 0, y = 0) {
  return check(e, eb(e, op, h, a, b, c, d, x, y));
}

// keyCall and keysCall call the hot exports as eb calls eb. Their callers
// have checked the engine is alive (Filter's #engine) just before.
export function keyCall(e, add, h, off, n) {
  try {
    return e.key(add, h, off, n);
  } catch (err) {
    throw lost(e, err);
  }
}

export function keysCall(e, add, h, count, lens, text, end, out, stride) {
  try {
    return e.keys(add, h, count, lens, text, end, out, stride);
  } catch (err) {
    throw lost(e, err);
  }
}

// budgetRoom returns how many more bytes the filters and the scratch
// buffer of engine e may take. The budget covers every live filter (its
// encoded size, within a few bytes of its memory), the scratch buffer and
// the Go runtime's reserve; Go's collector is held to the whole budget
// (GOMEMLIMIT), so linear memory stays near it.
export function budgetRoom(e) {
  return e.limit - RUNTIME_RESERVE - e.used - e.scratchSize;
}

// loadRoom returns the room engine e has for a load: the budget less the
// runtime's reserve and the live filters. The scratch buffer is not
// counted: a load replaces one too small, or one too large to sit beside
// it, by one of the input's own length (loadScratch), so that what a load
// may take depends on the live filters alone.
export function loadRoom(e) {
  return e.limit - RUNTIME_RESERVE - e.used;
}

// The smallest scratch buffer the engine keeps (budget.Scratch in
// internal/budget, which the engine is built with).
const SCRATCH_MIN = 64 * 1024;

// loadRecord returns the longest input a load may copy into an engine with
// room bytes: it is copied into a scratch buffer of its own length (at
// least SCRATCH_MIN) and becomes a filter about as large, so a load needs
// twice its length (budget.LoadRecord). The engine turns it into a bound on
// the header's bits, refused where maxBits is, from the header alone.
export function loadRecord(room) {
  return room < SCRATCH_MIN ? 0 : Math.floor((room - SCRATCH_MIN) / 2);
}

// shardRecord returns the longest shard record a sharded container of s
// shards may hold in an engine with room bytes (budget.ShardRecord): each
// shard stays loaded while the next is copied in, beside the router.
export function shardRecord(room, s) {
  const router = 2 * (72 + 8 * Math.ceil(s / 64));
  return room < SCRATCH_MIN + router ? 0 : Math.floor((room - SCRATCH_MIN - router) / (s + 1));
}

// loadScratch makes the scratch buffer hold a load's n bytes, which the
// bound from loadRecord keeps within loadRoom(e) twice over: one of exactly
// n bytes (at least SCRATCH_MIN) replaces a buffer that is smaller, or
// too large to sit beside the filter n bytes become.
export function loadScratch(e, n) {
  if (e.scratchSize < n || e.scratchSize + n > loadRoom(e)) {
    e.scratch = call(e, OP_SCRATCH, 0, n, 1) >>> 0;
    e.scratchSize = Math.max(n, SCRATCH_MIN);
    e.view = new Uint8Array(0);
  }
  return e.scratch;
}

export function tooLarge(e, what, need) {
  return codedError(
    RangeError,
    'ERR_TOO_LARGE',
    `edgebloom: ${what} needs ${need} bytes, more than the engine's memory budget has left (${Math.max(0, budgetRoom(e))} of ${e.limit} bytes; init({ memoryLimit }) sets it); nothing was changed`,
  );
}

// scratchGrowth returns what the scratch buffer grows by to hold size
// bytes: the engine makes it at least twice as large as before.
export function scratchGrowth(e, size) {
  return size > e.scratchSize ? Math.max(size, 2 * e.scratchSize, 64 * 1024) - e.scratchSize : 0;
}

// scratch makes the scratch buffer at least size bytes and returns its
// address. Growth that would pass the memory budget throws before the
// engine allocates anything.
export function scratch(e, size) {
  if (size > e.scratchSize) {
    const grow = scratchGrowth(e, size);
    if (grow > budgetRoom(e)) throw tooLarge(e, 'the scratch buffer', grow);
    e.scratch = call(e, OP_SCRATCH, 0, size) >>> 0;
    e.scratchSize += grow;
    e.view = new Uint8Array(0);
  }
  return e.scratch;
}

// rescratch follows a decode, after which the engine replaces a scratch
// buffer of more than 4 MiB with one of 64 KiB (shrinkScratch in
// wasm/main.go), and re-reads its address.
export function rescratch(e) {
  if (e.scratchSize <= 4 * 2 ** 20) return;
  e.scratchSize = 64 * 1024;
  e.view = new Uint8Array(0);
  e.scratch = call(e, OP_SCRATCH, 0, e.scratchSize) >>> 0;
}

// mem32 returns a Uint32Array view of linear memory, made anew after
// memory grew.
export function mem32(e) {
  if (e.u32.byteLength === 0) e.u32 = new Uint32Array(e.memory.buffer);
  return e.u32;
}

// Frees the Go side of filters that were garbage-collected without free().
export const registry =
  typeof FinalizationRegistry === 'undefined'
    ? null
    : new FinalizationRegistry(({ handle, e, op = OP_FREE, size = 0 }) => {
        // A finalizer must not throw: a dead engine has nothing to free,
        // and one that dies here is marked dead for the next call to see.
        if (dead(e)) return;
        e.used -= size;
        try {
          e.eb(op, handle, 0, 0, 0, 0, 0, 0);
        } catch {
          e.dead = true;
        }
      });

/** Internal: runs an operation of engine e (of filter h) that takes x and y and gives one number. */
export function engineNumber(op, x, y, e = live(), h = 0) {
  const base = scratch(e, 8);
  call(e, op, h, 0, 0, 0, 0, x, y);
  return new Float64Array(mem(e).buffer, base, 1)[0];
}
