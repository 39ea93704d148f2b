// Filters from bytes: the documented format (load, checked before any
// byte is copied into the engine) and a Parquet bitset (fromParquet).
import {
  OP_FREE,
  OP_INSPECT,
  OP_DECODE,
  OP_FROM_PARQUET,
  KIND_BLOCKED,
  KIND_CLASSIC,
  KIND_COUNTING,
  HEADER_SIZE,
  CHECKSUM_SIZE,
  CONTAINER_MAGIC,
} from './abi.js';
import {
  budgetRoom,
  call,
  live,
  loadRecord,
  loadRoom,
  loadScratch,
  mem,
  rescratch,
  scratch,
  scratchGrowth,
  tooLarge,
} from './core.js';
import { CONSTRUCT, loadArgs } from './args.js';
import { codedError } from './errors.js';

// Whether bytes start as a sharded container (a Worker's snapshot of a
// filter of several shards) does: its magic, CONTAINER_MAGIC.
const isContainer = (bytes) => [...CONTAINER_MAGIC].every((c, i) => bytes[i] === c.charCodeAt(0));

// The error of a kind's fromBytes given a sharded container: what the bytes
// hold, and the two calls that load them. Its code is ERR_NOT_FILTER, as
// Go's bloom.Decode says of the same bytes.
function containerError(Class, bytes) {
  const shards = new DataView(bytes.buffer, bytes.byteOffset).getUint32(8, true);
  return codedError(
    Error,
    'ERR_NOT_FILTER',
    `edgebloom: ${Class.name}.fromBytes: these bytes are a sharded snapshot (magic "${CONTAINER_MAGIC}", ${shards} shards), ` +
      'as the Worker sends for a filter of several shards, not one filter: load them with fromBytes(bytes), ' +
      'which takes any filter or snapshot, or ShardedBloomFilter.fromBytes(bytes)',
  );
}

// The kinds whose payload is an array of words, which a load copies
// straight into the filter's own words.
export const IN_PLACE = new Set([KIND_CLASSIC, KIND_COUNTING, KIND_BLOCKED]);

/**
 * Checks the header of a load (bytes' first HEADER_SIZE bytes) as the
 * decoder of kind want checks it, before the rest is copied into linear
 * memory, which grows for good: an oversized or foreign input costs
 * nothing, and a header of another kind is ERR_KIND where Go's decoder says
 * so. Returns the kind, the record's size and the bound a decode takes.
 */
export function header(e, Class, bytes, maxBits, want, record) {
  mem(e).set(bytes.subarray(0, HEADER_SIZE), scratch(e, HEADER_SIZE + CHECKSUM_SIZE));
  // Any kind: the one the header names; one the format does not have is
  // read as classic, as Go's decoders dispatch.
  const any = bytes[5] >= KIND_CLASSIC && bytes[5] <= KIND_BLOCKED ? bytes[5] : KIND_CLASSIC;
  // The memory budget bounds the header's bits as maxBits does, at the
  // same step of Go's order of checks: a filter that cannot fit is
  // ERR_TOO_LARGE from its header, before a byte of it is copied, whatever
  // else is wrong with it; Go's decoders given that bound say the same.
  const room = loadRoom(e);
  const fits = record ?? loadRecord(room);
  let kind;
  try {
    kind = call(e, OP_INSPECT, 0, 0, want ?? any, 0, 0, maxBits, fits);
  } catch (err) {
    if (err.code === 'ERR_NOT_FILTER' && Class !== undefined && isContainer(bytes)) throw containerError(Class, bytes);
    const bits = new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(16, true);
    if (err.code !== 'ERR_TOO_LARGE' || bits > BigInt(maxBits)) throw err;
    throw codedError(
      RangeError,
      'ERR_TOO_LARGE',
      `edgebloom: a filter of ${bits} bits needs more than the engine's memory budget has left: ${room} bytes of ${e.limit}, and a load takes its size twice, the input and the filter (init({ memoryLimit }) sets the budget); nothing was changed`,
    );
  }
  // The record, as long as its checked header says and no longer, is
  // decoded in order, as Go's decoders read it: a record cut short or
  // damaged gets the code Go gives it, and bytes after a whole record are
  // refused after it. (One refusal, one code: js/test/mutations.test.js.)
  const size =
    HEADER_SIZE + CHECKSUM_SIZE + Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(56, true));
  return { kind, size, fits };
}

// payload has the engine allocate the words of the record whose checked
// header is head[0:HEADER_SIZE], which the next decode takes as the
// filter's (OP_INSPECT with their count), and returns their address.
export function payload(e, head, kind, size, maxBits, fits) {
  mem(e).set(head.subarray(0, HEADER_SIZE), scratch(e, HEADER_SIZE + CHECKSUM_SIZE));
  return call(e, OP_INSPECT, 0, 0, kind, (size - HEADER_SIZE - CHECKSUM_SIZE) / 8, 0, maxBits, fits) >>> 0;
}

// decodePayload decodes the record of header head and checksum sum whose
// payload the engine holds (payload, just before), and returns its handle.
export function decodePayload(e, head, sum, maxBits, fits) {
  const base = scratch(e, HEADER_SIZE + CHECKSUM_SIZE);
  mem(e).set(head.subarray(0, HEADER_SIZE), base);
  mem(e).set(sum, base + HEADER_SIZE);
  try {
    return call(e, OP_DECODE, 0, HEADER_SIZE + CHECKSUM_SIZE, 0, 0, 0, maxBits, fits);
  } finally {
    // As after every decode: the engine may have replaced a large scratch.
    if (!e.dead) rescratch(e);
  }
}

// park and unpark keep the payload a stream load (js/stream.js) is
// filling, e.held, across a load that runs while it waits for bytes: the
// engine holds one payload at a time and a decode drops it. park copies
// what was written so far; unpark has the engine allocate the payload
// anew and puts it back, or marks the stream load lost with the error.
function park(e) {
  return e.held ? mem(e).slice(e.held.at, e.held.at + e.held.written) : null;
}

function unpark(e, saved) {
  const h = e.held;
  if (!saved || !h || e.dead) return;
  try {
    h.at = payload(e, h.head, h.kind, h.size, h.maxBits, h.fits);
    mem(e).set(saved, h.at);
  } catch (err) {
    h.lost = err;
    e.held = null;
  }
}

/**
 * Loads a filter from bytes in the documented format: of kind want into
 * Class, or when Class is undefined, of any kind into its class in classes.
 * record, when given, is the longest input the memory budget has room for
 * (a sharded container's share for each shard); by default, a load's own.
 */
export function load(Class, input, opts, want, classes, record) {
  const { bytes, maxBits } = loadArgs(input, opts);
  const e = live();
  if (bytes.length < HEADER_SIZE) {
    throw codedError(Error, 'ERR_TRUNCATED', 'bloom: truncated filter');
  }
  const { kind, size, fits } = header(e, Class, bytes, maxBits, want, record);
  // A classic, counting or split-block record cut short reaches the end of
  // its input before its checksum: Go's decoders say ERR_TRUNCATED, and so
  // does this, before a byte is copied. Scalable filters and windows hold
  // records whose headers and checksums come before the cut.
  if (bytes.length < size && IN_PLACE.has(kind)) {
    throw codedError(Error, 'ERR_TRUNCATED', 'bloom: truncated filter');
  }
  let handle;
  const saved = park(e);
  try {
    if (IN_PLACE.has(kind)) {
      // A payload that is an array of words is copied once, straight into
      // the filter's own words, which the engine allocates from the checked
      // header: the load costs linear memory the filter and nothing more
      // (no copy of the input; wasm is little-endian, as the format is).
      // The decoder then checks the record as it checks any: the checksum
      // over the words in place, then what the kind requires, with the
      // same codes.
      const at = payload(e, bytes, kind, size, maxBits, fits);
      mem(e).set(bytes.subarray(HEADER_SIZE, size - CHECKSUM_SIZE), at);
      handle = decodePayload(e, bytes, bytes.subarray(size - CHECKSUM_SIZE, size), maxBits, fits);
    } else {
      // At most the record the bound above lets through: its copy and the
      // filter it becomes fit the room.
      const n = Math.min(bytes.length, size);
      const base = loadScratch(e, n);
      mem(e).set(bytes.subarray(0, n), base);
      try {
        handle = call(e, OP_DECODE, 0, n, 0, 0, 0, maxBits, fits);
      } finally {
        if (!e.dead) rescratch(e);
      }
    }
  } finally {
    unpark(e, saved);
  }
  if (bytes.length > size) {
    e.eb(OP_FREE, handle, 0, 0, 0, 0, 0, 0);
    throw codedError(Error, 'ERR_CORRUPT', 'bloom: corrupt filter: trailing bytes after the filter');
  }
  const C = Class ?? classes[kind];
  return new C(CONSTRUCT, kind, 0, 0, 0, handle);
}

/** A split-block filter of Class whose bits are a copy of a Parquet bitset. */
export function fromParquet(Class, input, opts) {
  const { bytes, maxBits } = loadArgs(input, opts);
  const e = live();
  // Checked before the bitset is copied into linear memory, which grows for good.
  if (8 * bytes.length > maxBits) {
    throw codedError(
      RangeError,
      'ERR_TOO_LARGE',
      `bloom: filter exceeds the size bound: the bitset has ${8 * bytes.length} bits, maxBits is ${maxBits}`,
    );
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
