// A shard's storage in its Durable Object's SQLite: the filter as chunks,
// plus an append-only log of what each add changed since the chunks were
// last rebuilt, plus the history of what the log held before (history.js).
// See DESIGN.md, "Persistence: chunks and the log".
//
//   chunks (i, data, crc)   chunk -1: the 64-byte header and the 8-byte
//                           checksum of the filter's encoding; chunks 0..n-1:
//                           its payload, CHUNK_BYTES each
//   log (seq, data, crc)    one row an add that set bits: the filter's count
//                           after it (uint64) and the positions of the bits
//                           it set (uint32 each), little-endian; seq counts
//                           1, 2, 3, ... and never goes back within an epoch
//   history (...)           one segment a compaction (history.js)
//   logstate (k, v)         'epoch': a random number drawn when the filter's
//                           storage is made; 'folded': the last seq the
//                           chunks hold
//
// compact() keeps the rows it folds as the log's tail until the next one,
// so that a copy that syncs between two compactions gets exactly the bits
// it lacks. The history lets a copy that fell behind past the tail get the
// bits it lacks as a delta (changes()).
//
// Every row carries a CRC-32 of its data. An add writes one log row,
// proportional to what it set, in the transaction of its reply. compact()
// writes the chunks the log touched and the header chunk from the filter in
// memory, folds the log into a history segment and drops the tail before
// it, in one transaction. load() rebuilds the filter chunk by chunk, checks
// the whole encoding's checksum, then replays the log past 'folded'; no
// step holds a second copy of the filter.

import { crc32 } from '../../js/crc32.js';
import { encodeRice } from '../../js/rice.js';
import { History, unique } from './history.js';
import { HEADER_SIZE as HEADER_BYTES, CHECKSUM_SIZE as TRAILER_BYTES, DELTA_RECORD_HEADER } from '../../js/abi.js';
import {
  LOG_COUNT_BYTES as COUNT_BYTES,
  LOG_POSITION_BYTES,
  MAX_DELTA_BYTES,
  DELTA_PAYLOAD_SHARE,
  MAX_DELTA_POSITIONS,
} from './abi.js';

const CHUNK_BYTES = 1 << 20;
// Durable Object storage refuses values (SQLite rows) over 2 MB, and local
// emulation does not: the limit is checked here so that a change of
// CHUNK_BYTES cannot pass the tests and fail in production.
const MAX_VALUE_BYTES = 2_000_000;
// Positions in one log row: an add that set more spans several rows.
const POSITIONS_PER_ROW = Math.floor((MAX_VALUE_BYTES - COUNT_BYTES) / LOG_POSITION_BYTES);
export { crc32 };

/** The payload of a filter's encoding: its bytes but the header and the checksum. */
export function payloadBytes(filter) {
  return filter.byteLength - HEADER_BYTES - TRAILER_BYTES;
}

/**
 * The log may grow to this many bytes before the chunks are rebuilt from
 * it: a quarter of the payload (at least 256 KiB). A rebuild writes at most
 * the payload, so the bytes written stay within five times the bytes
 * logged, and a load reads at most 1.25 times the payload.
 */
export function logLimit(payload) {
  return Math.max(256 << 10, payload / 4);
}

/**
 * How many bytes a delta record's body (the Rice-coded positions) may
 * take: at most MAX_DELTA_BYTES and 1/DELTA_PAYLOAD_SHARE of the payload
 * (Go's abi.DeltaLimit); past it the shard whole is the better deal, or
 * near it.
 */
export function deltaLimit(filter) {
  return Math.min(MAX_DELTA_BYTES, Math.floor(payloadBytes(filter) / DELTA_PAYLOAD_SHARE));
}

// One shard record of a delta (docs/format.md, "Deltas"): the header, then
// body, n positions Rice-coded (encodeRice).
export function deltaRecord(shard, epoch, from, to, count, n, body) {
  const out = new Uint8Array(DELTA_RECORD_HEADER + body.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, shard, true);
  view.setUint32(4, epoch, true);
  view.setBigUint64(8, BigInt(from), true);
  view.setBigUint64(16, BigInt(to), true);
  view.setBigUint64(24, BigInt(count), true);
  view.setUint32(32, n, true);
  view.setUint32(36, body.length, true);
  out.set(body, DELTA_RECORD_HEADER);
  return out;
}

/** A shard's chunks and log in a Durable Object's SQLite (ctx.storage). */
export class Store {
  constructor(storage) {
    this.storage = storage;
    this.sql = storage.sql;
    // Bytes in the log, and the chunks its positions fall in: what the next
    // compact() writes. Known after create() or load().
    this.logBytes = 0;
    this.dirty = new Set();
    // The log's position (the last seq written), the last seq the chunks
    // hold, and the epoch of the storage. Known after create() or load().
    this.seq = 0;
    this.folded = 0;
    this.epoch = 0;
    // Rows and bytes written since the object started, for the tests and
    // the benchmark.
    this.chunkWrites = 0;
    this.logWrites = 0;
    this.bytesWritten = 0;
    this.sql.exec(
      'CREATE TABLE IF NOT EXISTS chunks (i INTEGER PRIMARY KEY, data BLOB NOT NULL, crc INTEGER NOT NULL)',
    );
    this.sql.exec('CREATE TABLE IF NOT EXISTS log (seq INTEGER PRIMARY KEY, data BLOB NOT NULL, crc INTEGER NOT NULL)');
    this.sql.exec('CREATE TABLE IF NOT EXISTS logstate (k TEXT PRIMARY KEY, v INTEGER NOT NULL)');
    this.history = new History(this.sql, MAX_VALUE_BYTES);
  }

  setState(k, v) {
    this.sql.exec('INSERT OR REPLACE INTO logstate (k, v) VALUES (?, ?)', k, v);
  }

  /** Drops the chunks and the log. */
  clear() {
    this.sql.exec('DELETE FROM chunks');
    this.sql.exec('DELETE FROM log');
    this.sql.exec('DELETE FROM logstate');
    this.history.clear();
    this.logBytes = 0;
    this.dirty.clear();
    this.seq = this.folded = this.epoch = 0;
  }

  /** Writes every chunk of a new filter (in the caller's transaction). */
  create(filter) {
    this.clear();
    const n = Math.ceil(payloadBytes(filter) / CHUNK_BYTES);
    for (let i = 0; i < n; i++) this.dirty.add(i);
    this.writeChunks(filter);
    this.dirty.clear();
    this.newEpoch();
  }

  // newEpoch draws the storage's epoch, from 1: 0 is what a cursor of no
  // storage holds.
  newEpoch() {
    this.epoch = 1 + (crypto.getRandomValues(new Uint32Array(1))[0] % 0xfffffffe);
    this.setState('epoch', this.epoch);
  }

  /**
   * Appends what an add changed (addManyChanges' result): the bytes it
   * writes grow with the positions, not with the filter.
   */
  append(changes) {
    const { changed, count } = changes;
    if (changed.length === 0) return;
    for (let at = 0; at < changed.length; at += POSITIONS_PER_ROW) {
      const part = changed.subarray(at, at + POSITIONS_PER_ROW);
      const data = new Uint8Array(COUNT_BYTES + 4 * part.length);
      const view = new DataView(data.buffer);
      view.setBigUint64(0, BigInt(count), true);
      for (let i = 0; i < part.length; i++) {
        view.setUint32(COUNT_BYTES + 4 * i, part[i], true);
        this.dirty.add(Math.floor(part[i] / 8 / CHUNK_BYTES));
      }
      this.sql.exec('INSERT INTO log (seq, data, crc) VALUES (?, ?, ?)', this.seq + 1, data.buffer, crc32(data));
      this.seq++;
      this.logWrites++;
      this.bytesWritten += data.length;
      this.logBytes += data.length;
    }
  }

  /**
   * Rebuilds the chunks the log touched, and the header chunk, from filter
   * (which holds the chunks and the whole log), folds the log into a
   * history segment and keeps its rows as the tail, dropping the tail
   * before, in one transaction: a crash leaves
   * either the old chunks and the log or the new chunks and no log, and
   * both load to the same filter. Before it commits, pause (a test hook)
   * runs.
   */
  compact(filter, pause) {
    this.storage.transactionSync(() => {
      this.writeChunks(filter);
      this.fold(payloadBytes(filter));
      // The rows this compaction folds stay as the tail: a copy whose
      // position falls among them gets exactly the bits it lacks, not the
      // whole newest segment.
      this.sql.exec('DELETE FROM log WHERE seq <= ?', this.folded);
      this.setState('folded', this.seq);
      pause?.();
    });
    this.folded = this.seq;
    this.logBytes = 0;
    this.dirty.clear();
  }

  // fold writes the log rows past 'folded' as a history segment
  // (History.fold). A log of more than MAX_DELTA_POSITIONS positions, or a
  // damaged row, ends the history: no delta reaches past it.
  fold(payload) {
    if (this.seq === this.folded) return;
    const live = this.logPositions(this.folded, this.seq);
    if (!live) {
      this.history.clear();
      return;
    }
    this.bytesWritten += this.history.fold(live, this.folded, this.seq, payload);
  }

  // logPositions returns the positions the log rows (since, to] set (as
  // logged: unsorted, perhaps more than once) and the count after row to,
  // or null when the log does not hold every row of them, a row is
  // damaged, or they are more than MAX_DELTA_POSITIONS (checked before
  // anything is allocated).
  logPositions(since, to) {
    const [{ first, rows, bytes }] = this.sql
      .exec(
        'SELECT min(seq) AS first, count(*) AS rows, sum(length(data)) AS bytes FROM log WHERE seq > ? AND seq <= ?',
        since,
        to,
      )
      .toArray();
    if (first !== since + 1 || rows !== to - since) return null;
    const total = (bytes - COUNT_BYTES * rows) / LOG_POSITION_BYTES;
    if (!Number.isInteger(total) || total > MAX_DELTA_POSITIONS) return null;
    const positions = new Uint32Array(total);
    let n = 0;
    let count;
    for (const row of this.sql.exec('SELECT data, crc FROM log WHERE seq > ? AND seq <= ? ORDER BY seq', since, to)) {
      const data = new Uint8Array(row.data);
      if (crc32(data) !== row.crc || (data.length - COUNT_BYTES) % LOG_POSITION_BYTES !== 0) return null;
      const view = new DataView(data.buffer);
      // Every row of an add holds the count after the whole add.
      count = Number(view.getBigUint64(0, true));
      for (let i = COUNT_BYTES; i < data.length && n < total; i += LOG_POSITION_BYTES)
        positions[n++] = view.getUint32(i, true);
    }
    return n === total ? { positions, count } : null;
  }

  /**
   * The body of a delta record of what the shard set from position since
   * (exclusive) to position to (inclusive, at most this.seq): {n, body,
   * count}, the positions set, Rice-coded (encodeRice), and the count at
   * to; {n: 0} when since is to. Past the log it takes the history's
   * segments from the one that holds since on, whose positions before
   * since the copy has already (setting them again changes nothing), to
   * the one that holds to: a bounded to inside a segment (a checkpoint's)
   * gets the bits and the count of the segment's end, later than to, as a
   * checkpoint's snapshot may be. Null when neither
   * holds all of it (another epoch is the caller's to check), when it is
   * more than MAX_DELTA_POSITIONS positions, or when its body would pass
   * maxBytes: the shard whole is the better deal then.
   */
  changes(since, maxBytes, to = this.seq) {
    if (since === to) return { n: 0 };
    if (since > to || to > this.seq) return null;
    let segments = [];
    let from = since;
    let total = 0;
    let count;
    // The log holds its rows from first on: the tail, then the rows past 'folded'.
    const [{ first }] = this.sql.exec('SELECT min(seq) AS first FROM log').toArray();
    if (since < this.folded && since + 1 < (first ?? this.seq + 1)) {
      const run = this.history.run(since, Math.min(to, this.folded));
      if (!run) return null;
      ({ segments, from, total, count } = run);
    }
    let live = null;
    if (to > from && (segments.length === 0 || from >= this.folded)) {
      live = this.logPositions(from, to);
      if (!live) return null;
      total += live.positions.length;
      count = live.count;
    }
    if (total > MAX_DELTA_POSITIONS) return null;
    let all = live?.positions;
    if (segments.length > 0) {
      all = new Uint32Array(total);
      let at = 0;
      for (const g of segments) {
        if (!this.history.positions(g.seq, all.subarray(at, at + g.n))) return null;
        at += g.n;
      }
      if (live) all.set(live.positions, at);
    }
    const positions = unique(all);
    const body = encodeRice(positions);
    return body.length > maxBytes ? null : { n: positions.length, body, count };
  }

  // writeChunks writes the dirty chunks and the header chunk from filter.
  writeChunks(filter) {
    const size = filter.byteLength;
    const payload = payloadBytes(filter);
    for (const i of [...this.dirty].sort((a, b) => a - b)) {
      const start = HEADER_BYTES + i * CHUNK_BYTES;
      this.putChunk(i, filter.readBytes(start, start + Math.min(CHUNK_BYTES, payload - i * CHUNK_BYTES)));
    }
    const head = new Uint8Array(HEADER_BYTES + TRAILER_BYTES);
    head.set(filter.readBytes(0, HEADER_BYTES));
    head.set(filter.readBytes(size - TRAILER_BYTES, size), HEADER_BYTES);
    this.putChunk(-1, head);
  }

  putChunk(i, data) {
    if (data.byteLength > MAX_VALUE_BYTES) {
      throw new Error(`shard: chunk ${i} is ${data.byteLength} bytes, over the ${MAX_VALUE_BYTES}-byte value limit`);
    }
    this.chunkWrites++;
    this.bytesWritten += data.byteLength;
    this.sql.exec('INSERT OR REPLACE INTO chunks (i, data, crc) VALUES (?, ?, ?)', i, data.buffer, crc32(data));
  }

  /**
   * Loads the filter into filter, a new empty one made from the shard's
   * parameters: chunk by chunk, then the whole encoding checked by its
   * checksum, then the log replayed, each row checked by its CRC-32. It
   * returns null when all is well, or what is damaged.
   *
   * The chunks' CRC-32s are read only when the checksum fails, to name the
   * damaged chunk: the checksum (XXH64, in the engine) covers every byte
   * they cover, in a fraction of the time (worker/DESIGN.md, "Capacity and
   * memory", measured by bench/shard-cost.js), and a shard that gave its
   * filter back to make room for another loads it again on its next
   * request, so a load is on the path of requests.
   */
  load(filter) {
    const size = filter.byteLength;
    const payload = payloadBytes(filter);
    const n = Math.ceil(payload / CHUNK_BYTES);
    const heads = this.sql.exec('SELECT data, crc FROM chunks WHERE i = -1').toArray();
    if (heads.length === 0) return 'the header chunk is missing';
    const head = new Uint8Array(heads[0].data);
    if (crc32(head) !== heads[0].crc)
      return `chunk -1 failed its CRC-32 check (stored ${heads[0].crc}, computed ${crc32(head)})`;
    if (head.length !== HEADER_BYTES + TRAILER_BYTES) return 'the header chunk has the wrong size';
    // The stored header must be the one these parameters make, but for
    // the count (bytes 32 to 40).
    const want = filter.readBytes(0, HEADER_BYTES);
    for (let i = 0; i < HEADER_BYTES; i++) {
      if ((i < 32 || i >= 40) && head[i] !== want[i])
        return `the header chunk does not match the shard's parameters (byte ${i})`;
    }
    const count = Number(new DataView(head.buffer).getBigUint64(32, true));
    let seen = 0;
    // Row by row: no copy of the whole payload is ever held.
    for (const row of this.sql.exec('SELECT i, data FROM chunks WHERE i >= 0 ORDER BY i')) {
      const data = new Uint8Array(row.data);
      if (row.i >= n || data.length !== Math.min(CHUNK_BYTES, payload - row.i * CHUNK_BYTES))
        return `chunk ${row.i} has the wrong size`;
      try {
        filter.writeBytes(HEADER_BYTES + row.i * CHUNK_BYTES, data);
      } catch (err) {
        // Only a refusal of these bytes is damage; a stopped engine or its
        // memory budget is not, and goes to the caller.
        if (err?.code !== 'ERR_ARG' && err?.code !== 'ERR_CORRUPT') throw err;
        return `chunk ${row.i} does not load (${err.code}: ${err.message})`;
      }
      seen++;
    }
    if (seen !== n) return `${seen} payload chunks stored, ${n} expected`;
    filter.applyChanges({ changed: [], count });
    const sum = filter.readBytes(size - TRAILER_BYTES, size);
    if (sum.some((b, i) => b !== head[HEADER_BYTES + i])) {
      for (const row of this.sql.exec('SELECT i, data, crc FROM chunks WHERE i >= 0 ORDER BY i')) {
        const crc = crc32(new Uint8Array(row.data));
        if (crc !== row.crc) return `chunk ${row.i} failed its CRC-32 check (stored ${row.crc}, computed ${crc})`;
      }
      return 'the reassembled filter fails its checks (ERR_CHECKSUM: bloom: checksum mismatch)';
    }
    this.logBytes = 0;
    this.dirty.clear();
    const state = Object.fromEntries(
      this.sql
        .exec('SELECT k, v FROM logstate')
        .toArray()
        .map((r) => [r.k, r.v]),
    );
    this.folded = state.folded ?? 0;
    this.epoch = state.epoch ?? 0;
    // Storage made before epochs draws one now.
    if (!this.epoch) this.newEpoch();
    const [{ last }] = this.sql.exec('SELECT max(seq) AS last FROM log').toArray();
    this.seq = Math.max(this.folded, last ?? 0);
    for (const row of this.sql.exec('SELECT seq, data, crc FROM log WHERE seq > ? ORDER BY seq', this.folded)) {
      const data = new Uint8Array(row.data);
      const crc = crc32(data);
      if (crc !== row.crc) return `log row ${row.seq} failed its CRC-32 check (stored ${row.crc}, computed ${crc})`;
      if (data.length < COUNT_BYTES || (data.length - COUNT_BYTES) % 4 !== 0)
        return `log row ${row.seq} has the wrong size`;
      const view = new DataView(data.buffer);
      const changed = new Uint32Array((data.length - COUNT_BYTES) / 4);
      for (let i = 0; i < changed.length; i++) {
        changed[i] = view.getUint32(COUNT_BYTES + 4 * i, true);
        this.dirty.add(Math.floor(changed[i] / 8 / CHUNK_BYTES));
      }
      try {
        filter.applyChanges({ changed, count: Number(view.getBigUint64(0, true)) });
      } catch (err) {
        if (err.code !== 'ERR_ARG') throw err;
        return `log row ${row.seq} does not apply (${err.message})`;
      }
      this.logBytes += data.length;
    }
    return null;
  }

  /** The writes so far, and the log's size. */
  counters() {
    return {
      chunkWrites: this.chunkWrites,
      logWrites: this.logWrites,
      bytesWritten: this.bytesWritten,
      logBytes: this.logBytes,
    };
  }

  /** What the tests look at: the rows and the writes so far. */
  info() {
    return {
      ...this.counters(),
      chunks: this.sql.exec('SELECT i, length(data) AS bytes, crc FROM chunks ORDER BY i').toArray(),
      log: this.sql
        .exec('SELECT seq, length(data) AS bytes FROM log WHERE seq > ? ORDER BY seq', this.folded)
        .toArray(),
      tail: this.sql
        .exec('SELECT seq, length(data) AS bytes FROM log WHERE seq <= ? ORDER BY seq', this.folded)
        .toArray(),
      history: this.history.info(),
      seq: this.seq,
      epoch: this.epoch,
    };
  }
}
