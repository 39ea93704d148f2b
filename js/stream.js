// fromStream: a filter or a sharded container loaded from a Blob, a
// Response or a ReadableStream of bytes as they arrive, without the whole
// input in a JS buffer: each header is gathered and checked as fromBytes
// checks it, each classic, counting or split-block payload is copied chunk
// by chunk straight into the filter's words, which the engine allocates
// from the checked header, and the checksum is verified at the end. A
// refusal is the one fromBytes gives the same bytes.
import { OP_DECODE, HEADER_SIZE, CHECKSUM_SIZE, KIND_CLASSIC, CONTAINER_HEADER as FIXED } from './abi.js';
import { call, live, loadRoom, mem, rescratch, shardRecord } from './core.js';
import { CONSTRUCT, loadArgs } from './args.js';
import { codedError } from './errors.js';
import { IN_PLACE, decodePayload, header, load, payload } from './decode.js';
import {
  CLASSES,
  ShardedBloomFilter,
  assemble,
  containerLengths,
  containerShards,
  containerSize,
  fromBytes,
  isSharded,
  loadRouter,
  routerHead,
} from './sharded.js';
import { BloomFilter } from './classic.js';

const EMPTY = new Uint8Array(0);

const truncated = () => codedError(Error, 'ERR_TRUNCATED', 'bloom: truncated filter');
const trailing = () => codedError(Error, 'ERR_CORRUPT', 'bloom: corrupt filter: trailing bytes after the filter');
const containerTruncated = () => codedError(Error, 'ERR_TRUNCATED', 'edgebloom: truncated sharded container');

// The bytes of a stream, taken as they are asked for. What the stream's
// reader rejects with is kept in failed and passed on as it is.
class Source {
  constructor({ reader, byob }) {
    this.reader = reader;
    this.byob = byob;
    this.queue = [];
    this.done = false;
    this.failed = undefined;
    this.taken = 0;
  }

  // next makes queue[0] a chunk with bytes in it, and says whether there
  // is one (false at the stream's end).
  async next() {
    while (this.queue.length === 0 || this.queue[0].length === 0) {
      if (this.queue.length) {
        this.queue.shift();
        continue;
      }
      if (this.done) return false;
      let r;
      try {
        // A byte stream (a Blob's, in browsers) fills one buffer again and
        // again: the chunks already read are consumed (copied into the
        // engine or out, by pour and take) before the next read.
        r = await (this.byob ? this.reader.read(new Uint8Array(this.byob)) : this.reader.read());
        if (this.byob && r.value) this.byob = r.value.buffer;
      } catch (err) {
        this.failed = { err };
        throw err;
      }
      if (r.done) this.done = true;
      else this.queue.push(chunk(r.value));
    }
    return true;
  }

  // pour gives up to n bytes to sink(part, at) as they arrive and returns
  // how many it gave: fewer at the stream's end.
  async pour(n, sink) {
    let got = 0;
    while (got < n && (await this.next())) {
      const c = this.queue[0];
      const part = c.subarray(0, Math.min(n - got, c.length));
      sink(part, got);
      this.queue[0] = c.subarray(part.length);
      got += part.length;
    }
    this.taken += got;
    return got;
  }

  // take returns the next n bytes, or fewer at the stream's end, in a buffer
  // of their own, grown as they arrive.
  async take(n) {
    const parts = [];
    const got = await this.pour(n, (part) => parts.push(part.slice()));
    const out = new Uint8Array(got);
    let at = 0;
    for (const p of parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }

  // unread puts bytes back in front of the stream.
  unread(bytes) {
    this.queue.unshift(bytes);
    this.taken -= bytes.length;
  }
}

function chunk(value) {
  if (value instanceof Uint8Array) return value;
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  throw new TypeError(`edgebloom: fromStream reads a stream of Uint8Array chunks, got a chunk of ${typeof value}`);
}

// The size of the buffer a byte stream is read into.
const BYOB_CHUNK = 256 * 1024;

// open returns a reader of source's bytes (of a byte stream, with the
// buffer it reads into) and their length when it is known (a Blob's size).
function open(source) {
  let stream;
  let length;
  if (typeof Blob !== 'undefined' && source instanceof Blob) {
    [stream, length] = [source.stream(), source.size];
  } else if (typeof source?.getReader === 'function') stream = source;
  else if (
    source !== null &&
    typeof source === 'object' &&
    'body' in source &&
    typeof source.arrayBuffer === 'function'
  ) {
    // A Response (of any realm); one without a body has no bytes.
    stream = source.body ?? new Blob([]).stream();
  } else throw new TypeError('edgebloom: fromStream takes a ReadableStream of Uint8Array, a Blob or a Response');
  try {
    // A byte stream read into one buffer leaves no chunk behind for the
    // garbage collector: a Blob's 12 MB costs 256 KiB of JS memory.
    return { reader: stream.getReader({ mode: 'byob' }), byob: new ArrayBuffer(BYOB_CHUNK), length };
  } catch {
    return { reader: stream.getReader(), byob: undefined, length };
  }
}

// The engine holds one payload being filled at a time (e.held): stream
// loads of an engine run one after another.
let turn = Promise.resolve();

/**
 * Loads a filter of any kind, or a sharded container, from a Blob, a
 * Response or a ReadableStream of Uint8Array chunks: what fromBytes loads
 * from the same bytes, with the same refusals.
 */
export async function fromStream(source, opts) {
  const { maxBits } = loadArgs(EMPTY, opts);
  const opened = open(source);
  const { reader, length } = opened;
  const src = new Source(opened);
  const wait = turn;
  let done;
  turn = new Promise((resolve) => (done = resolve));
  await wait;
  try {
    const e = live();
    const head = await src.take(HEADER_SIZE);
    // All of a short input: fromBytes' answer is the answer.
    if (head.length < HEADER_SIZE) return fromBytes(head, opts);
    if (isSharded(head)) {
      src.unread(head);
      return await container(e, src, maxBits, length);
    }
    return await record(e, src, head, Infinity, undefined, undefined, maxBits, undefined, truncated);
  } catch (err) {
    if (!src.failed) reader.cancel(err).catch(() => {});
    throw err;
  } finally {
    try {
      reader.releaseLock();
    } catch {
      // a reader of another implementation
    }
    done();
  }
}

// record loads the record whose header is head and whose rest comes from
// src, at most n bytes in all (a container's record; Infinity: the rest of
// the stream, whose end is checked), as load loads it from bytes: of kind
// want into Class (any kind into its class when want is undefined),
// bounded by maxBits and by fits bytes. short is the error of a stream that
// ends before the record does.
async function record(e, src, head, n, Class, want, maxBits, fits, short) {
  if (n < HEADER_SIZE) throw truncated();
  const checked = header(e, Class, head, maxBits, want, fits);
  const { kind, size } = checked;
  if (!IN_PLACE.has(kind)) {
    // Scalable filters and windows, records of records, are decoded from a
    // copy, as fromBytes decodes them: of the record and a byte more, which
    // refuses bytes after the record after decoding it, as fromBytes does.
    const more = Math.min(n, size + 1) - HEADER_SIZE;
    const rest = await src.take(more);
    if (rest.length < more && n !== Infinity) throw short();
    return load(Class, concat(head, rest), { maxBits }, want, CLASSES, fits);
  }
  if (n < size) throw truncated();
  const C = Class ?? CLASSES[kind];
  const f = new C(CONSTRUCT, kind, 0, 0, 0, await inPlace(e, src, head, checked, maxBits, short));
  if (n === Infinity ? await src.next() : n > size) {
    f.free();
    throw trailing();
  }
  return f;
}

function concat(a, b) {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

// inPlace streams the payload of a checked classic, counting or
// split-block header into the words the engine allocates for it, then
// decodes the record with its checksum. Nothing stays allocated after a
// refusal or a stream that fails.
async function inPlace(e, src, head, { kind, size, fits }, maxBits, short) {
  const words = size - HEADER_SIZE - CHECKSUM_SIZE;
  const h = { head: head.slice(0, HEADER_SIZE), kind, size, maxBits, fits, at: 0, written: 0, lost: undefined };
  h.at = payload(e, head, kind, size, maxBits, fits);
  e.held = h;
  try {
    const got = await src.pour(words, (part) => {
      if (h.lost) throw h.lost;
      mem(e).set(part, h.at + h.written);
      h.written += part.length;
    });
    if (h.lost) throw h.lost;
    if (got < words) throw short();
    const sum = await src.take(CHECKSUM_SIZE);
    if (h.lost) throw h.lost;
    if (sum.length < CHECKSUM_SIZE) throw short();
    e.held = undefined;
    return decodePayload(e, h.head, sum, maxBits, fits);
  } catch (err) {
    if (e.held === h) {
      // A decode of nothing, refused, drops the payload the engine holds.
      e.held = undefined;
      try {
        call(e, OP_DECODE, 0, 0, 0, 0, 0, 0, 0);
      } catch {
        // refused, as it must be
      } finally {
        if (!e.dead) rescratch(e);
      }
    }
    throw err;
  }
}

// container loads a sharded container from src, as
// ShardedBloomFilter.fromBytes loads its bytes. Its length, when not known
// (a stream, not a Blob), is learnt at a refusal by reading on to the end
// of the records the header declares, so that a container both damaged
// and of the wrong length gets fromBytes' code (its length is checked
// first).
async function container(e, src, maxBits, length) {
  const fixed = await src.take(FIXED);
  if (fixed.length < FIXED) return ShardedBloomFilter.fromBytes(fixed);
  const s = containerShards(fixed);
  src.unread(fixed);
  const prefix = await src.take(FIXED + 8 * s);
  if (prefix.length < FIXED + 8 * s) return ShardedBloomFilter.fromBytes(prefix);
  const { lengths, declared, total } = containerLengths(prefix, s, length);
  const loaded = [];
  try {
    const head = await src.take(Math.min(lengths[0], HEADER_SIZE));
    if (head.length < Math.min(lengths[0], HEADER_SIZE)) throw containerTruncated();
    routerHead(head, s, lengths[0]);
    const share = shardRecord(loadRoom(e), s);
    // The router, a small record, from a copy.
    const { size } = header(e, BloomFilter, head, s, KIND_CLASSIC);
    const rest = await src.take(Math.min(lengths[0], size + 1) - HEADER_SIZE);
    if (rest.length < Math.min(lengths[0], size + 1) - HEADER_SIZE) throw containerTruncated();
    const bytes = concat(head, rest);
    // (A byte after the record refuses bytes after it, as fromBytes does.)
    loaded.push(loadRouter(bytes, s));
    for (const n of lengths.slice(1)) {
      const h = await src.take(Math.min(n, HEADER_SIZE));
      if (h.length < Math.min(n, HEADER_SIZE)) throw containerTruncated();
      loaded.push(await record(e, src, h, n, BloomFilter, KIND_CLASSIC, maxBits, share, containerTruncated));
    }
    if (await src.next())
      throw codedError(Error, 'ERR_CORRUPT', 'edgebloom: trailing bytes after the sharded container');
    return assemble(loaded);
  } catch (err) {
    for (const f of loaded) f.free();
    if (length === undefined && !src.failed) {
      // How long the container is: read on (and drop) to one byte past
      // the declared end.
      const rest = Number(total) - src.taken + 1;
      const seen = src.taken + (rest > 0 ? await src.pour(rest, () => {}) : 0);
      containerSize(declared, total, seen);
    }
    throw err;
  }
}
