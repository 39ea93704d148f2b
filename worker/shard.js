// The Durable Object class of the edge service. One object is one shard of
// one filter, or the parameters ("meta") of one filter; the Go front in
// main.go decides which by the path it calls (see objects.go for the
// internal protocol).
//
// A shard keeps its filter in memory through the edgebloom npm module and
// persists it to the object's SQLite storage as chunks: chunk -1 holds the
// 64-byte header and the 8-byte checksum of the filter's encoding, chunks
// 0..n-1 its payload, 1 MiB each. Every chunk carries a CRC-32. After an
// add, only the chunks holding bits that the new keys set are written, with
// chunk -1, in one synchronous transaction. On start the shard reads every
// chunk back, checks each CRC and then the whole encoding's XXH64 (through
// fromBytes); if anything is wrong it answers 500 shard_corrupt to every
// request until the filter is deleted: never silently wrong answers.

import { init, BloomFilter } from 'edgebloom';

const CHUNK_BYTES = 1 << 20;
// Durable Object storage refuses values (SQLite rows) over 2 MB, and local
// emulation does not: the limit is checked here so that a change of
// CHUNK_BYTES cannot pass the tests and fail in production.
const MAX_VALUE_BYTES = 2_000_000;
const HEADER_BYTES = 64;
const TRAILER_BYTES = 8;
// Keep in sync with maxShardBits in handler.go.
const MAX_SHARD_BITS = 2 ** 26;

const CRC_TABLE = new Int32Array(256).map((_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c;
});

/** CRC-32 (IEEE 802.3) of bytes, as an unsigned integer. */
export function crc32(bytes) {
  let c = -1;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ -1) >>> 0;
}

class HttpError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

function json(status, value) {
  return new Response(JSON.stringify(value), { status, headers: { 'Content-Type': 'application/json' } });
}

function errorResponse(status, code, message) {
  return json(status, { error: { code, message } });
}

function payloadBytes(bits) {
  return Math.ceil(bits / 64) * 8;
}

export class Shard {
  constructor(ctx, env) {
    this.ctx = ctx;
    this.env = env;
    this.sql = ctx.storage.sql;
    // null until loaded; then {params, filter} for a live shard,
    // {params, broken} for one whose storage failed its checks, or
    // {params: null} for an empty object.
    this.state = null;
    // Chunks written since the object started, for the tests.
    this.chunkWrites = 0;
    this.sql.exec('CREATE TABLE IF NOT EXISTS kv (k TEXT PRIMARY KEY, v TEXT NOT NULL)');
    this.sql.exec('CREATE TABLE IF NOT EXISTS chunks (i INTEGER PRIMARY KEY, data BLOB NOT NULL, crc INTEGER NOT NULL)');
  }

  async fetch(request) {
    try {
      const url = new URL(request.url);
      const body = request.method === 'GET' || request.method === 'DELETE' ? '' : await request.text();
      // The Go engine starts inside a handler: workerd forbids the random
      // bytes its runtime reads at global scope. Everything after this
      // await is synchronous, so requests never interleave on the filter.
      await init();
      if (url.pathname === '/meta') return this.meta(request.method, body);
      if (url.pathname.startsWith('/_test/')) return this.testHook(url.pathname, body);
      return this.shard(request, url.pathname, body);
    } catch (err) {
      if (err instanceof HttpError) return errorResponse(err.status, err.code, err.message);
      return errorResponse(500, 'internal', `shard: ${err && err.stack ? err.stack : err}`);
    }
  }

  getKV(k) {
    const rows = this.sql.exec('SELECT v FROM kv WHERE k = ?', k).toArray();
    return rows.length ? JSON.parse(rows[0].v) : null;
  }

  putKV(k, v) {
    this.sql.exec('INSERT OR REPLACE INTO kv (k, v) VALUES (?, ?)', k, JSON.stringify(v));
  }

  // meta answers for the parameters of a filter.
  meta(method, body) {
    const have = this.getKV('meta');
    if (method === 'GET' || method === 'DELETE') {
      if (!have) return errorResponse(404, 'not_found', 'no such filter');
      if (method === 'DELETE') this.sql.exec('DELETE FROM kv');
      return json(200, have);
    }
    if (method !== 'PUT') return errorResponse(405, 'method_not_allowed', 'meta: PUT, GET or DELETE');
    const want = JSON.parse(body);
    if (have) {
      const canonicalize = (have.canonicalize ?? false) === (want.canonicalize ?? false);
      if (have.capacity === want.capacity && have.errorRate === want.errorRate && have.shards === want.shards && canonicalize) {
        return json(200, have);
      }
      return errorResponse(
        409,
        'conflict',
        `the filter exists with capacity ${have.capacity}, errorRate ${have.errorRate}, shards ${have.shards}, ` +
          `canonicalize ${have.canonicalize ?? false}; ` +
          'DELETE it first to change them',
      );
    }
    const params = {
      capacity: want.capacity,
      errorRate: want.errorRate,
      shards: want.shards,
      ...(want.canonicalize ? { canonicalize: true } : {}),
      generation: crypto.randomUUID(),
    };
    this.putKV('meta', params);
    return json(201, params);
  }

  shard(request, path, body) {
    let p;
    try {
      p = JSON.parse(request.headers.get('X-Edgebloom-Shard'));
    } catch {
      p = null;
    }
    if (!p || typeof p.generation !== 'string') throw new HttpError(400, 'bad_shard_request', 'missing X-Edgebloom-Shard');
    if (request.method === 'DELETE' && path === '/shard') {
      this.reset();
      return new Response(null, { status: 204 });
    }
    const filter = this.open(p);
    switch (`${request.method} ${path}`) {
      case 'POST /add': {
        const keys = JSON.parse(body).keys;
        const added = filter.addMany(keys);
        const dirty = new Set();
        for (let i = 0; i < keys.length; i++) {
          if (!added[i]) continue;
          for (const pos of filter.positions(keys[i])) dirty.add(Math.floor(pos / 8 / CHUNK_BYTES));
        }
        if (dirty.size > 0) this.persist(filter, dirty);
        return json(200, { added });
      }
      case 'POST /check':
        return json(200, { present: filter.hasMany(JSON.parse(body).keys) });
      case 'GET /stats': {
        const s = filter.stats();
        return json(200, {
          bits: s.bits,
          hashes: s.hashes,
          count: s.count,
          setBits: s.setBits,
          estimatedCount: Number.isFinite(s.estimatedCount) ? s.estimatedCount : null,
          fillRatio: s.fillRatio,
          estimatedErrorRate: s.estimatedErrorRate,
          byteLength: s.byteLength,
        });
      }
      case 'GET /snapshot':
        return new Response(filter.toBytes(), { headers: { 'Content-Type': 'application/octet-stream' } });
    }
    throw new HttpError(404, 'not_found', `shard: no endpoint ${request.method} ${path}`);
  }

  // open returns the filter of generation p.generation, loading it from
  // storage or making it. A shard left by an older filter of the same name
  // (another generation) is discarded.
  open(p) {
    if (!this.state) this.state = this.load();
    const st = this.state;
    if (st.params && st.params.generation === p.generation) {
      if (st.broken) throw new HttpError(500, 'shard_corrupt', st.broken);
      return st.filter;
    }
    this.reset();
    const filter = new BloomFilter({ capacity: p.capacity, errorRate: p.errorRate });
    if (filter.bits > MAX_SHARD_BITS) {
      filter.free();
      throw new HttpError(400, 'invalid_params', `a shard may hold at most ${MAX_SHARD_BITS} bits`);
    }
    const params = { filter: p.filter, index: p.index, capacity: p.capacity, errorRate: p.errorRate, generation: p.generation };
    this.ctx.storage.transactionSync(() => {
      this.putKV('shard', params);
      this.persist(filter, 'all');
    });
    this.state = { params, filter };
    return filter;
  }

  reset() {
    this.state?.filter?.free();
    this.state = { params: null };
    this.sql.exec('DELETE FROM chunks');
    this.sql.exec('DELETE FROM kv');
  }

  // persist writes chunk -1 and the given payload chunks ('all' for every one).
  persist(filter, dirty) {
    const bytes = filter.toBytes();
    const payload = bytes.length - HEADER_BYTES - TRAILER_BYTES;
    const n = Math.ceil(payload / CHUNK_BYTES);
    const head = new Uint8Array(HEADER_BYTES + TRAILER_BYTES);
    head.set(bytes.subarray(0, HEADER_BYTES));
    head.set(bytes.subarray(bytes.length - TRAILER_BYTES), HEADER_BYTES);
    const indexes = dirty === 'all' ? Array.from({ length: n }, (_, i) => i) : [...dirty];
    this.ctx.storage.transactionSync(() => {
      this.putChunk(-1, head);
      for (const i of indexes) {
        const start = HEADER_BYTES + i * CHUNK_BYTES;
        this.putChunk(i, bytes.subarray(start, start + Math.min(CHUNK_BYTES, payload - i * CHUNK_BYTES)));
      }
      if (dirty === 'all') this.sql.exec('DELETE FROM chunks WHERE i >= ?', n);
    });
  }

  putChunk(i, data) {
    if (data.byteLength > MAX_VALUE_BYTES) {
      throw new Error(`shard: chunk ${i} is ${data.byteLength} bytes, over the ${MAX_VALUE_BYTES}-byte value limit`);
    }
    const copy = data.slice();
    this.chunkWrites++;
    this.sql.exec('INSERT OR REPLACE INTO chunks (i, data, crc) VALUES (?, ?, ?)', i, copy.buffer, crc32(copy));
  }

  // load reads the shard back and checks it; see the comment at the top.
  load() {
    const params = this.getKV('shard');
    if (!params) return { params: null };
    const name = `shard ${params.index} of filter "${params.filter}"`;
    const broken = (why) => ({
      params,
      broken: `${name}: ${why}; the stored filter cannot be trusted, so the shard refuses to answer. DELETE the filter and rebuild it.`,
    });
    const chunks = new Map();
    for (const row of this.sql.exec('SELECT i, data, crc FROM chunks ORDER BY i')) {
      const data = new Uint8Array(row.data);
      const crc = crc32(data);
      if (crc !== row.crc) return broken(`chunk ${row.i} failed its CRC-32 check (stored ${row.crc}, computed ${crc})`);
      chunks.set(row.i, data);
    }
    const head = chunks.get(-1);
    if (!head || head.length !== HEADER_BYTES + TRAILER_BYTES) return broken('the header chunk is missing or has the wrong size');
    const bits = Number(new DataView(head.buffer, head.byteOffset).getBigUint64(16, true));
    if (!(bits > 0 && bits <= MAX_SHARD_BITS)) return broken(`the header says ${bits} bits`);
    const payload = payloadBytes(bits);
    const n = Math.ceil(payload / CHUNK_BYTES);
    if (chunks.size !== n + 1) return broken(`${chunks.size - 1} payload chunks stored, ${n} expected`);
    const bytes = new Uint8Array(HEADER_BYTES + payload + TRAILER_BYTES);
    bytes.set(head.subarray(0, HEADER_BYTES));
    for (let i = 0; i < n; i++) {
      const chunk = chunks.get(i);
      const want = Math.min(CHUNK_BYTES, payload - i * CHUNK_BYTES);
      if (!chunk || chunk.length !== want) return broken(`chunk ${i} is missing or has the wrong size`);
      bytes.set(chunk, HEADER_BYTES + i * CHUNK_BYTES);
    }
    bytes.set(head.subarray(HEADER_BYTES), HEADER_BYTES + payload);
    try {
      return { params, filter: BloomFilter.fromBytes(bytes, { maxBits: MAX_SHARD_BITS }) };
    } catch (err) {
      return broken(`the reassembled filter does not load (${err.code ?? 'error'}: ${err.message})`);
    }
  }

  // testHook serves the tests, only when the Worker runs with
  // EDGEBLOOM_TEST_HOOKS=1. GET /_test/info lists the stored chunks and
  // counts chunk writes. POST /_test/corrupt {"chunk": i, "fixCrc": b}
  // flips one byte of chunk i (and rewrites its CRC when fixCrc, so only the
  // whole-filter checksum catches it); it and POST /_test/evict forget the
  // in-memory filter, as an eviction would.
  testHook(path, body) {
    if (this.env.EDGEBLOOM_TEST_HOOKS !== '1') throw new HttpError(404, 'not_found', 'no such endpoint');
    if (path === '/_test/info') {
      const chunks = this.sql.exec('SELECT i, length(data) AS bytes, crc FROM chunks ORDER BY i').toArray();
      return json(200, { chunkWrites: this.chunkWrites, chunks });
    }
    if (path === '/_test/corrupt') {
      const { chunk, fixCrc } = JSON.parse(body);
      const rows = this.sql.exec('SELECT data, crc FROM chunks WHERE i = ?', chunk).toArray();
      if (!rows.length) throw new HttpError(404, 'not_found', `no chunk ${chunk}`);
      const data = new Uint8Array(rows[0].data);
      data[data.length >> 1] ^= 0x10;
      const crc = fixCrc ? crc32(data) : rows[0].crc;
      this.sql.exec('UPDATE chunks SET data = ?, crc = ? WHERE i = ?', data.buffer, crc, chunk);
    } else if (path !== '/_test/evict') {
      throw new HttpError(404, 'not_found', 'no such test hook');
    }
    this.state?.filter?.free();
    this.state = null;
    return new Response(null, { status: 204 });
  }
}
