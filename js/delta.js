// Deltas: the bits a service filter set since a copy's cursor (the edge
// service's GET /v1/filters/{name}/changes?since=CURSOR), applied to a
// local copy loaded from its snapshot. The format is in docs/format.md
// ("Deltas") and Go's snapshot/delta.go; the apply runs here in JS, through
// applyChanges, so the engine (the wasm, with its gzip budget) does not grow.

import {
  DELTA_MAGIC,
  DELTA_VERSION,
  DELTA_VERSION_V1,
  DELTA_CODING_RICE,
  DELTA_CODING_SHARD,
  MAX_RICE_BITS,
  CHECKSUM_SIZE,
  DELTA_HEADER as HEADER,
  DELTA_RECORD_HEADER as RECORD,
  DELTA_TRAILER as TRAILER,
  DELTA_AT_VERSION,
  DELTA_AT_KIND,
  DELTA_AT_RESERVED,
  DELTA_AT_GENERATION,
  DELTA_AT_SEED,
  DELTA_AT_BITS,
  DELTA_AT_HASHES,
  DELTA_AT_SHARDS,
  DELTA_AT_RECORDS,
  DELTA_AT_RESERVED2,
  DELTA_RECORD_AT_SHARD,
  DELTA_RECORD_AT_EPOCH,
  DELTA_RECORD_AT_FROM,
  DELTA_RECORD_AT_TO,
  DELTA_RECORD_AT_COUNT,
  DELTA_RECORD_AT_POSITIONS,
  DELTA_RECORD_AT_BYTES,
  RECORD_AT_SEED,
  HEADER_SIZE,
  MAX_SHARDS,
  MAX_DELTA_BITS,
  MAX_HASHES,
  MAX_CURSOR_BYTES,
  CURSOR_VERSION,
  MAX_COUNT_PER_BIT,
  KIND_CLASSIC,
} from './abi.js';
import { codedError } from './errors.js';
import { crc32 } from './crc32.js';
import { BloomFilter } from './classic.js';
import { ShardedBloomFilter } from './sharded.js';
import { decodeRice } from './rice.js';

const MAGIC = [...DELTA_MAGIC].map((c) => c.charCodeAt(0));

const fail = (code, message) => codedError(Error, code, `edgebloom: applyDelta: ${message}`);

// A reader of unsigned LEB128 varints below 2^53 from bytes[at, end).
function varints(bytes, at, end) {
  return () => {
    let v = 0;
    for (let scale = 1; at < end && scale <= 2 ** 49; scale *= 128) {
      const b = bytes[at++];
      v += (b & 0x7f) * scale;
      if (b < 0x80) return v;
    }
    return -1;
  };
}

function appendVarint(out, v) {
  while (v >= 0x80) {
    out.push((v % 128) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
}

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** Reads the service's X-Edgebloom-Cursor token: {generation, shards: [{epoch, position}]}. */
export function parseCursor(token) {
  const bad = () =>
    fail(
      'ERR_ARG',
      `"cursor" must be the X-Edgebloom-Cursor token the service sent, got ${String(token).slice(0, 80)}`,
    );
  if (
    typeof token !== 'string' ||
    token.length === 0 ||
    token.length > MAX_CURSOR_BYTES ||
    !/^[A-Za-z0-9_-]+$/.test(token)
  )
    throw bad();
  // One spelling, as Go's base64.RawURLEncoding.Strict(): no bits set after
  // the last byte (a last character of a 2- or 3-character group carries 4
  // or 2 of them).
  const tail = token.length % 4;
  const last = B64URL.indexOf(token[token.length - 1]);
  if (tail === 1 || (tail === 2 && last & 0xf) || (tail === 3 && last & 0x3)) throw bad();
  let bin;
  try {
    bin = atob(token.replace(/-/g, '+').replace(/_/g, '/'));
  } catch {
    throw bad();
  }
  const bytes = Uint8Array.from(bin, (ch) => ch.charCodeAt(0));
  if (bytes[0] !== CURSOR_VERSION) throw bad();
  const next = varints(bytes, 1, bytes.length);
  const generation = next();
  const s = next();
  if (generation < 0 || s < 1 || s > (bytes.length - 1) / 2) throw bad();
  const shards = [];
  for (let i = 0; i < s; i++) {
    const epoch = next();
    const position = next();
    if (epoch < 0 || epoch > 0xffffffff || position < 0) throw bad();
    shards.push({ epoch, position });
  }
  if (next() !== -1) throw bad();
  return { generation, shards };
}

/** The token of a cursor, as the service writes it (Go's snapshot.Cursor.Text). */
export function formatCursor({ generation, shards }) {
  const out = [CURSOR_VERSION];
  appendVarint(out, generation);
  appendVarint(out, shards.length);
  for (const { epoch, position } of shards) {
    appendVarint(out, epoch);
    appendVarint(out, position);
  }
  return btoa(String.fromCharCode(...out))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

// decode checks a delta's structure and returns its records, positions as
// Uint32Arrays; nothing is allocated before the lengths are checked.
function decode(bytes) {
  if (bytes.length < HEADER + TRAILER) throw fail('ERR_TRUNCATED', `${bytes.length} bytes is shorter than a delta`);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const u64 = (at) => {
    const v = dv.getBigUint64(at, true);
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw fail('ERR_CORRUPT', `a field at byte ${at} is over 2^53`);
    return Number(v);
  };
  if (!MAGIC.every((b, i) => bytes[i] === b)) throw fail('ERR_NOT_FILTER', 'not a delta (magic "EBDL")');
  const version = bytes[DELTA_AT_VERSION];
  if (version !== DELTA_VERSION && version !== DELTA_VERSION_V1) throw fail('ERR_VERSION', `delta version ${version}`);
  const kind = bytes[DELTA_AT_KIND];
  if (kind !== KIND_CLASSIC) throw fail('ERR_KIND', `a delta of kind ${kind}`);
  const d = {
    generation: u64(DELTA_AT_GENERATION),
    seed: dv.getBigUint64(DELTA_AT_SEED, true),
    bits: u64(DELTA_AT_BITS),
    hashes: dv.getUint32(DELTA_AT_HASHES, true),
    shards: dv.getUint32(DELTA_AT_SHARDS, true),
  };
  const r = dv.getUint32(DELTA_AT_RECORDS, true);
  if (dv.getUint16(DELTA_AT_RESERVED, true) !== 0 || dv.getUint32(DELTA_AT_RESERVED2, true) !== 0)
    throw fail('ERR_CORRUPT', 'reserved bytes set');
  if (d.bits < 1 || d.bits > MAX_DELTA_BITS || d.hashes < 1 || d.hashes > MAX_HASHES)
    throw fail('ERR_CORRUPT', `m = ${d.bits}, k = ${d.hashes}`);
  if (d.shards < 1 || d.shards > MAX_SHARDS || r > d.shards)
    throw fail('ERR_CORRUPT', `${r} records of ${d.shards} shards`);
  const end = bytes.length - TRAILER;
  let off = HEADER;
  for (let i = 0; i < r; i++) {
    if (end - off < RECORD) throw fail('ERR_TRUNCATED', 'a record runs past the end');
    const b = dv.getUint32(off + DELTA_RECORD_AT_BYTES, true);
    if (end - off - RECORD < b) throw fail('ERR_TRUNCATED', "a record's positions run past the end");
    off += RECORD + b;
  }
  if (off !== end) throw fail('ERR_CORRUPT', `${end - off} bytes after the last record`);
  const sum = crc32(bytes.subarray(0, end));
  if (sum !== dv.getUint32(end, true)) throw fail('ERR_CHECKSUM', 'the CRC-32 does not match');
  d.records = [];
  off = HEADER;
  for (let i = 0; i < r; i++) {
    const rec = {
      shard: dv.getUint32(off + DELTA_RECORD_AT_SHARD, true),
      epoch: dv.getUint32(off + DELTA_RECORD_AT_EPOCH, true),
      from: u64(off + DELTA_RECORD_AT_FROM),
      to: u64(off + DELTA_RECORD_AT_TO),
      count: u64(off + DELTA_RECORD_AT_COUNT),
    };
    const n = dv.getUint32(off + DELTA_RECORD_AT_POSITIONS, true);
    const b = dv.getUint32(off + DELTA_RECORD_AT_BYTES, true);
    const prev = d.records[i - 1];
    if (rec.shard >= d.shards || (prev && rec.shard <= prev.shard))
      throw fail('ERR_CORRUPT', `record ${i} is of shard ${rec.shard}`);
    if (rec.count > MAX_COUNT_PER_BIT * d.bits) throw fail('ERR_CORRUPT', `record ${i} has count ${rec.count}`);
    const start = off + RECORD;
    if (version === DELTA_VERSION && b > 0 && bytes[start] === DELTA_CODING_SHARD) {
      if (n !== 0 || rec.from !== 0)
        throw fail('ERR_CORRUPT', `record ${i} carries its shard whole, with ${n} positions from ${rec.from}`);
      rec.whole = bytes.subarray(start + 1, start + b);
    } else {
      if (rec.to <= rec.from) throw fail('ERR_CORRUPT', `record ${i} goes from ${rec.from} to ${rec.to}`);
      rec.changed =
        version === DELTA_VERSION_V1
          ? varintPositions(bytes, start, b, n, d.bits, i)
          : ricePositions(bytes, start, b, n, d.bits, i);
    }
    off = start + b;
    d.records.push(rec);
  }
  return d;
}

// A version 2 record's positions: the coding byte, the Rice parameter,
// then the gaps.
function ricePositions(bytes, start, b, n, bits, i) {
  if (b < 2 || bytes[start] !== DELTA_CODING_RICE || bytes[start + 1] > MAX_RICE_BITS)
    throw fail('ERR_CORRUPT', `record ${i}: not a coding this version knows`);
  // Every gap takes a bit at least.
  if (n > 8 * (b - 2) || n > bits) throw fail('ERR_CORRUPT', `record ${i} has ${n} positions in ${b} bytes`);
  const out = new Uint32Array(n);
  if (!decodeRice(bytes, start + 2, start + b, bytes[start + 1], bits, out))
    throw fail('ERR_CORRUPT', `record ${i}: its positions are not ${n} Rice-coded gaps below m = ${bits}`);
  return out;
}

// A version 1 record's positions: LEB128 gaps.
function varintPositions(bytes, start, b, n, bits, i) {
  if (n > b || n > bits) throw fail('ERR_CORRUPT', `record ${i} has ${n} positions in ${b} bytes`);
  let at = start;
  const out = new Uint32Array(n);
  let p = 0;
  for (let j = 0; j < n; j++) {
    // Inline LEB128: this loop is the apply's cost.
    let v = 0;
    let scale = 1;
    let byte;
    do {
      if (at >= start + b || scale > 2 ** 28) throw fail('ERR_CORRUPT', `record ${i}: position ${j} is no varint`);
      byte = bytes[at++];
      v += (byte & 0x7f) * scale;
      scale *= 128;
    } while (byte >= 0x80);
    if (j > 0 && v === 0) throw fail('ERR_CORRUPT', `record ${i}: position ${j} repeats the one before`);
    p = j === 0 ? v : p + v;
    if (p >= bits) throw fail('ERR_CORRUPT', `record ${i}: position ${j} is ${p}, m is ${bits}`);
    out[j] = p;
  }
  if (at !== start + b) throw fail('ERR_CORRUPT', `record ${i}: bytes after its positions`);
  return out;
}

// checkWhole checks a record that carries its shard whole against the
// delta: a classic filter's encoding that loads (its checksum holds) with
// the delta's m, k and seed and the record's count. The filter it loads
// for the check is freed at once: the copy's shard takes the bytes.
function checkWhole(d, rec, i) {
  let f;
  try {
    f = BloomFilter.fromBytes(rec.whole);
  } catch (err) {
    if (err?.code === 'ERR_ENGINE_EXITED' || err?.code === 'ERR_TOO_LARGE') throw err;
    throw fail('ERR_CORRUPT', `record ${i}: its shard does not load (${err?.code}: ${err?.message})`);
  }
  try {
    const seed = new DataView(f.readBytes(0, HEADER_SIZE).buffer).getBigUint64(RECORD_AT_SEED, true);
    if (f.bits !== d.bits || f.hashes !== d.hashes || seed !== d.seed || f.count !== rec.count)
      throw fail(
        'ERR_CORRUPT',
        `record ${i}: its shard has m = ${f.bits}, k = ${f.hashes}, seed ${seed}, count ${f.count}`,
      );
  } finally {
    f.free();
  }
}

/**
 * Applies a delta (the body of GET /v1/filters/{name}/changes?since=CURSOR
 * answered with X-Edgebloom-Format: delta) to filter, the copy loaded from
 * the service's snapshot and holding what cursor names, and returns the
 * cursor of what it holds now (the answer's X-Edgebloom-Cursor). Refused,
 * changing nothing: a malformed delta (ERR_TRUNCATED, ERR_NOT_FILTER,
 * ERR_VERSION, ERR_KIND, ERR_CORRUPT, ERR_CHECKSUM); one of another filter
 * (ERR_INCOMPATIBLE); of another generation or shard storage
 * (ERR_GENERATION: load the snapshot again); one that starts elsewhere than
 * the copy's position (ERR_GAP). A record that carries its shard whole
 * (a shard whose changes would take more bytes than itself) replaces the
 * copy's shard, whatever its epoch and position.
 */
export function applyDelta(filter, bytes, cursor) {
  let shards;
  if (filter instanceof ShardedBloomFilter) shards = Array.from({ length: filter.shards }, (_, i) => filter.shard(i));
  else if (filter instanceof BloomFilter) shards = [filter];
  else throw new TypeError('edgebloom: applyDelta takes a BloomFilter or a ShardedBloomFilter');
  if (bytes instanceof ArrayBuffer) bytes = new Uint8Array(bytes);
  if (!(bytes instanceof Uint8Array))
    throw new TypeError('edgebloom: applyDelta: the delta must be a Uint8Array or ArrayBuffer');
  const at = parseCursor(cursor);
  const d = decode(bytes);
  // A record that carries its shard whole is part of the delta's form, as
  // in Go's DecodeDelta: its length, then the engine's checks, before the
  // delta is held against the copy.
  d.records.forEach((r, i) => {
    if (!r.whole) return;
    const size = HEADER_SIZE + 8 * Math.ceil(d.bits / 64) + CHECKSUM_SIZE;
    if (r.whole.length !== size)
      throw fail('ERR_CORRUPT', `record ${i} carries its shard whole in ${r.whole.length} bytes, not ${size}`);
    checkWhole(d, r, i);
  });
  if (at.shards.length !== shards.length)
    throw fail('ERR_ARG', `the cursor names ${at.shards.length} shards, the copy has ${shards.length}`);
  if (d.shards !== shards.length)
    throw fail('ERR_INCOMPATIBLE', `the delta is of a filter of ${d.shards} shards, the copy has ${shards.length}`);
  shards.forEach((f, i) => {
    const head = new DataView(f.readBytes(0, HEADER_SIZE).buffer);
    const [seed, bits, hashes] = [head.getBigUint64(RECORD_AT_SEED, true), f.bits, f.hashes];
    if (bits !== d.bits || hashes !== d.hashes || seed !== d.seed)
      throw fail(
        'ERR_INCOMPATIBLE',
        `the delta is of shards of m = ${d.bits}, k = ${d.hashes}, seed ${d.seed}; ` +
          `shard ${i} of the copy has m = ${bits}, k = ${hashes}, seed ${seed}`,
      );
  });
  if (d.generation !== at.generation)
    throw fail(
      'ERR_GENERATION',
      `the delta is of generation ${d.generation}, the copy of ${at.generation}: load the snapshot again`,
    );
  for (const r of d.records) {
    const { epoch, position } = at.shards[r.shard];
    if (r.whole) continue; // the shard whole, whatever the copy's holds
    if (r.epoch !== epoch)
      throw fail(
        'ERR_GENERATION',
        `shard ${r.shard}: the delta is of epoch ${r.epoch}, the copy of ${epoch}: load the snapshot again`,
      );
    if (r.from !== position)
      throw fail('ERR_GAP', `shard ${r.shard}: the delta starts at position ${r.from}, the copy is at ${position}`);
  }
  for (const r of d.records) {
    if (r.whole) {
      shards[r.shard].writeBytes(HEADER_SIZE, r.whole.subarray(HEADER_SIZE, r.whole.length - CHECKSUM_SIZE));
      shards[r.shard].applyChanges({ changed: [], count: r.count });
      at.shards[r.shard] = { epoch: r.epoch, position: r.to };
      continue;
    }
    shards[r.shard].applyChanges({ changed: r.changed, count: r.count });
    at.shards[r.shard].position = r.to;
  }
  return formatCursor(at);
}
