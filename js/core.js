// The runtime-independent part of the edgebloom module: the filter classes
// over the Go engine in edgebloom.wasm. Each entry point (node.js, index.js,
// workerd.js) only says where the wasm comes from.
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
import {
  VERSION as ABI_VERSION,
  OP_SCRATCH,
  OP_ERROR_PTR,
  OP_ERROR_LEN,
  OP_NEW,
  OP_FREE,
  OP_REMOVE,
  OP_POSITIONS,
  OP_STATS,
  OP_UNION,
  OP_INTERSECT,
  OP_EQUAL,
  OP_CLEAR,
  OP_ENCODE,
  OP_OUTPUT_PTR,
  OP_OUTPUT_RELEASE,
  OP_INSPECT,
  OP_DECODE,
  OP_LIVE,
  OP_ROTATE,
  OP_CRASH,
  OP_FROM_PARQUET,
  OP_PARAMS,
  OP_ADD_CHANGES,
  OP_APPLY_CHANGES,
  OP_READ_BYTES,
  OP_WRITE_PAYLOAD,
  OP_DIGEST,
  OP_OPTIMAL_BLOCKS,
  OP_BLOCKED_FPR,
  KIND_CLASSIC,
  KIND_COUNTING,
  KIND_SCALABLE,
  KIND_WINDOW,
  KIND_BLOCKED,
  KIND_NAMES,
  ERROR_CODES,
  ERR_SPLIT,
  STAT_BITS,
  STAT_HASHES,
  STAT_COUNT,
  STAT_SET_BITS,
  STAT_ESTIMATED_COUNT,
  STAT_FILL_RATIO,
  STAT_ESTIMATED_FPR,
  STAT_CAPACITY,
  STAT_TARGET_FPR,
  STAT_OVER_CAPACITY,
  STAT_KIND,
  STAT_LAYERS,
  STAT_ENCODED_SIZE,
  NUM_STATS,
} from './abi.js';

// Used by the kinds defined in other files.
export { OP_UNION, OP_INTERSECT, OP_EQUAL, OP_OPTIMAL_BLOCKS, OP_BLOCKED_FPR, KIND_BLOCKED };

// What changes as a filter takes keys, read afresh on every get: the count,
// and for a scalable filter, which grows by layers, its size too.
const CHANGING = [STAT_COUNT];
const GROWING = [STAT_BITS, STAT_CAPACITY, STAT_ENCODED_SIZE, STAT_LAYERS];

/** The largest filter the WebAssembly engine makes or loads: 2^32 bits (512 MiB). */
export const MAX_BITS = 2 ** 32;
/** The most generations of a window, as Go's bloom.MaxGenerations. */
export const MAX_GENERATIONS = 4096;
const HEADER_SIZE = 64;
const CHECKSUM_SIZE = 8;
/** The memory budget of the engine unless init() sets another: 64 MiB, half a Workers isolate. */
export const DEFAULT_MEMORY_LIMIT = 64 * 2 ** 20;
// What the Go runtime takes of the budget before any filter: 2.75 MiB of
// linear memory after start-up, and room for its collector's work.
const RUNTIME_RESERVE = 8 * 2 ** 20;
// Keys longer than this (UTF-16 units of a string, or bytes) are hashed in
// pieces of this size (bloom.Digest), so that a key of any length needs at
// most 3 · 256 Ki bytes of scratch buffer: a 100 MB key once left 900 MB of
// linear memory behind.
const PIECE = 256 * 1024;
// Batches are cut so that the scratch buffer stays near this size.
const BATCH_BYTES = 1 << 20;
// Keys joined for one encodeInto. Joining a whole batch was as fast for
// ASCII URLs but slower than encoding each key on its own as soon as some
// were not ASCII (the joined string is then two-byte, and encodeInto slows
// on long two-byte strings); groups of 32 were within 10% of the best of
// both (Node 20, 80-byte URLs).
const JOIN_KEYS = 32;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

// The engine: null before init(); after the Go program exited, the dead
// engine stays here (dead: true) until init() starts a fresh one, so that
// every call in between throws ERR_ENGINE_EXITED.
let engine = null;
let starting = null;

function codedError(Kind, code, message) {
  const err = new Kind(message);
  err.code = code;
  return err;
}

function notInitialized() {
  return codedError(Error, 'ERR_NOT_INITIALIZED', 'edgebloom: call "await init()" before using the module');
}

function engineExited(cause) {
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
function dead(e) {
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
        throw new RangeError(`edgebloom: "memoryLimit" must be at least ${2 * RUNTIME_RESERVE} bytes (16 MiB), got ${memoryLimit}`);
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
    keys: x.keys, // keys(add, handle, count, lengths, text, end, results, utf16)
    memory: x.mem,
    u8: new Uint8Array(0),
    u32: new Uint32Array(0),
    view: new Uint8Array(0), // the scratch buffer, for encodeInto
    scratch: 0,
    scratchSize: 0,
    limit: settings.memoryLimit, // the memory budget in bytes (see budgetRoom)
    used: 0, // bytes of the live filters this module made or loaded
  };
  scratch(e, 64 * 1024);
  return e;
}

function live() {
  if (!engine) throw notInitialized();
  if (dead(engine)) throw engineExited();
  return engine;
}

// mem returns a view of linear memory, made anew after memory grew.
function mem(e) {
  // Growth detaches the old buffer, which leaves views of it empty: no need
  // to call the memory.buffer getter on every key.
  if (e.u8.byteLength === 0) e.u8 = new Uint8Array(e.memory.buffer);
  return e.u8;
}

// keyView returns a view of the whole scratch buffer.
function keyView(e) {
  if (e.view.byteLength === 0) e.view = new Uint8Array(e.memory.buffer, e.scratch, e.scratchSize);
  return e.view;
}

// check turns a negative status into a thrown error, and notices a Go
// program that exited: its answer is garbage, and every filter is gone.
function check(e, status) {
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

function call(e, op, h = 0, a = 0, b = 0, c = 0, d = 0, x = 0, y = 0) {
  return check(e, eb(e, op, h, a, b, c, d, x, y));
}

// keyCall and keysCall call the hot exports as eb calls eb. Their callers
// have checked the engine is alive (Filter's #engine) just before.
function keyCall(e, add, h, off, n) {
  try {
    return e.key(add, h, off, n);
  } catch (err) {
    throw lost(e, err);
  }
}

function keysCall(e, add, h, count, lens, text, end, utf16) {
  try {
    return e.keys(add, h, count, lens, text, end, 0, utf16);
  } catch (err) {
    throw lost(e, err);
  }
}

// budgetRoom returns how many more bytes the filters and the scratch
// buffer of engine e may take. The budget covers every live filter (its
// encoded size, within a few bytes of its memory), the scratch buffer and
// the Go runtime's reserve; Go's collector is held to the whole budget
// (GOMEMLIMIT), so linear memory stays near it.
function budgetRoom(e) {
  return e.limit - RUNTIME_RESERVE - e.used - e.scratchSize;
}

function tooLarge(e, what, need) {
  return codedError(
    RangeError,
    'ERR_TOO_LARGE',
    `edgebloom: ${what} needs ${need} bytes, more than the engine's memory budget has left (${Math.max(0, budgetRoom(e))} of ${e.limit} bytes; init({ memoryLimit }) sets it); nothing was changed`,
  );
}

// scratchGrowth returns what the scratch buffer grows by to hold size
// bytes: the engine makes it at least twice as large as before.
function scratchGrowth(e, size) {
  return size > e.scratchSize ? Math.max(size, 2 * e.scratchSize, 64 * 1024) - e.scratchSize : 0;
}

// scratch makes the scratch buffer at least size bytes and returns its
// address. Growth that would pass the memory budget throws before the
// engine allocates anything.
function scratch(e, size) {
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
function rescratch(e) {
  if (e.scratchSize <= 4 * 2 ** 20) return;
  e.scratchSize = 64 * 1024;
  e.view = new Uint8Array(0);
  e.scratch = call(e, OP_SCRATCH, 0, e.scratchSize) >>> 0;
}

// streamKey adds (add 1) or tests (add 0) key in filter h in pieces of at
// most PIECE units or bytes (see PIECE), and returns the status.
function streamKey(e, add, h, key) {
  call(e, OP_DIGEST, h, 0);
  if (typeof key === 'string') {
    const base = scratch(e, 3 * PIECE);
    for (let i = 0; i < key.length; ) {
      let j = Math.min(key.length, i + PIECE);
      // A surrogate pair stays in one piece, so each piece encodes as its
      // part of the whole key does (a lone surrogate is U+FFFD either way).
      const last = key.charCodeAt(j - 1);
      if (j < key.length && last >= 0xd800 && last <= 0xdbff) j--;
      const n = encoder.encodeInto(key.substring(i, j), keyView(e)).written;
      call(e, OP_DIGEST, h, 1, 0, n);
      i = j;
    }
  } else {
    const base = scratch(e, PIECE);
    for (let i = 0; i < key.length; i += PIECE) {
      const piece = key.subarray(i, i + PIECE);
      mem(e).set(piece, base);
      call(e, OP_DIGEST, h, 1, 0, piece.length);
    }
  }
  return call(e, OP_DIGEST, h, 2, add);
}

function isLong(key) {
  return key.length > PIECE;
}

function keyError(key) {
  const got = key === null ? 'null' : typeof key;
  return new TypeError(`edgebloom: a key must be a string or a Uint8Array, got ${got}`);
}

// writeKey writes key at scratch offset off and returns its length in bytes.
// The caller has made room for maxKeyBytes(key) bytes there.
function writeKey(u8, base, off, key) {
  if (typeof key === 'string') {
    // encodeInto beats a hand-written loop even for short ASCII URLs
    // (about 85 ns against 200 ns for 80 bytes, bench/README.md).
    const at = base + off;
    return encoder.encodeInto(key, u8.subarray(at, at + 3 * key.length)).written;
  }
  u8.set(key, base + off);
  return key.length;
}

function maxKeyBytes(key) {
  if (typeof key === 'string') return 3 * key.length;
  if (key instanceof Uint8Array) return key.length;
  throw keyError(key);
}

// putKey writes key at the start of the scratch buffer and returns its
// length in bytes, or -1, having written nothing, when the key is longer
// than PIECE: the caller hashes it in pieces (streamKey).
function putKey(e, key) {
  if (typeof key === 'string') {
    // encodeInto writes the whole key when it fits, which it does unless
    // the key is longer than the scratch buffer (64 KiB at first). The
    // view is made anew only after memory grew (which detaches it).
    let view = e.view;
    if (view.byteLength === 0) view = keyView(e);
    const r = encoder.encodeInto(key, view);
    if (r.read === key.length) return r.written;
    if (isLong(key)) return -1;
    scratch(e, 3 * key.length);
    return encoder.encodeInto(key, keyView(e)).written;
  }
  if (isLong(key)) return -1;
  const base = scratch(e, maxKeyBytes(key));
  return writeKey(mem(e), base, 0, key);
}

// keyOp runs a one-key operation of eb on handle h.
// keyOp runs a one-key operation of eb on handle h. A long key is written
// whole (remove has no pieces), within the memory budget.
function keyOp(e, op, h, key) {
  let n = putKey(e, key);
  if (n < 0) n = writeKey(mem(e), scratch(e, maxKeyBytes(key)), 0, key);
  return call(e, op, h, 0, n);
}

// mem32 returns a Uint32Array view of linear memory, made anew after
// memory grew.
function mem32(e) {
  if (e.u32.byteLength === 0) e.u32 = new Uint32Array(e.memory.buffer);
  return e.u32;
}

// A batch's layout in the scratch buffer: one result byte a key at 0, the
// key lengths (uint32) from lens, the keys' bytes from keyStart.
function layout(count) {
  const lens = (count + 3) & ~3;
  return [lens, lens + 4 * count];
}

// stringBatch adds (add 1) or tests (add 0) the strings keys[i:j], which
// hold chars UTF-16 code units, with one encodeInto for each group of
// JOIN_KEYS keys joined. The wasm side splits the UTF-8 by each key's length
// in UTF-16 units, which JS knows without encoding. It returns false, having
// changed nothing, when a join put a lone high surrogate at the end of one
// key next to a lone low surrogate at the start of the next.
function stringBatch(e, add, h, keys, i, j, chars, results) {
  const count = j - i;
  const [lens, keyStart] = layout(count);
  const base = scratch(e, keyStart + 3 * chars);
  const view = keyView(e);
  let end = keyStart;
  for (let g = i; g < j; g += JOIN_KEYS) {
    const text = keys.slice(g, Math.min(g + JOIN_KEYS, j)).join('');
    end += encoder.encodeInto(text, view.subarray(end)).written;
  }
  const u32 = mem32(e);
  const at = (base + lens) >>> 2;
  for (let k = 0; k < count; k++) u32[at + k] = keys[i + k].length;
  // All ASCII (most URLs): the lengths are byte lengths already.
  const utf16 = end - keyStart === chars ? 0 : 1;
  const status = keysCall(e, add, h, count, lens, keyStart, end, utf16);
  if (status === ERR_SPLIT && !e.go.exited) return false;
  if (status < 0 || e.go.exited) check(e, status);
  const res = mem(e);
  for (let k = 0; k < count; k++) results[i + k] = res[base + k] === 1;
  return true;
}

// bytesBatch adds or tests keys[i:j], of any key type, written one by one.
function bytesBatch(e, add, h, keys, i, j, bytes, results) {
  const count = j - i;
  const [lens, keyStart] = layout(count);
  const base = scratch(e, keyStart + bytes);
  const u8 = mem(e);
  const u32 = mem32(e);
  const at = (base + lens) >>> 2;
  let off = keyStart;
  for (let k = 0; k < count; k++) {
    const n = writeKey(u8, base, off, keys[i + k]);
    u32[at + k] = n;
    off += n;
  }
  const status = keysCall(e, add, h, count, lens, keyStart, off, 0);
  if (status < 0 || e.go.exited) check(e, status);
  const res = mem(e);
  for (let k = 0; k < count; k++) results[i + k] = res[base + k] === 1;
}

/**
 * Internal: throws a TypeError naming the first key of keys that is not a
 * string or a Uint8Array, before a batch touches any filter, so that a
 * refused batch adds nothing.
 */
export function checkKeys(keys) {
  if (!Array.isArray(keys)) throw new TypeError('edgebloom: keys must be an array of strings or Uint8Arrays');
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    if (typeof key !== 'string' && !(key instanceof Uint8Array)) {
      const got = key === null ? 'null' : typeof key;
      throw new TypeError(`edgebloom: keys[${i}] must be a string or a Uint8Array, got ${got}; nothing was added`);
    }
  }
}

function batchOp(e, add, h, keys) {
  checkKeys(keys);
  // All or nothing here too: the scratch buffer the largest part of the
  // batch needs is made first, within the memory budget, so that no part
  // can fail for want of memory after another was added.
  let reserve = 0;
  let long = false;
  for (let k = 0; k < keys.length && reserve <= BATCH_BYTES; k++) {
    const key = keys[k];
    if (isLong(key)) long = true;
    else reserve += (typeof key === 'string' ? 3 : 1) * key.length + 9;
  }
  scratch(e, reserve > BATCH_BYTES ? BATCH_BYTES + 16 : Math.max(reserve, long ? 3 * PIECE : 0));
  const results = new Array(keys.length);
  let i = 0;
  while (i < keys.length) {
    if (isLong(keys[i])) {
      results[i] = streamKey(e, add, h, keys[i]) === 1;
      i++;
      continue;
    }
    // Take keys while their UTF-8 fits in BATCH_BYTES (at least one key).
    let j = i;
    let bytes = 0;
    let chars = 0;
    let strings = true;
    while (j < keys.length) {
      const key = keys[j];
      if (isLong(key)) break;
      let need;
      if (typeof key === 'string') {
        need = 3 * key.length + 5;
      } else {
        need = maxKeyBytes(key) + 5;
        strings = false;
      }
      if (j > i && bytes + need > BATCH_BYTES) break;
      bytes += need;
      if (strings) chars += key.length;
      j++;
    }
    if (!strings || !stringBatch(e, add, h, keys, i, j, chars, results)) {
      bytesBatch(e, add, h, keys, i, j, bytes, results);
    }
    i = j;
  }
  return results;
}

// Frees the Go side of filters that were garbage-collected without free().
const registry =
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

/** Internal: the token that lets a filter class reach the Filter constructor. */
export const CONSTRUCT = Symbol('construct');

export function positiveInteger(name, value, max) {
  if (typeof value !== 'number') throw new TypeError(`edgebloom: "${name}" must be a number, got ${typeof value}`);
  if (!Number.isInteger(value) || value < 1 || value > max) {
    throw new RangeError(`edgebloom: "${name}" must be an integer from 1 to ${max}, got ${value}`);
  }
  return value;
}

export function rate(name, value) {
  if (typeof value !== 'number') throw new TypeError(`edgebloom: "${name}" must be a number, got ${typeof value}`);
  if (!(value > 0 && value < 1)) throw new RangeError(`edgebloom: "${name}" must be between 0 and 1 (exclusive), got ${value}`);
  return value;
}

export function options(value, what) {
  if (value === null || typeof value !== 'object') {
    throw new TypeError(`edgebloom: ${what} takes an options object`);
  }
  return value;
}

// sizeArgs validates { capacity, errorRate } or { bits, hashes }.
function sizeArgs(opts, what) {
  opts = options(opts, what);
  if (opts.bits !== undefined || opts.hashes !== undefined) {
    return [1, positiveInteger('bits', opts.bits, MAX_BITS), positiveInteger('hashes', opts.hashes, 64)];
  }
  return [0, positiveInteger('capacity', opts.capacity, Number.MAX_SAFE_INTEGER), rate('errorRate', opts.errorRate)];
}

/**
 * Internal: checks the arguments of every fromBytes, and gives the input as
 * a Uint8Array and the size bound (default MAX_BITS).
 */
export function loadArgs(bytes, opts) {
  if (!(bytes instanceof Uint8Array)) {
    if (bytes instanceof ArrayBuffer) bytes = new Uint8Array(bytes);
    else if (ArrayBuffer.isView(bytes)) bytes = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    else throw new TypeError('edgebloom: fromBytes takes a Uint8Array, an ArrayBuffer or a typed array');
  }
  let maxBits = MAX_BITS;
  if (opts !== undefined) {
    options(opts, 'fromBytes');
    if (opts.maxBits !== undefined) maxBits = positiveInteger('maxBits', opts.maxBits, MAX_BITS);
  }
  return { bytes, maxBits };
}

function freed() {
  return codedError(Error, 'ERR_FREED', 'edgebloom: the filter was freed');
}

export class Filter {
  #handle = 0;
  #e; // the engine that holds this filter
  // The statistics that take constant time, read once when the filter is
  // made or loaded (OP_PARAMS); see CHANGING and GROWING for those that
  // are read again.
  #params;

  // The bytes this filter counts against the engine's memory budget.
  #size = 0;

  constructor(token, kind, explicit, a, b, handle, generations = 0) {
    if (token !== CONSTRUCT) throw new TypeError('edgebloom: illegal constructor');
    const e = live();
    // The engine refuses a filter larger than the room the budget has
    // left (in KiB), before it allocates.
    const room = Math.max(0, Math.floor(budgetRoom(e) / 1024));
    this.#handle = handle ?? call(e, OP_NEW, 0, kind, explicit, generations, Math.min(room, 2 ** 31 - 1), a, b);
    this.#e = e;
    const held = { handle: this.#handle, e, size: 0 };
    registry?.register(this, held, this);
    this.#params = this.#readParams();
    this.#size = held.size = this.#params[STAT_ENCODED_SIZE];
    e.used += this.#size;
  }

  #readParams() {
    const e = this.#engine();
    const base = scratch(e, 8 * NUM_STATS);
    call(e, OP_PARAMS, this.#handle, 0);
    return new Float64Array(mem(e).buffer, base, NUM_STATS).slice();
  }

  // param returns a statistic that takes constant time: from the cache, or
  // from the engine when it changes.
  #param(i) {
    const p = this.#params;
    if (CHANGING.includes(i) || (p[STAT_KIND] === KIND_SCALABLE && GROWING.includes(i))) return this.#readParams()[i];
    this.#engine();
    return p[i];
  }

  // engine returns the engine after checking this filter is still live.
  #engine() {
    const e = this.#e;
    if (this.#handle === 0) throw freed();
    if (dead(e)) throw engineExited();
    return e;
  }

  #stat(i) {
    const e = this.#engine();
    const base = scratch(e, 8 * NUM_STATS);
    call(e, OP_STATS, this.#handle, 0);
    return new Float64Array(mem(e).buffer, base, NUM_STATS)[i];
  }

  /**
   * Adds key and reports whether it was new (test-and-add).
   * @param {string | Uint8Array} key
   */
  add(key) {
    const e = this.#engine();
    const n = putKey(e, key);
    if (n < 0) return streamKey(e, 1, this.#handle, key) === 1;
    const status = keyCall(e, 1, this.#handle, 0, n);
    if (status < 0 || e.go.exited) check(e, status);
    return status === 1;
  }

  /** @param {string | Uint8Array} key */
  has(key) {
    const e = this.#engine();
    const n = putKey(e, key);
    if (n < 0) return streamKey(e, 0, this.#handle, key) === 1;
    const status = keyCall(e, 0, this.#handle, 0, n);
    if (status < 0 || e.go.exited) check(e, status);
    return status === 1;
  }

  /** @param {Array<string | Uint8Array>} keys */
  addMany(keys) {
    const e = this.#engine();
    const results = batchOp(e, 1, this.#handle, keys);
    // A scalable filter grows as it fills: its new layers count against
    // the memory budget from the batch that made them on.
    if (this.#params[STAT_KIND] === KIND_SCALABLE) {
      const size = this.#readParams()[STAT_ENCODED_SIZE];
      e.used += size - this.#size;
      this.#size = size;
    }
    return results;
  }

  /** @param {Array<string | Uint8Array>} keys */
  hasMany(keys) {
    const e = this.#engine();
    return batchOp(e, 0, this.#handle, keys);
  }

  _rotate() {
    call(this.#engine(), OP_ROTATE, this.#handle);
  }

  _remove(key) {
    return keyOp(this.#engine(), OP_REMOVE, this.#handle, key) === 1;
  }

  _positions(key) {
    const e = this.#engine();
    const keyBytes = maxKeyBytes(key);
    const out = (keyBytes + 7) & ~7;
    const base = scratch(e, out + 8 * 64);
    const n = writeKey(mem(e), base, 0, key);
    const k = call(e, OP_POSITIONS, this.#handle, 0, n, out);
    return Array.from(new Float64Array(mem(e).buffer, base + out, k));
  }

  _combine(op, other, Class) {
    if (!(other instanceof Class)) throw new TypeError(`edgebloom: the argument must be a ${Class.name}`);
    const e = this.#engine();
    other.#engine();
    return call(e, op, this.#handle, other.#handle);
  }

  // kind, bits, hashes, count, capacity, errorRate, byteLength and layers
  // take constant time; setBits, estimatedCount, fillRatio,
  // estimatedErrorRate and overCapacity pass over the bits once.
  get kind() {
    return KIND_NAMES[this.#param(STAT_KIND)];
  }
  get bits() {
    return this.#param(STAT_BITS);
  }
  get hashes() {
    return this.#param(STAT_HASHES);
  }
  get count() {
    return this.#param(STAT_COUNT);
  }
  get setBits() {
    return this.#stat(STAT_SET_BITS);
  }
  get estimatedCount() {
    return this.#stat(STAT_ESTIMATED_COUNT);
  }
  get fillRatio() {
    return this.#stat(STAT_FILL_RATIO);
  }
  get estimatedErrorRate() {
    return this.#stat(STAT_ESTIMATED_FPR);
  }
  get capacity() {
    return this.#param(STAT_CAPACITY);
  }
  get errorRate() {
    return this.#param(STAT_TARGET_FPR);
  }
  get overCapacity() {
    return this.#stat(STAT_OVER_CAPACITY) === 1;
  }
  get byteLength() {
    return this.#param(STAT_ENCODED_SIZE);
  }
  _layers() {
    return this.#param(STAT_LAYERS);
  }

  /** All statistics in one object. */
  stats() {
    const e = this.#engine();
    const base = scratch(e, 8 * NUM_STATS);
    call(e, OP_STATS, this.#handle, 0);
    const s = new Float64Array(mem(e).buffer, base, NUM_STATS).slice();
    return {
      kind: KIND_NAMES[s[STAT_KIND]],
      bits: s[STAT_BITS],
      hashes: s[STAT_HASHES],
      count: s[STAT_COUNT],
      setBits: s[STAT_SET_BITS],
      estimatedCount: s[STAT_ESTIMATED_COUNT],
      fillRatio: s[STAT_FILL_RATIO],
      estimatedErrorRate: s[STAT_ESTIMATED_FPR],
      capacity: s[STAT_CAPACITY],
      errorRate: s[STAT_TARGET_FPR],
      overCapacity: s[STAT_OVER_CAPACITY] === 1,
      layers: s[STAT_LAYERS],
      byteLength: s[STAT_ENCODED_SIZE],
    };
  }

  // The classic filter's changes and byte ranges (BloomFilter exposes them;
  // see index.d.ts and wasm/changes.go).

  _addManyChanges(keys) {
    const e = this.#engine();
    if (!Array.isArray(keys)) throw new TypeError('edgebloom: keys must be an array of strings or Uint8Arrays');
    // Every key is checked before any is added: a bad key adds nothing.
    for (const key of keys) maxKeyBytes(key);
    const added = new Array(keys.length);
    const parts = [];
    let total = 0;
    let i = 0;
    while (i < keys.length) {
      let j = i;
      let bytes = 0;
      while (j < keys.length) {
        const need = maxKeyBytes(keys[j]) + 5;
        if (j > i && bytes + need > BATCH_BYTES) break;
        bytes += need;
        j++;
      }
      const count = j - i;
      const [lens, keyStart] = layout(count);
      const base = scratch(e, keyStart + bytes);
      const u8 = mem(e);
      const u32 = mem32(e);
      let off = keyStart;
      for (let k = 0; k < count; k++) {
        const n = writeKey(u8, base, off, keys[i + k]);
        u32[((base + lens) >>> 2) + k] = n;
        off += n;
      }
      const n = call(e, OP_ADD_CHANGES, this.#handle, count, lens, keyStart, off);
      const res = mem(e);
      for (let k = 0; k < count; k++) added[i + k] = res[base + k] === 1;
      const ptr = call(e, OP_OUTPUT_PTR) >>> 0;
      parts.push(new Uint32Array(res.buffer.slice(ptr, ptr + 4 * n)));
      call(e, OP_OUTPUT_RELEASE);
      total += n;
      i = j;
    }
    let changed = parts.length === 1 ? parts[0] : new Uint32Array(total);
    if (parts.length !== 1) {
      let at = 0;
      for (const part of parts) {
        changed.set(part, at);
        at += part.length;
      }
    }
    return { added, changed, count: this.count };
  }

  _applyChanges(changes) {
    const e = this.#engine();
    options(changes, 'applyChanges');
    const { changed, count } = changes;
    if (!(changed instanceof Uint32Array) && !Array.isArray(changed)) {
      throw new TypeError('edgebloom: "changed" must be a Uint32Array or an array of bit positions');
    }
    if (typeof count !== 'number' || !Number.isSafeInteger(count) || count < 0) {
      throw new RangeError(`edgebloom: "count" must be an integer >= 0, got ${count}`);
    }
    // Checked whole before any bit is set, so a bad position changes nothing.
    const bits = this.bits;
    for (const p of changed) {
      if (!Number.isInteger(p) || p < 0 || p >= bits) {
        throw codedError(RangeError, 'ERR_ARG', `edgebloom: a position must be an integer from 0 to ${bits - 1}, got ${p}`);
      }
    }
    const piece = BATCH_BYTES / 4;
    let i = 0;
    do {
      const n = Math.min(piece, changed.length - i);
      const base = scratch(e, 4 * n);
      const u32 = mem32(e);
      for (let k = 0; k < n; k++) u32[(base >>> 2) + k] = changed[i + k];
      call(e, OP_APPLY_CHANGES, this.#handle, 0, n, 0, 0, count);
      i += n;
    } while (i < changed.length);
  }

  // range checks [start, end) against the encoding's length and returns it.
  #range(start, end, what) {
    const size = this.byteLength;
    const ok = (v) => Number.isSafeInteger(v) && v >= 0 && v <= size;
    if (!ok(start) || !ok(end) || start > end) {
      throw codedError(RangeError, 'ERR_ARG', `edgebloom: ${what}: the range [${start}, ${end}) must lie inside the encoding of ${size} bytes`);
    }
    return size;
  }

  _readBytes(start, end = this.byteLength) {
    const e = this.#engine();
    this.#range(start, end, 'readBytes');
    const out = new Uint8Array(end - start);
    // In pieces of at most BATCH_BYTES, so the engine never holds a copy
    // of the filter.
    for (let lo = start; lo < end; lo += BATCH_BYTES) {
      const hi = Math.min(end, lo + BATCH_BYTES);
      const base = scratch(e, hi - lo);
      call(e, OP_READ_BYTES, this.#handle, 0, 0, 0, 0, lo, hi);
      out.set(mem(e).subarray(base, base + hi - lo), lo - start);
    }
    return out;
  }

  _writeBytes(start, bytes) {
    const e = this.#engine();
    if (!(bytes instanceof Uint8Array)) throw new TypeError('edgebloom: writeBytes takes a Uint8Array');
    const size = this.#range(start, start + bytes.length, 'writeBytes');
    if (start < HEADER_SIZE || start + bytes.length > size - CHECKSUM_SIZE) {
      throw codedError(RangeError, 'ERR_ARG', `edgebloom: writeBytes: only the payload, bytes [${HEADER_SIZE}, ${size - CHECKSUM_SIZE}), can be written`);
    }
    // The last piece first: only it can hold bits beyond m, which are
    // refused, so a refused write changes nothing.
    const pieces = [];
    for (let lo = 0; lo < bytes.length; lo += BATCH_BYTES) pieces.unshift(lo);
    for (const lo of pieces) {
      const piece = bytes.subarray(lo, lo + BATCH_BYTES);
      const base = scratch(e, piece.length);
      mem(e).set(piece, base);
      call(e, OP_WRITE_PAYLOAD, this.#handle, piece.length, 0, 0, 0, start - HEADER_SIZE + lo);
    }
  }

  /** Removes every key. */
  clear() {
    call(this.#engine(), OP_CLEAR, this.#handle);
  }

  /** The filter in the documented binary format, identical to Go's MarshalBinary. */
  toBytes() {
    return this.#output();
  }

  // A split-block filter's payload is Parquet's bitset (docs/format.md),
  // so the encoding without its header and checksum is the bitset: no
  // operation of its own in the engine, which saves 1.1 kB of wasm.
  _parquetBitset() {
    return this.#output(HEADER_SIZE, CHECKSUM_SIZE);
  }

  // output encodes the filter and copies it out of the engine's output
  // buffer, less skip bytes at the start and trim at the end.
  #output(skip = 0, trim = 0) {
    const e = this.#engine();
    const n = call(e, OP_ENCODE, this.#handle);
    const ptr = call(e, OP_OUTPUT_PTR) >>> 0;
    const bytes = mem(e).slice(ptr + skip, ptr + n - trim);
    call(e, OP_OUTPUT_RELEASE);
    return bytes;
  }

  /** Frees the filter's memory in the engine. Later calls throw; free() again does nothing. */
  free() {
    if (this.#handle === 0) return;
    const e = this.#e;
    // free() never throws: on a dead engine it has nothing to free.
    if (!dead(e)) {
      e.used -= this.#size;
      try {
        e.eb(OP_FREE, this.#handle, 0, 0, 0, 0, 0, 0);
      } catch {
        e.dead = true;
      }
    }
    registry?.unregister(this);
    this.#handle = 0;
  }

  [Symbol.dispose]() {
    this.free();
  }

  static _load(Class, input, opts, want, classes = CLASSES) {
    const { bytes, maxBits } = loadArgs(input, opts);
    const e = live();
    if (bytes.length < HEADER_SIZE) {
      throw codedError(Error, 'ERR_TRUNCATED', 'bloom: truncated filter');
    }
    // The header is checked before the rest is copied into linear memory,
    // which grows for good: an oversized or foreign input costs nothing.
    let base = scratch(e, HEADER_SIZE);
    mem(e).set(bytes.subarray(0, HEADER_SIZE), base);
    const kind = call(e, OP_INSPECT, 0, bytes.length, 0, 0, 0, maxBits);
    if (want !== undefined && kind !== want) {
      throw codedError(Error, 'ERR_KIND', `bloom: wrong filter kind: found ${KIND_NAMES[kind]}, want ${KIND_NAMES[want]}`);
    }
    // The input goes into the scratch buffer and the filter beside it:
    // both within the memory budget, checked before either is allocated.
    const need = scratchGrowth(e, bytes.length) + bytes.length;
    if (need > budgetRoom(e)) throw tooLarge(e, `loading ${bytes.length} bytes`, need);
    base = scratch(e, bytes.length);
    mem(e).set(bytes, base);
    let handle;
    try {
      handle = call(e, OP_DECODE, 0, bytes.length, 0, 0, 0, maxBits);
    } finally {
      if (!e.dead) rescratch(e);
    }
    const C = Class ?? classes[kind];
    return new C(CONSTRUCT, kind, 0, 0, 0, handle);
  }

  static _fromParquet(Class, input, opts) {
    const { bytes, maxBits } = loadArgs(input, opts);
    const e = live();
    // Checked before the bitset is copied into linear memory, which grows for good.
    if (8 * bytes.length > maxBits) {
      throw codedError(RangeError, 'ERR_TOO_LARGE', `bloom: filter exceeds the size bound: the bitset has ${8 * bytes.length} bits, maxBits is ${maxBits}`);
    }
    const need = scratchGrowth(e, bytes.length) + bytes.length;
    if (need > budgetRoom(e)) throw tooLarge(e, `a bitset of ${bytes.length} bytes`, need);
    const base = scratch(e, bytes.length);
    mem(e).set(bytes, base);
    let handle;
    try {
      handle = call(e, OP_FROM_PARQUET, 0, bytes.length, 0, 0, 0, maxBits);
    } finally {
      if (!e.dead) rescratch(e);
    }
    return new Class(CONSTRUCT, KIND_BLOCKED, 0, 0, 0, handle);
  }
}

/** A classic Bloom filter. */
export class BloomFilter extends Filter {
  /** @param {{capacity: number, errorRate: number} | {bits: number, hashes: number}} opts */
  constructor(opts, ...internal) {
    if (opts === CONSTRUCT) {
      super(CONSTRUCT, ...internal);
    } else {
      const [explicit, a, b] = sizeArgs(opts, 'new BloomFilter');
      super(CONSTRUCT, KIND_CLASSIC, explicit, a, b);
    }
  }
  positions(key) {
    return this._positions(key);
  }
  /**
   * addMany that also says which bits it set: changed holds the position of
   * every bit that turned from 0 to 1, and count is the filter's count after.
   */
  addManyChanges(keys) {
    return this._addManyChanges(keys);
  }
  /** Sets the bits addManyChanges reported, and the count it gave, on another copy. */
  applyChanges(changes) {
    this._applyChanges(changes);
  }
  /** Bytes [start, end) of toBytes(), without encoding the whole filter. */
  readBytes(start, end) {
    return this._readBytes(start, end);
  }
  /** Replaces bytes of the payload, from byte start of the encoding; the count is unchanged. */
  writeBytes(start, bytes) {
    this._writeBytes(start, bytes);
  }
  /** Adds every key of other; both must have the same bits, hashes and seed. */
  union(other) {
    this._combine(OP_UNION, other, BloomFilter);
  }
  /** Keeps only bits also set in other. */
  intersect(other) {
    this._combine(OP_INTERSECT, other, BloomFilter);
  }
  equals(other) {
    return this._combine(OP_EQUAL, other, BloomFilter) === 1;
  }
  static fromBytes(bytes, opts) {
    return Filter._load(BloomFilter, bytes, opts, KIND_CLASSIC);
  }
}

/** A Bloom filter of 4-bit counters that supports remove(). */
export class CountingBloomFilter extends Filter {
  constructor(opts, ...internal) {
    if (opts === CONSTRUCT) {
      super(CONSTRUCT, ...internal);
    } else {
      const [explicit, a, b] = sizeArgs(opts, 'new CountingBloomFilter');
      super(CONSTRUCT, KIND_COUNTING, explicit, a, b);
    }
  }
  positions(key) {
    return this._positions(key);
  }
  /** Removes key; false, and no change, when it is certainly absent. */
  remove(key) {
    return this._remove(key);
  }
  equals(other) {
    return this._combine(OP_EQUAL, other, CountingBloomFilter) === 1;
  }
  static fromBytes(bytes, opts) {
    return Filter._load(CountingBloomFilter, bytes, opts, KIND_COUNTING);
  }
}

/** A Bloom filter that grows by layers and keeps its error rate. */
export class ScalableBloomFilter extends Filter {
  constructor(opts, ...internal) {
    if (opts === CONSTRUCT) {
      super(CONSTRUCT, ...internal);
    } else {
      opts = options(opts, 'new ScalableBloomFilter');
      const n = positiveInteger('initialCapacity', opts.initialCapacity, Number.MAX_SAFE_INTEGER);
      super(CONSTRUCT, KIND_SCALABLE, 0, n, rate('errorRate', opts.errorRate));
    }
  }
  get layers() {
    return this._layers();
  }
  static fromBytes(bytes, opts) {
    return Filter._load(ScalableBloomFilter, bytes, opts, KIND_SCALABLE);
  }
}

/**
 * The keys of the last few periods: generations classic filters, of which
 * rotate() drops the oldest and starts an empty newest one. add() writes to
 * the newest and reports whether no generation had the key; has() asks all.
 */
export class WindowBloomFilter extends Filter {
  constructor(opts, ...internal) {
    if (opts === CONSTRUCT) {
      super(CONSTRUCT, ...internal);
    } else {
      opts = options(opts, 'new WindowBloomFilter');
      const n = positiveInteger('capacityPerGeneration', opts.capacityPerGeneration, Number.MAX_SAFE_INTEGER);
      const p = rate('errorRate', opts.errorRate);
      const g = positiveInteger('generations', opts.generations, MAX_GENERATIONS);
      super(CONSTRUCT, KIND_WINDOW, 0, n, p, undefined, g);
    }
  }
  /** Drops the oldest generation and starts an empty newest one. */
  rotate() {
    this._rotate();
  }
  get generations() {
    return this._layers();
  }
  static fromBytes(bytes, opts) {
    return Filter._load(WindowBloomFilter, bytes, opts, KIND_WINDOW);
  }
}

const CLASSES = {
  [KIND_CLASSIC]: BloomFilter,
  [KIND_COUNTING]: CountingBloomFilter,
  [KIND_SCALABLE]: ScalableBloomFilter,
  [KIND_WINDOW]: WindowBloomFilter,
};

/**
 * Loads a filter of any kind from bytes in the documented format; classes
 * adds the classes of kinds defined outside this file.
 * @returns {BloomFilter | CountingBloomFilter | ScalableBloomFilter | WindowBloomFilter}
 */
export function fromBytes(bytes, opts, classes) {
  return Filter._load(undefined, bytes, opts, undefined, { ...CLASSES, ...classes });
}

/**
 * The bits m and hashes k for capacity n at error rate p:
 * m = ceil(-n ln p / ln²2), k = max(1, round(ln 2 · m / n)).
 */
export function optimal(capacity, errorRate) {
  const n = positiveInteger('capacity', capacity, Number.MAX_SAFE_INTEGER);
  const p = rate('errorRate', errorRate);
  const bits = Math.ceil((-n * Math.log(p)) / (Math.LN2 * Math.LN2));
  const hashes = Math.max(1, Math.round((Math.LN2 * bits) / n));
  return { bits, hashes };
}

/** The expected false-positive rate (1 - e^(-kn/m))^k after n keys. */
export function estimateFPR(bits, hashes, count) {
  positiveInteger('bits', bits, Number.MAX_SAFE_INTEGER);
  positiveInteger('hashes', hashes, 64);
  if (typeof count !== 'number' || !(count >= 0)) throw new RangeError('edgebloom: "count" must be a number >= 0');
  return Math.pow(-Math.expm1((-hashes * count) / bits), hashes);
}

/** Internal: runs an operation of the engine that takes x and y and gives one number. */
export function engineNumber(op, x, y) {
  const e = live();
  const base = scratch(e, 8);
  call(e, op, 0, 0, 0, 0, 0, x, y);
  return new Float64Array(mem(e).buffer, base, 1)[0];
}

/** Internal: the number of live filters in the engine, for leak tests. */
export function _liveFilters() {
  return call(live(), OP_LIVE);
}

/**
 * Internal, for tests: stops the engine as a panic outside recover would,
 * so that the ERR_ENGINE_EXITED path can be tested. Filters of the stopped
 * engine throw from then on; init() starts a fresh engine.
 */
export function _crashEngine() {
  call(live(), OP_CRASH);
}

/**
 * Internal, for tests: stops the engine from inside a FinalizationRegistry
 * callback, as a free() of a dropped filter does when the Go program dies
 * in it, after the next garbage collection that finds the returned object
 * unreachable. No call is being checked then: the next call must notice.
 * @returns {object} drop it, then collect garbage
 */
export function _crashEngineInFinalizer() {
  const token = {};
  registry.register(token, { handle: 0, e: live(), op: OP_CRASH });
  return token;
}

/** Internal, for tests: the memory budget, what counts against it and the room it has left, in bytes. */
export function _memoryBudget() {
  const e = live();
  return { limit: e.limit, used: e.used, scratch: e.scratchSize, room: budgetRoom(e) };
}

/** Internal: the size of the engine's linear memory in bytes. */
export function _memoryBytes() {
  return live().memory.buffer.byteLength;
}
