// The Durable Object class of the edge service. One object is one shard of
// one filter, or the parameters ("meta") of one filter; the Go front in
// main.go decides which by the path it calls (see objects.go for the
// internal protocol).
//
// A shard keeps its filter in memory through the edgebloom npm module and
// persists it to the object's SQLite storage (store.js) as checksummed
// chunks plus an append-only log: an add writes one log row holding the
// positions of the bits it set, in the transaction of its reply, so a write
// costs what it adds, not what the shard holds. The chunks are rebuilt from
// the filter in memory by an alarm once the log passes logLimit(), and
// within a request if the log reaches twice that. On start the shard loads
// the chunks, checks each CRC and the whole encoding's XXH64, and replays
// the log; if the stored bytes fail those checks it answers 500
// shard_corrupt to every request until the filter is deleted: never
// silently wrong answers.
//
// The storage is the shard; the filter in memory is a copy of it. The wasm
// engine is one per isolate and can stop (every call then throws
// ERR_ENGINE_EXITED, and the filters of every shard in the isolate are
// gone): a request or alarm that meets a stopped engine starts a fresh one
// (init()), reloads the shard from storage and runs again. That is safe
// because nothing is written before a request's last engine call but for
// an add's log row, and an add whose row is committed answers with what it
// added even if the compaction after it fails.

import { init, BloomFilter } from 'edgebloom';
import { Store, logLimit, deltaRecord, deltaLimit } from './store.js';
import { MAX_SHARD_BITS } from './abi.js';
import { snapshotResponse } from './snapshot-stream.js';
import { checkpoints } from './checkpoint-object.js';
import { merge } from './merge.js';

// A log that stays under logLimit() is still compacted this long after its
// first row, so that a quiet shard loads from its chunks alone.
const IDLE_COMPACT_MS = 10 * 60 * 1000;

export class HttpError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export function json(status, value) {
  return new Response(JSON.stringify(value), { status, headers: { 'Content-Type': 'application/json' } });
}

const HEX = '0123456789abcdef';

// results answers an add or a check: one hex digit for every four keys in
// the X-Edgebloom-Results header (key 4i+j is bit 1<<j of digit i) and no
// body, because a body costs a round trip to the object more than its head
// (see objects.go).
function results(answers) {
  let s = '';
  for (let i = 0; i < answers.length; i += 4)
    s += HEX[(answers[i] ? 1 : 0) | (answers[i + 1] ? 2 : 0) | (answers[i + 2] ? 4 : 0) | (answers[i + 3] ? 8 : 0)];
  return new Response(null, { status: 200, headers: { 'X-Edgebloom-Results': s } });
}

function errorResponse(status, code, message, requestId) {
  return json(status, { error: { code, message, ...(requestId ? { requestId } : {}) } });
}

export const engineExited = (err) => err?.code === 'ERR_ENGINE_EXITED';
const tooLarge = (err) => err?.code === 'ERR_TOO_LARGE';

// The memory budget of the isolate's engine (init's memoryLimit). See
// "Capacity and memory" in README.md for the arithmetic: it holds two
// shards at the cap at once, and the isolate's 128 MB holds it, the Go
// front and the piece a snapshot is sending (snapshot-stream.js).
export const ENGINE_MEMORY = 72 * 2 ** 20;

// The shards of this isolate whose filter is in the engine, least recently
// used first. The objects of one isolate share one engine; when a shard
// needs more room than the engine's budget has left, the shards used
// longest ago give their filter back (evict) and load it again from storage
// on their next request. Storage holds every acknowledged add, and every
// engine call of a request runs in one synchronous turn, so no shard is
// evicted in the middle of one.
const resident = new Map();

export class Shard {
  constructor(ctx, env) {
    this.ctx = ctx;
    this.env = env;
    this.sql = ctx.storage.sql;
    // null until loaded; then {params, filter} for a live shard,
    // {params, broken} for one whose storage failed its checks, or
    // {params: null} for an empty object.
    this.state = null;
    // When the alarm that compacts the log is set for, or null.
    this.alarmAt = null;
    // Engine restarts this object met, and the times it gave its filter back
    // to make room for another shard, for the tests.
    this.engineRestarts = 0;
    this.evictions = 0;
    // The snapshots being sent, which must not see adds made since they
    // began (snapshot-stream.js).
    this.streams = new Set();
    this.sql.exec('CREATE TABLE IF NOT EXISTS kv (k TEXT PRIMARY KEY, v TEXT NOT NULL)');
    this.store = new Store(ctx.storage);
    // The newest generation deleted here: requests of it or an older one
    // are refused (see open).
    this.floor = this.getKV('floor') ?? 0;
    // The tests' hooks into this object (test-hooks.js), or null: the
    // production entry never loads them, and the tests' entry sets them
    // only when the Worker runs with EDGEBLOOM_TEST_HOOKS=1.
    this.hooks = null;
  }

  // alarm rebuilds the chunks from the log (see logged).
  async alarm() {
    this.alarmAt = null;
    await this.withEngine('alarm', () => {
      if (!this.state) this.state = this.load();
      if (this.state.filter && this.store.logBytes > 0) this.store.compact(this.state.filter);
    });
  }

  // withEngine runs fn with a live engine. If the engine stopped (in fn or
  // since the last call), the shard's filter went with it, and storage
  // holds every acknowledged add: it starts a fresh engine, forgets the
  // filter (the next open() loads it again) and runs fn once more.
  async withEngine(what, fn) {
    for (let attempt = 1; ; attempt++) {
      // The Go engine starts inside a handler: workerd forbids the random
      // bytes its runtime reads at global scope. Everything after this
      // await is synchronous, so requests never interleave on the filter.
      await init(undefined, { memoryLimit: ENGINE_MEMORY });
      try {
        return this.withRoom(fn);
      } catch (err) {
        if (!engineExited(err) || attempt > 1) throw err;
        console.warn(
          `edgebloom shard: ${what}: the engine had stopped (${err.message}); reloading the shard from storage`,
        );
        this.state = null;
        this.engineRestarts++;
      }
    }
  }

  // withRoom runs fn; when the engine's memory budget refuses what it needs
  // (ERR_TOO_LARGE, thrown before anything changed), the least recently
  // used other shard of the isolate gives its filter back, and fn runs
  // again, until it fits or this shard is the only one left. Afterwards
  // this shard is the most recently used.
  withRoom(fn) {
    for (;;) {
      try {
        return fn();
      } catch (err) {
        if (!tooLarge(err)) throw err;
        const victim = [...resident.keys()].find((s) => s !== this);
        if (!victim) throw err;
        victim.evict();
        victim.evictions++;
      } finally {
        resident.delete(this);
        if (this.state?.filter) resident.set(this, true);
      }
    }
  }

  // evict gives the shard's filter back to the engine; the next request
  // loads it from storage.
  evict() {
    this.state?.filter?.free();
    this.state = null;
    resident.delete(this);
  }

  // logged persists what an add changed, in the transaction of its reply,
  // and sees to the compaction of the log.
  logged(filter, changes) {
    try {
      this.ctx.storage.transactionSync(() => {
        this.store.append(changes);
        this.hooks?.logWritten();
      });
    } catch (err) {
      // The filter in memory has the add and storage does not: forget it,
      // so that what the shard answers stays what it stored, and give its
      // memory back to the engine's budget now (a filter dropped unfreed
      // would count against it until V8 collected it).
      this.evict();
      throw err;
    }
    const limit = logLimit(filter.byteLength);
    if (this.store.logBytes >= 2 * limit) {
      // The alarm has not run (it is retried after failures): compact now,
      // so the log and the time to load stay bounded. The add is committed
      // with its log row: if the compaction fails, the add still answers
      // (a retry by the client would find its keys present and report them
      // as not new), and the alarm tries again.
      try {
        this.store.compact(filter);
        return;
      } catch (err) {
        console.error(
          'edgebloom shard: compacting the log after an add failed; the alarm will try again:',
          err,
          err?.cause ?? '',
        );
        if (engineExited(err)) this.state = null;
      }
    }
    const when = this.store.logBytes >= limit ? Date.now() : Date.now() + IDLE_COMPACT_MS;
    if (this.alarmAt === null || when < this.alarmAt) {
      this.alarmAt = when;
      this.ctx.storage.setAlarm(when);
    }
  }

  async fetch(request) {
    // The Go front sends its request id, so that the log lines of both
    // sides of one request can be found together.
    const requestId = request.headers.get('X-Edgebloom-Request-Id') || crypto.randomUUID();
    if (this.hooks) await this.hooks.gate(request);
    try {
      const url = new URL(request.url);
      const body =
        request.method === 'GET' || request.method === 'DELETE'
          ? ''
          : url.pathname === '/merge'
            ? new Uint8Array(await request.arrayBuffer())
            : await request.text();
      if (url.pathname === '/checkpoints') return checkpoints(this, request.method, url, body);
      return await this.withEngine(`request ${requestId}`, () => {
        if (url.pathname === '/meta' || url.pathname === '/cleanup')
          return this.meta(request.method, url.pathname, body);
        if (url.pathname.startsWith('/_test/')) {
          if (!this.hooks) throw new HttpError(404, 'not_found', 'no such endpoint');
          return this.hooks.serve(url.pathname, body);
        }
        return this.shard(request, url, body);
      });
    } catch (err) {
      if (err instanceof HttpError)
        return errorResponse(err.status, err.code, err.message, err.status >= 500 ? requestId : undefined);
      // The detail (message, stack, cause) goes to the log, never into the
      // answer: it names files of the bundle and the engine's internals.
      console.error(`edgebloom shard: request ${requestId}: internal error:`, err, err?.cause ?? '');
      return errorResponse(
        500,
        'internal',
        'the shard failed to serve the request; the log has the details under its request id',
        requestId,
      );
    }
  }

  getKV(k) {
    const rows = this.sql.exec('SELECT v FROM kv WHERE k = ?', k).toArray();
    return rows.length ? JSON.parse(rows[0].v) : null;
  }

  putKV(k, v) {
    this.sql.exec('INSERT OR REPLACE INTO kv (k, v) VALUES (?, ?)', k, JSON.stringify(v));
  }

  // meta answers for the parameters of a filter. Generations only move
  // forward: a filter made again under a name after a DELETE gets a later
  // one than every filter of the name before it, so that a shard can tell
  // a late request of an older filter from a newer filter and refuse it
  // (open). The last generation given out outlives the DELETE, and a meta
  // object whose storage was lost still starts past it as long as the clock
  // moves forward: a generation is at least the time it was made, in ms.
  //
  // A DELETE forgets the parameters before the shards hear of it, so meta
  // also keeps the clean-up not known to be done: the newest deleted
  // generation and the most shards a deleted generation had. Every answer
  // carries it until a front, having told those shards, says so (POST
  // /cleanup); a front does it before it uses the answer, so that no shard
  // acknowledges a request of a deleted generation once a PUT is answered
  // (see objects.go).
  meta(method, path, body) {
    const have = this.getKV('meta');
    const cleanup = this.getKV('cleanup');
    const withCleanup = (v) => (cleanup ? { ...v, cleanup } : v);
    if (path === '/cleanup') {
      if (method !== 'POST') return errorResponse(405, 'method_not_allowed', 'meta: POST /cleanup');
      let done = null;
      try {
        done = JSON.parse(body);
      } catch {}
      if (
        !Number.isSafeInteger(done?.generation) ||
        done.generation < 1 ||
        !Number.isSafeInteger(done.shards) ||
        done.shards < 1
      )
        return errorResponse(400, 'bad_meta_request', 'POST /cleanup takes {"generation", "shards"}');
      // A DELETE since the clean-up was read may have widened it: what was
      // done then clears only what it covers.
      if (cleanup && cleanup.generation <= done.generation && cleanup.shards <= done.shards)
        this.sql.exec("DELETE FROM kv WHERE k = 'cleanup'");
      return new Response(null, { status: 204 });
    }
    if (method === 'GET' || method === 'DELETE') {
      if (!have) return json(404, withCleanup({ error: { code: 'not_found', message: 'no such filter' } }));
      if (method === 'GET') return json(200, withCleanup(have));
      const next = {
        generation: Math.max(have.generation, cleanup?.generation ?? 0),
        shards: Math.max(have.shards, cleanup?.shards ?? 0),
      };
      this.ctx.storage.transactionSync(() => {
        this.sql.exec("DELETE FROM kv WHERE k = 'meta'");
        this.putKV('cleanup', next);
      });
      return json(200, { ...have, cleanup: next });
    }
    if (method !== 'PUT') return errorResponse(405, 'method_not_allowed', 'meta: PUT, GET or DELETE');
    const want = JSON.parse(body);
    if (have) {
      const canonicalize = (have.canonicalize ?? false) === (want.canonicalize ?? false);
      if (
        have.capacity === want.capacity &&
        have.errorRate === want.errorRate &&
        have.shards === want.shards &&
        canonicalize
      ) {
        return json(200, withCleanup(have));
      }
      return errorResponse(
        409,
        'conflict',
        `the filter exists with capacity ${have.capacity}, errorRate ${have.errorRate}, shards ${have.shards}, ` +
          `canonicalize ${have.canonicalize ?? false}; ` +
          "and a filter's parameters never change: make one with these under another name",
      );
    }
    const generation = Math.max((this.getKV('generation') ?? 0) + 1, Date.now());
    const params = {
      capacity: want.capacity,
      errorRate: want.errorRate,
      shards: want.shards,
      ...(want.canonicalize ? { canonicalize: true } : {}),
      generation,
    };
    this.ctx.storage.transactionSync(() => {
      this.putKV('generation', generation);
      this.putKV('meta', params);
    });
    return json(201, withCleanup(params));
  }

  shard(request, url, body) {
    const path = url.pathname;
    let p;
    try {
      p = JSON.parse(request.headers.get('X-Edgebloom-Shard'));
    } catch {
      p = null;
    }
    if (!p || !Number.isSafeInteger(p.generation) || p.generation < 1)
      throw new HttpError(400, 'bad_shard_request', 'missing X-Edgebloom-Shard, or it has no generation');
    if (request.method === 'DELETE' && path === '/shard') {
      // Only what the request's generation or an older one made: a shard
      // that moved on to a newer filter keeps it.
      const have = this.state?.params?.generation ?? this.getKV('shard')?.generation ?? 0;
      if (have > p.generation) throw this.stale(have, p.generation);
      this.reset();
      this.floor = Math.max(this.floor, p.generation);
      this.putKV('floor', this.floor);
      return new Response(null, { status: 204 });
    }
    const filter = this.open(p);
    switch (`${request.method} ${path}`) {
      case 'POST /add': {
        const changes = filter.addManyChanges(JSON.parse(body).keys);
        if (changes.changed.length > 0) this.logged(filter, changes);
        for (const s of this.streams) s.note(changes.changed);
        return results(changes.added);
      }
      case 'POST /check':
        return results(filter.hasMany(JSON.parse(body).keys));
      case 'POST /merge':
        return merge(this, filter, request, body);
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
        // A piece at a time, as it was now: neither the engine nor JS ever
        // holds a copy of the whole shard.
        return snapshotResponse(this, p, filter);
      case 'GET /position':
        return json(200, { epoch: this.store.epoch, position: this.store.seq });
      case 'GET /changes':
        return this.changes(filter, p, url.searchParams);
    }
    throw new HttpError(404, 'not_found', `shard: no endpoint ${request.method} ${path}`);
  }

  position() {
    return `${this.store.epoch}:${this.store.seq}`;
  }

  // changes answers the shard's record of a delta (docs/format.md,
  // "Deltas") from position since of epoch: the bits its log and its
  // history set since, or nothing when nothing is new; 410 changes_gone
  // when they no longer hold them (past the history, another epoch, a
  // position this storage never had) or the record would pass
  // deltaLimit(): the front sends the shard whole then. Either way
  // X-Edgebloom-Position says where the shard is.
  changes(filter, p, query) {
    const since = Number(query.get('since'));
    const epoch = Number(query.get('epoch'));
    // to, when given, bounds the record: a delta between two checkpoints
    // says the same whenever it is asked for.
    const to = query.has('to') ? Number(query.get('to')) : this.store.seq;
    if (
      !Number.isSafeInteger(since) ||
      since < 0 ||
      !Number.isSafeInteger(epoch) ||
      !Number.isSafeInteger(to) ||
      to < 0
    )
      throw new HttpError(400, 'bad_shard_request', 'GET /changes takes ?since=POSITION&epoch=EPOCH[&to=POSITION]');
    const got =
      epoch === this.store.epoch && to <= this.store.seq ? this.store.changes(since, deltaLimit(filter), to) : null;
    if (!got) {
      const res = errorResponse(
        410,
        'changes_gone',
        `the shard is at ${this.position()} and no longer holds the changes since ${epoch}:${since}`,
      );
      res.headers.set('X-Edgebloom-Position', this.position());
      return res;
    }
    const body =
      since === to
        ? new Uint8Array(0)
        : deltaRecord(p.index, epoch, since, to, got.count ?? filter.count, got.n, got.body);
    return new Response(body, {
      headers: { 'Content-Type': 'application/octet-stream', 'X-Edgebloom-Position': `${epoch}:${to}` },
    });
  }

  // stale is the error for a request of generation `got` at a shard that
  // holds generation `have` or deleted generation this.floor.
  stale(have, got) {
    return new HttpError(
      409,
      'stale_generation',
      `the shard holds generation ${have}${this.floor ? ` and deleted up to ${this.floor}` : ''}; ` +
        `the request is of generation ${got}, older: read the filter's parameters again`,
    );
  }

  // open returns the filter of generation p.generation, loading it from
  // storage or making it. Generations only move forward: a request of an
  // older generation than the shard's, or of one deleted here, is refused
  // (409 stale_generation) and changes nothing; a newer one discards what
  // the shard held (a filter deleted and made again under its name).
  open(p) {
    if (!this.state) this.state = this.load();
    const st = this.state;
    const have = st.params?.generation ?? 0;
    if (p.generation < have || p.generation <= this.floor) throw this.stale(have, p.generation);
    if (p.generation === have) {
      if (st.broken) throw new HttpError(500, 'shard_corrupt', st.broken);
      return st.filter;
    }
    this.reset();
    const filter = new BloomFilter({ capacity: p.capacity, errorRate: p.errorRate });
    if (filter.bits > MAX_SHARD_BITS) {
      filter.free();
      throw new HttpError(400, 'invalid_params', `a shard may hold at most ${MAX_SHARD_BITS} bits`);
    }
    const params = {
      filter: p.filter,
      index: p.index,
      capacity: p.capacity,
      errorRate: p.errorRate,
      generation: p.generation,
    };
    this.ctx.storage.transactionSync(() => {
      this.putKV('shard', params);
      this.store.create(filter);
    });
    this.state = { params, filter };
    return filter;
  }

  reset() {
    this.state?.filter?.free();
    this.state = { params: null };
    this.store.clear();
    this.sql.exec("DELETE FROM kv WHERE k = 'shard'");
  }

  // load reads the shard back and checks it; see the comment at the top.
  load() {
    const params = this.getKV('shard');
    if (!params) return { params: null };
    const name = `shard ${params.index} of filter "${params.filter}"`;
    const broken = (why) => ({
      params,
      broken:
        `${name}: ${why}: its stored bytes are damaged, so the shard refuses to answer rather than answer wrong. ` +
        'Restore the filter from a snapshot, or DELETE it and rebuild it.',
    });
    // Made from the parameters, and checked against the stored header. A
    // failure here (a stopped engine, the engine's memory budget) says
    // nothing about storage: it is thrown, not cached, and the next request
    // loads again.
    const filter = new BloomFilter({ capacity: params.capacity, errorRate: params.errorRate });
    if (filter.bits > MAX_SHARD_BITS) {
      filter.free();
      // No damage either: a shard this code cannot hold (a lower cap).
      throw new Error(
        `${name}: its parameters need ${filter.bits} bits, more than the ${MAX_SHARD_BITS} a shard may hold`,
      );
    }
    let damage;
    try {
      damage = this.store.load(filter);
    } catch (err) {
      filter.free();
      throw err;
    }
    if (damage) {
      filter.free();
      return broken(damage);
    }
    return { params, filter };
  }
}
