/// <reference lib="esnext.disposable" />
// Types of the edgebloom npm module. The same declarations describe every
// entry point (node, browser, workerd); where a member behaves differently,
// its comment says so.

/**
 * A key: a string, hashed as its UTF-8 bytes exactly as Go hashes the same
 * string, or raw bytes. A string that is not well-formed UTF-16 (a lone
 * surrogate) is encoded as TextEncoder encodes it, with U+FFFD (EF BF BD)
 * for each lone surrogate: "a\ud800" is the key "a\ufffd". A key of any
 * length works: one longer than 256 Ki units (or bytes) is hashed in pieces,
 * so the engine's scratch buffer stays under 1 MiB.
 */
export type Key = string | Uint8Array;

// URL, Response and WebAssembly.Module come from whichever lib the project
// has (DOM, @types/node, a worker's types); with none of them, init() still
// takes strings and bytes. Inferred from globalThis rather than named, so
// that these types compile without the DOM lib.
type GlobalInstance<Name extends string> = typeof globalThis extends { [K in Name]: { prototype: infer T } }
  ? T
  : never;
type WasmModule = typeof globalThis extends { WebAssembly: { Module: { prototype: infer T } } } ? T : never;

/**
 * Where init() finds the WebAssembly engine: the URL of edgebloom.wasm, a
 * Response with its bytes (also one of another realm), the bytes, or a
 * compiled WebAssembly.Module.
 */
export type WasmSource =
  GlobalInstance<'URL'> | string | GlobalInstance<'Response'> | ArrayBuffer | ArrayBufferView | WasmModule;

/**
 * Loads and starts the WebAssembly engine. Call it once before anything
 * else; later calls return at once. A failed call leaves the module as it
 * was, so it can be called again.
 *
 * Should the engine ever stop (the Go program exits, which no documented
 * input makes it do; or the host breaks the instance, wherever that
 * happens, a FinalizationRegistry callback included), every later call, on
 * any filter or constructor, checks first and throws an Error with code
 * "ERR_ENGINE_EXITED", never a wrong answer and never the TypeError or
 * RuntimeError the broken instance raised (that one is the error's
 * `cause`). free() on such a filter does nothing and never throws. The
 * filters of the stopped engine are gone and keep throwing
 * ERR_ENGINE_EXITED; init() then starts a fresh engine, into which saved
 * bytes load again. A long-lived holder (a Durable Object) recovers with:
 * catch the code, drop its filters, `await init()`, reload with fromBytes
 * and retry once.
 *
 * - Works in node: yes (reads edgebloom.wasm next to the module; `source` optional).
 * - Works in browser: yes (fetches edgebloom.wasm next to the module with
 *   `compileStreaming` when it is served as application/wasm; pass `source`
 *   when a bundler moved the file).
 * - Works in Cloudflare Workers: yes, but call it inside a handler, never at
 *   global scope (Go's runtime reads random bytes when it starts).
 * - Works in Vercel Edge: yes (the "edge-light" entry imports the wasm as
 *   `edgebloom.wasm?module`); a Response or Module of another realm is fine.
 *
 * @throws {Error} code "ERR_WASM_FETCH" when the wasm could not be fetched or
 *   what came is not WebAssembly (the message names the URL, status and
 *   content type, and says to pass init(url | bytes | Module) or serve the file);
 *   code "ERR_WASM_URL" without a source in a bundle that has no
 *   import.meta.url; code "ERR_VERSION" for an edgebloom.wasm built for
 *   another version of the module (a stale file: rebuild or reinstall);
 *   {TypeError} code "ERR_ARG" for a source of another type;
 *   WebAssembly.CompileError for bytes that are not WebAssembly.
 */
export function init(source?: WasmSource, options?: InitOptions): Promise<void>;

/** The options of init(). */
export interface InitOptions {
  /**
   * The engine's memory budget in bytes, from 16 MiB to 4 GiB; default
   * 64 MiB (DEFAULT_MEMORY_LIMIT), half of a Workers isolate's 128 MB. It
   * covers every live filter (its byteLength), the engine's scratch buffer
   * and 8 MiB for the Go runtime, and Go's collector is held to it
   * (GOMEMLIMIT). A new filter, a fromBytes or fromParquet, or an
   * addMany/hasMany that would need more throws a RangeError with code
   * "ERR_TOO_LARGE" before anything is allocated; every other filter keeps
   * working. A load needs its size twice (the input copied in, and the
   * filter): fromBytes refuses one too large from its header, where maxBits
   * is checked. Linear memory never shrinks, so without a budget one oversized
   * request could take the memory all the filters live in. Not counted: the
   * copy toBytes() makes for the moment it runs. An addMany() on a
   * ScalableBloomFilter whose keys, all counted as new, would need layers
   * past the budget is refused the same way; the layers it adds count from
   * then on (a single add() that grows one is counted at the next addMany).
   * init() on a running engine sets a new budget at once.
   */
  memoryLimit?: number;
}

/** The largest filter the engine makes or loads: 2^32 bits (512 MiB). */
export const MAX_BITS: number;

/** The memory budget init() gives the engine unless told otherwise: 64 MiB (see InitOptions). */
export const DEFAULT_MEMORY_LIMIT: number;

/**
 * The version of this release of edgebloom, as package.json gives it ("0.1.0"), readable before init().
 * init() refuses an edgebloom.wasm of another release with an Error whose code is ERR_VERSION.
 */
export const version: string;

/** The most generations of a WindowBloomFilter: 4096, as Go's bloom.MaxGenerations. */
export const MAX_GENERATIONS: number;

/** Sizing from an expected number of keys and a false-positive rate. */
export interface CapacityOptions {
  /** Expected number of keys: an integer ≥ 1. */
  capacity: number;
  /** Target false-positive rate, in (0, 1): 0.01 is 1 %. */
  errorRate: number;
}

/** An explicit size. */
export interface SizeOptions {
  /** m: the number of bits (counters for a counting filter), 1 to MAX_BITS. */
  bits: number;
  /** k: the number of hash functions, 1 to 64. */
  hashes: number;
}

/** An explicit size for a BlockedBloomFilter. */
/**
 * Sizing of a split-block filter from an expected number of keys and a
 * false-positive rate. With forParquet, the number of blocks is rounded up
 * to a power of two (Go's ParquetBlocks), which every Parquet reader
 * accepts: Arrow C++ (pyarrow), Velox and ClickHouse refuse other lengths.
 * That costs up to twice the memory and lowers the rate as much: 1 000 000
 * keys at 1% make 65 536 blocks (2 MiB) with an expected 0.10%, where
 * { capacity, errorRate } alone makes 42 081 blocks at 0.90%.
 */
export interface BlockedCapacityOptions extends CapacityOptions {
  /** Round the blocks up to a power of two, at most 2^22 (128 MiB, Arrow's limit). */
  forParquet?: boolean;
}

export interface BlockedSizeOptions {
  /**
   * The number of 256-bit (32-byte) blocks, 1 to MAX_BITS / 256 (2^24). A
   * Parquet bitset of n bytes has n / 32 blocks.
   */
  blocks: number;
}

export interface ScalableOptions {
  /** Keys the first layer holds: an integer ≥ 1. Each new layer holds twice as many. */
  initialCapacity: number;
  /** The false-positive rate the whole filter stays below, in (0, 1). */
  errorRate: number;
}

export interface WindowOptions {
  /** Keys each generation holds at errorRate: an integer ≥ 1. */
  capacityPerGeneration: number;
  /** The false-positive rate of each generation at capacity, in (0, 1); the window's is about generations times that. */
  errorRate: number;
  /** The number of generations: "seen in the last 7 days" is 7 daily generations. An integer from 1 to 4096 (Go's `bloom.MaxGenerations`), checked before any work. */
  generations: number;
}

export interface FromBytesOptions {
  /** Refuse filters of more bits than this (default and maximum MAX_BITS), before allocating. */
  maxBits?: number;
}

export interface FilterStats {
  kind: 'classic' | 'counting' | 'scalable' | 'window' | 'blocked';
  bits: number;
  hashes: number;
  count: number;
  setBits: number;
  estimatedCount: number;
  fillRatio: number;
  estimatedErrorRate: number;
  capacity: number;
  errorRate: number;
  overCapacity: boolean;
  layers: number;
  byteLength: number;
}

/**
 * What every filter offers. A filter lives in the engine's memory until
 * free() (or `using`); one dropped without free() is freed when garbage
 * collected. Every method throws an Error with code "ERR_FREED" after free().
 */
export interface Filter {
  /**
   * Adds key and reports whether it was new: true when at least one of its
   * bits was unset. One call tests and adds: `if (f.add(url)) crawl(url)`.
   * @throws {TypeError} when key is not a string or Uint8Array.
   */
  add(key: Key): boolean;
  /** Whether key is probably in the set. Never false for an added key; sometimes true for another. */
  has(key: Key): boolean;
  /**
   * add() for many keys, in one crossing into the engine per megabyte of keys.
   * All or nothing: every key is checked first, and a TypeError naming the
   * first bad one (`keys[i]`) means no key was added.
   */
  addMany(keys: Key[]): boolean[];
  /** has() for many keys, in one crossing into the engine per megabyte of keys. */
  hasMany(keys: Key[]): boolean[];
  /** All statistics in one call, from one pass over the bits. */
  stats(): FilterStats;
  /**
   * kind, bits, hashes, count, capacity, errorRate and byteLength take constant
   * time (read when the filter is made or loaded); setBits, estimatedCount,
   * fillRatio, estimatedErrorRate and overCapacity pass over the bits once each.
   */
  readonly kind: 'classic' | 'counting' | 'scalable' | 'window' | 'blocked';
  /** m: bits (counters for a counting filter; all layers for a scalable one). */
  readonly bits: number;
  /** k: hash functions (0 for a scalable filter, whose layers differ). */
  readonly hashes: number;
  /** Adds that returned true (less removes, for a counting filter). */
  readonly count: number;
  /** Bits set (counters above zero). */
  readonly setBits: number;
  /** Distinct keys estimated from the bits set: -m/k · ln(1 - set/m). */
  readonly estimatedCount: number;
  /** setBits / bits. */
  readonly fillRatio: number;
  /** The false-positive rate at the current fill. */
  readonly estimatedErrorRate: number;
  /** The capacity the filter was made for; 0 when made from an explicit size. */
  readonly capacity: number;
  /** The target false-positive rate; 0 when made from an explicit size. */
  readonly errorRate: number;
  /** Whether the filter holds more keys than it was made for. */
  readonly overCapacity: boolean;
  /** The length of toBytes() in bytes. */
  readonly byteLength: number;
  /** Removes every key. */
  clear(): void;
  /** The filter in the documented binary format, byte for byte what Go's MarshalBinary writes. */
  toBytes(): Uint8Array<ArrayBuffer>;
  /** Frees the filter's memory in the engine. Calling it again does nothing. */
  free(): void;
  /** free(), for `using f = new BloomFilter(...)`. */
  [Symbol.dispose](): void;
}

/** What addManyChanges() changed, for applyChanges(). */
export interface FilterChanges {
  /** One answer a key, as addMany() gives it. */
  added?: boolean[];
  /** The position of every bit that turned from 0 to 1. */
  changed: Uint32Array | number[];
  /** The filter's count after the adds. */
  count: number;
}

/** A classic Bloom filter. */
export interface BloomFilter extends Filter {}
export class BloomFilter {
  /**
   * @throws {RangeError} when capacity is not an integer ≥ 1, errorRate is not in (0, 1),
   *   or the filter would exceed MAX_BITS; {TypeError} when an option is not a number.
   * @throws {Error} with code "ERR_NOT_INITIALIZED" before init().
   */
  constructor(options: CapacityOptions | SizeOptions);
  /**
   * Loads a classic filter written by toBytes() or by Go's MarshalBinary.
   * The header is checked, and the size bound applied, before anything is allocated.
   * A Worker's snapshot of a filter of several shards is not one: load it
   * with fromBytes(bytes), which takes any filter or snapshot.
   * @throws {Error} with code ERR_TRUNCATED, ERR_CORRUPT, ERR_CHECKSUM, ERR_NOT_FILTER
   *   (a sharded snapshot among them, with a message naming fromBytes),
   *   ERR_VERSION, ERR_KIND or ERR_TOO_LARGE.
   */
  static fromBytes(bytes: Uint8Array | ArrayBuffer | ArrayBufferView, options?: FromBytesOptions): BloomFilter;
  /** The k bit positions of key, in probe order (what Go's Locations returns). */
  positions(key: Key): number[];
  /**
   * addMany() that also reports what it changed: the position of every bit that
   * turned from 0 to 1 (each once; none for keys already present) and the count
   * after, so that a copy kept elsewhere can be brought up to date with
   * applyChanges() at the cost of the change, not of the filter (Go: AddChanges).
   * Every key is checked first: a TypeError means nothing was added. Each key
   * is written whole into the engine (no pieces, unlike addMany), within the
   * memory budget of init().
   */
  addManyChanges(keys: Key[]): FilterChanges;
  /**
   * Sets the bits of changes and makes count its count. Replaying the changes of
   * a run of adds, in order, on a copy from before them gives the filter after
   * them; replaying one twice changes nothing more (Go: ApplyChanges).
   * @throws {RangeError} code "ERR_ARG" for a position ≥ bits or a bad count; nothing changes.
   */
  applyChanges(changes: FilterChanges): void;
  /**
   * Bytes [start, end) (end defaults to byteLength) of toBytes(), without
   * encoding the filter: the payload is copied from the bits, the header made
   * from the parameters, and the checksum, when the range reaches it, hashed over
   * the bits without a copy (Go: ReadAt).
   * @throws {RangeError} code "ERR_ARG" for a range outside [0, byteLength].
   */
  readBytes(start: number, end?: number): Uint8Array<ArrayBuffer>;
  /**
   * Replaces bytes of the payload, which starts at byte 64 of toBytes() and ends 8
   * bytes before its end, from byte start; count is unchanged (Go: WritePayloadAt).
   * @throws {RangeError} code "ERR_ARG" for a range outside the payload; {Error} code
   *   "ERR_CORRUPT" for bits set beyond m. Either way nothing changes.
   */
  writeBytes(start: number, bytes: Uint8Array): void;
  /** Adds every key of other. @throws {Error} code "ERR_INCOMPATIBLE" when bits, hashes or seed differ. */
  union(other: BloomFilter): void;
  /** Keeps only the bits also set in other. @throws {Error} code "ERR_INCOMPATIBLE". */
  intersect(other: BloomFilter): void;
  /** Whether other has the same parameters and bits. */
  equals(other: BloomFilter): boolean;
}

/**
 * A Bloom filter of 4-bit counters (four times the memory of a BloomFilter)
 * that supports remove(). Counters stop at 15 and are then never decremented,
 * so removing an added key never makes another added key disappear.
 */
export interface CountingBloomFilter extends Filter {}
export class CountingBloomFilter {
  constructor(options: CapacityOptions | SizeOptions);
  static fromBytes(bytes: Uint8Array | ArrayBuffer | ArrayBufferView, options?: FromBytesOptions): CountingBloomFilter;
  /** The k counter positions of key. */
  positions(key: Key): number[];
  /** Removes key: false, and no change, when key is certainly absent. Remove only keys you added. */
  remove(key: Key): boolean;
  equals(other: CountingBloomFilter): boolean;
}

/**
 * A Bloom filter that grows by layers, each twice as large with half the
 * error rate, so its false-positive rate stays below errorRate however many
 * keys it holds.
 */
export interface ScalableBloomFilter extends Filter {}
export class ScalableBloomFilter {
  constructor(options: ScalableOptions);
  static fromBytes(bytes: Uint8Array | ArrayBuffer | ArrayBufferView, options?: FromBytesOptions): ScalableBloomFilter;
  /** The number of layers. */
  readonly layers: number;
}

/**
 * The keys of the last few periods, in generations of classic filters:
 * add() writes to the newest, has() asks all of them, and rotate(), called
 * at the end of each period, drops the oldest. A key added in the current
 * period stays present for generations - 1 more rotations. stats().layers
 * is the number of generations; count and bits are summed over them.
 * Works in node, browsers and Cloudflare Workers; Go's bloom.WindowFilter
 * reads and writes the same bytes.
 */
export interface WindowBloomFilter extends Filter {}
export class WindowBloomFilter {
  /**
   * @throws {RangeError} when an option is out of range or the window would exceed MAX_BITS.
   */
  constructor(options: WindowOptions);
  static fromBytes(bytes: Uint8Array | ArrayBuffer | ArrayBufferView, options?: FromBytesOptions): WindowBloomFilter;
  /**
   * Adds key to the newest generation and reports whether it was new to the
   * window: false when any generation had it. A key seen in an older
   * generation is added again all the same, so it stays another full window.
   */
  add(key: Key): boolean;
  /** Drops the oldest generation and starts an empty newest one. */
  rotate(): void;
  /** The number of generations. */
  readonly generations: number;
}

/**
 * A split-block Bloom filter (kind 5), exactly Apache Parquet's Split Block
 * Bloom Filter: a key is hashed once (XXH64, seed 0), the upper 32 bits pick
 * one 256-bit block and the lower 32 bits set one bit in each of its eight
 * 32-bit words. All eight bits of a key lie in one 32-byte block, so add()
 * and has() touch one cache line where a classic filter of the same rate
 * touches about seven; it needs about 11 % more bits for the same rate
 * (10.8 bits a key at 1 %), which {capacity, errorRate} sizing accounts for.
 * hashes is 8; estimatedCount and estimatedErrorRate use the split-block
 * formulas of Go's bloom.BlockedFilter.
 *
 * parquetBitset() is what a Parquet file stores for a column whose values
 * are the keys, and fromParquet() reads the bitset a Parquet writer made.
 * Go's bloom.BlockedFilter reads and writes the same bytes.
 *
 * - Works in node: yes. Works in browser: yes. Works in Cloudflare Workers: yes.
 */
export interface BlockedBloomFilter extends Filter {}
export class BlockedBloomFilter {
  /**
   * @throws {RangeError} when capacity is not an integer ≥ 1, errorRate is not in (0, 1),
   *   blocks is not an integer from 1 to 2^24, the filter would exceed MAX_BITS, or with
   *   forParquet, 128 MiB; {TypeError} when an option is not a number (forParquet: a
   *   boolean), or for { bits, hashes }.
   * @throws {Error} with code "ERR_NOT_INITIALIZED" before init().
   */
  constructor(options: BlockedCapacityOptions | BlockedSizeOptions);
  /**
   * Loads a split-block filter written by toBytes() or by Go's MarshalBinary.
   * @throws {Error} with code ERR_TRUNCATED, ERR_CORRUPT, ERR_CHECKSUM, ERR_NOT_FILTER,
   *   ERR_VERSION, ERR_KIND or ERR_TOO_LARGE.
   */
  static fromBytes(bytes: Uint8Array | ArrayBuffer | ArrayBufferView, options?: FromBytesOptions): BlockedBloomFilter;
  /**
   * A filter whose bits are a copy of a Parquet split-block bitset (the bytes
   * after the BloomFilterHeader in a Parquet file), as Go's
   * bloom.BlockedFromParquet. count is estimated from the bits; capacity and
   * errorRate are 0 (unknown).
   * @throws {RangeError} with code "ERR_ARG" when the length is not a positive multiple of 32, or is
   *   over 128 MiB (Go's MaxParquetBytes: Arrow's limit, the most a Parquet reader takes).
   * @throws {Error} with code "ERR_TOO_LARGE" when it has more than maxBits bits, before anything is copied.
   */
  static fromParquet(
    bitset: Uint8Array | ArrayBuffer | ArrayBufferView,
    options?: FromBytesOptions,
  ): BlockedBloomFilter;
  /**
   * The eight bit positions of key, one in each 32-bit word of its block, as
   * indexes into the bitset read as little-endian bytes: 256·block + 32·word + bit.
   */
  positions(key: Key): number[];
  /** The number of 256-bit blocks: bits / 256. */
  readonly blocks: number;
  /** Adds every key of other. @throws {Error} code "ERR_INCOMPATIBLE" when the numbers of blocks differ. */
  union(other: BlockedBloomFilter): void;
  /** Keeps only the bits also set in other. @throws {Error} code "ERR_INCOMPATIBLE". */
  intersect(other: BlockedBloomFilter): void;
  /** Whether other has the same number of blocks and the same bits. */
  equals(other: BlockedBloomFilter): boolean;
  /**
   * The bitset as a Parquet file stores it after its BloomFilterHeader
   * (numBytes = length, algorithm BLOCK, hash XXHASH, compression
   * UNCOMPRESSED): the blocks in order, each as eight little-endian 32-bit
   * words; 32 · blocks bytes.
   */
  parquetBitset(): Uint8Array<ArrayBuffer>;
}

/** Options of `new ShardedBloomFilter`: the parameters the Worker takes for a filter. */
export interface ShardedOptions extends CapacityOptions {
  /** The shards, 2 to 65,536 (a filter of one shard is a BloomFilter). */
  shards: number;
}

/**
 * A filter split into shards, as the edgebloom Worker keeps one and as its
 * snapshot holds it: each key lives in exactly one shard, which the router
 * picks. Every getter of a BloomFilter, over all shards and equal to the field
 * of stats() of the same name: bits, count, setBits, estimatedCount, capacity
 * and byteLength are sums; hashes and errorRate the shards' (a key probes one
 * shard); estimatedErrorRate the shards' mean; fillRatio setBits / bits.
 * Batches are routed in the engine, one crossing a group of keys as for one
 * filter.
 */
export interface ShardedBloomFilter extends Omit<Filter, 'kind' | 'stats'> {}
export class ShardedBloomFilter {
  /**
   * A new, empty filter of the Worker's shards: the router of `shards`
   * shards, and `shards` classic filters of capacity ceil(capacity / shards)
   * at errorRate, so that after the same keys its toBytes() is byte for byte
   * the Worker's snapshot of a filter made with the same parameters.
   * @throws {RangeError} when capacity is not an integer ≥ 1, errorRate is not
   *   in (0, 1) or shards is not an integer from 2 to 65,536; {TypeError} when
   *   an option is not a number; ERR_TOO_LARGE past the memory budget.
   */
  constructor(options: ShardedOptions);
  /**
   * Loads a sharded container; maxBits bounds each shard (as Go's snapshot.LoadSharded does).
   * @throws {Error} with code ERR_TRUNCATED, ERR_CORRUPT, ERR_VERSION, ERR_NOT_FILTER,
   *   ERR_CHECKSUM or ERR_TOO_LARGE.
   */
  static fromBytes(bytes: Uint8Array | ArrayBuffer | ArrayBufferView, options?: FromBytesOptions): ShardedBloomFilter;
  /** The number of shards. */
  readonly shards: number;
  readonly kind: 'sharded';
  /** Shard i, for inspection; it stays owned by this filter (freeing it makes this filter throw ERR_FREED). */
  shard(i: number): BloomFilter;
  /** Statistics over all shards (kind "sharded"; layers is the shard count): the getters' values. */
  stats(): Omit<FilterStats, 'kind'> & { kind: 'sharded' };
}

/**
 * Applies a delta to a local copy of a service filter and returns the cursor
 * of what the copy holds after it. The copy is a BloomFilter (a one-shard
 * filter) or ShardedBloomFilter loaded from the service's
 * `GET /v1/filters/{name}/changes` (or `/snapshot`) and holding what `cursor`
 * names (that answer's `X-Edgebloom-Cursor`); `delta` is the body of
 * `GET /v1/filters/{name}/changes?since=CURSOR` answered with
 * `X-Edgebloom-Format: delta`. The returned cursor equals that answer's
 * `X-Edgebloom-Cursor`. A shard whose changes the service no longer holds,
 * or whose changes would take more bytes than half the shard, comes whole
 * inside the delta and replaces the copy's shard (the answer's
 * `X-Edgebloom-Whole-Shards` names them). Format: docs/format.md, "Deltas".
 *
 * Works in node, browser and Cloudflare Workers: yes (pure JS over
 * `applyChanges` and `writeBytes`; a shard that comes whole is checked by
 * loading it once in the engine).
 *
 * @throws {Error} changing nothing, with code ERR_TRUNCATED, ERR_NOT_FILTER,
 *   ERR_VERSION, ERR_KIND, ERR_CORRUPT or ERR_CHECKSUM for a malformed delta;
 *   ERR_INCOMPATIBLE for a delta of another filter (kind, bits, hashes, seed
 *   or shard count); ERR_GENERATION for one of another generation or shard
 *   storage (load the snapshot again); ERR_GAP for one that starts elsewhere
 *   than the copy's position; ERR_ARG for a cursor that is no cursor.
 */
export function applyDelta(
  filter: BloomFilter | ShardedBloomFilter,
  delta: Uint8Array | ArrayBuffer,
  cursor: string,
): string;

/**
 * Loads a filter of any kind, or a Worker's snapshot (a sharded container,
 * as a ShardedBloomFilter), from bytes in the documented formats: a
 * Uint8Array, an ArrayBuffer (what fetch's arrayBuffer() and wrangler's Data
 * imports give) or any typed array.
 */
export function fromBytes(
  bytes: Uint8Array | ArrayBuffer | ArrayBufferView,
  options?: FromBytesOptions,
):
  BloomFilter | CountingBloomFilter | ScalableBloomFilter | WindowBloomFilter | BlockedBloomFilter | ShardedBloomFilter;

/**
 * Loads what fromBytes loads, from a Blob (what IndexedDB and
 * `response.blob()` give), a Response or a ReadableStream of Uint8Array
 * chunks, as the bytes arrive: each header is checked as it arrives, and a
 * classic, counting or split-block payload (every shard of a sharded
 * container) is copied chunk by chunk straight into the filter's memory in
 * the engine, without the whole input in a JS buffer. It rejects with the
 * error fromBytes throws for the same bytes (a stream that ends early:
 * ERR_TRUNCATED), or with the error the stream itself failed with, and
 * leaves nothing in the engine then. Loads of one engine run one after
 * another.
 */
export function fromStream(
  source: Blob | Response | ReadableStream<Uint8Array>,
  options?: FromBytesOptions,
): Promise<
  BloomFilter | CountingBloomFilter | ScalableBloomFilter | WindowBloomFilter | BlockedBloomFilter | ShardedBloomFilter
>;

/**
 * The bits m and hashes k for capacity keys at errorRate, as Go's bloom.Optimal:
 * m = ceil(-n·ln p / ln²2), k = max(1, round(ln 2 · m / n)). Works before init().
 */
export function optimal(capacity: number, errorRate: number): { bits: number; hashes: number };

/** The expected false-positive rate (1 - e^(-k·n/m))^k after count keys. Works before init(). */
export function estimateFPR(bits: number, hashes: number, count: number): number;

/**
 * The blocks of the split-block filter `new BlockedBloomFilter({ capacity,
 * errorRate })` makes, as Go's bloom.OptimalBlocks: the fewest 256-bit blocks
 * whose expected rate after capacity keys is at most 0.9 · errorRate. Needs init().
 * @throws {RangeError} for a capacity that is not an integer ≥ 1 or a rate outside (0, 1).
 */
export function optimalBlocks(capacity: number, errorRate: number): number;

/**
 * The expected false-positive rate of a split-block filter of `blocks` blocks
 * after count keys, as Go's bloom.EstimateBlockedFPR:
 * Σ_j Poisson(j; count/blocks) · (1 − (31/32)^j)^8. Needs init().
 */
export function estimateBlockedFPR(blocks: number, count: number): number;

/** Options of canonicalURL. The defaults are those of Go's `urlkey.Options{}`. */
export interface CanonicalURLOptions {
  /** Keep tracking parameters (utm_*, gclid, fbclid, msclkid, ...), which are dropped by default. */
  keepTracking?: boolean;
}

/**
 * The canonical form of an absolute http, https, ws or wss URL, so that two
 * spellings of one URL make one key: the same string Go's
 * `urlkey.Canonical` returns (lower-case scheme and host, IDNA host in
 * punycode, default port removed, dot segments resolved, percent-encoding
 * normalized, query parameters sorted, tracking parameters and the fragment
 * dropped; the rules are in urlkey's package documentation). Plain JS on
 * the runtime's WHATWG URL parser; it does not use the wasm engine.
 *
 * Throws a TypeError whose message starts with "urlkey: " for input Go
 * refuses too (other schemes, no host, bad ports or addresses, control
 * characters, ...).
 *
 * - Works before init(): yes.
 * - Works in node: yes. Works in browser: yes. Works in Cloudflare Workers: yes.
 *
 * @example canonicalURL('HTTP://Bücher.Example:80/a/../b?z=1&utm_source=x&a=2#top')
 *   // 'http://xn--bcher-kva.example/b?a=2&z=1'
 */
export function canonicalURL(url: string, options?: CanonicalURLOptions): string;
