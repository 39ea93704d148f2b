// The Durable Object's hooks for the tests: they read what a shard stored,
// damage it, stop the engine, and hold or cut off the requests on their way
// in. Only the tests' entry (testkit/worker-entry.mjs) imports this module,
// and its Shard turns the hooks on only when the Worker runs with
// EDGEBLOOM_TEST_HOOKS=1; the production entry (worker/front/worker.mjs)
// bundles neither it nor the engine's test helpers.

import { crashEngine, memoryBudget, memoryBytes } from '../../js/test/engine.js';
import { Shard as ProductionShard, HttpError, engineExited, json } from './shard.js';
import { crc32 } from './store.js';

// Requests served by the objects of this isolate, by "METHOD /path" (the
// test hooks not counted), for the tests that count what readers cost the
// Durable Objects: GET /_test/requests.
const served = new Map();

export class Shard extends ProductionShard {
  constructor(ctx, env) {
    super(ctx, env);
    if (env.EDGEBLOOM_TEST_HOOKS === '1') this.hooks = new TestHooks(this);
  }
}

class TestHooks {
  constructor(shard) {
    this.shard = shard;
    this.failNextLog = false;
  }

  // logWritten runs inside the transaction of an add's log row.
  logWritten() {
    if (this.failNextLog) {
      this.failNextLog = false;
      throw new Error('the log write failed (POST /_test/fail-next-log)');
    }
  }

  // gate is where the tests delay a request on its way to the object, or
  // make the object unreachable (POST /_test/hold, /_test/unreachable).
  async gate(request) {
    const what = `${request.method} ${new URL(request.url).pathname}`;
    if (what.includes(' /_test/')) return;
    served.set(what, (served.get(what) ?? 0) + 1);
    if (this.unreachable) throw new Error(`${what}: the object is unreachable (POST /_test/unreachable)`);
    await this.hold(what);
  }

  // hold waits while a test holds what (POST /_test/hold {"request": what}):
  // a request on its way in ("DELETE /shard"), or a snapshot's first read of
  // a piece ("PULL /snapshot", snapshot-stream.js).
  async hold(what) {
    const gate = this.gates?.get(what);
    if (!gate) return;
    this.gates.delete(what);
    gate.arrived();
    await gate.released;
  }

  // serve answers the hooks. GET /_test/info lists the stored chunks and log
  // rows, counts the rows and bytes written, and gives the engine's memory;
  // GET /_test/counters gives the same without the rows (which it reads).
  // POST /_test/corrupt {"chunk": i, "fixCrc": b} flips one byte of chunk i
  // (and rewrites its CRC when fixCrc, so only the whole-filter checksum
  // catches it), {"log": seq} one byte of a log row; it and POST
  // /_test/evict forget the in-memory filter, as an eviction would. POST
  // /_test/compact {"spin": n} compacts the log now; before it commits it
  // logs a line and hashes a megabyte n times, so that a test can kill the
  // process in the middle. POST /_test/fail-next-log makes the next add's
  // log write fail inside its transaction. POST /_test/crash stops the
  // isolate's engine as a Go panic outside recover would (the Go program
  // exits); the shard keeps its filter, now dead, as it would not know
  // either. POST /_test/hold {"request": "DELETE /shard"} holds the next
  // such request before it does anything, until POST /_test/release; POST
  // /_test/held answers once it is held. POST /_test/unreachable {"on": b}
  // makes every request but the test hooks fail, as for an object that
  // cannot be reached (the caller's fetch rejects).
  serve(path, body) {
    if (path === '/_test/requests') return json(200, Object.fromEntries(served));
    if (path === '/_test/hold') {
      const { request } = JSON.parse(body);
      const gate = {};
      gate.arrival = new Promise((resolve) => (gate.arrived = resolve));
      gate.released = new Promise((resolve) => (gate.release = resolve));
      this.gates ??= new Map();
      this.gates.set(request, gate);
      this.held = gate;
      return new Response(null, { status: 204 });
    }
    if (path === '/_test/held' || path === '/_test/release') {
      if (!this.held) throw new HttpError(404, 'not_found', 'nothing is held');
      if (path === '/_test/release') this.held.release();
      return this.held.arrival.then(() => new Response(null, { status: 204 }));
    }
    if (path === '/_test/unreachable') {
      this.unreachable = JSON.parse(body).on;
      return new Response(null, { status: 204 });
    }
    if (path === '/_test/info' || path === '/_test/counters') {
      const rows = path === '/_test/info' ? this.shard.store.info() : {};
      return json(200, {
        ...this.shard.store.counters(),
        ...rows,
        memoryBytes: memoryBytes(),
        memoryBudget: memoryBudget(),
        engineRestarts: this.shard.engineRestarts,
        evictions: this.shard.evictions,
        // Adds that set bits while a snapshot of the shard was being sent.
        snapshotRaces: this.shard.snapshotRaces ?? 0,
      });
    }
    if (path === '/_test/fail-next-log') {
      this.failNextLog = true;
      return new Response(null, { status: 204 });
    }
    if (path === '/_test/crash') {
      try {
        crashEngine();
      } catch (err) {
        if (!engineExited(err)) throw err;
        return new Response(null, { status: 204 });
      }
      throw new Error('the engine did not stop');
    }
    if (path === '/_test/compact') {
      const { spin = 0 } = JSON.parse(body || '{}');
      if (!this.shard.state) this.shard.state = this.shard.load();
      if (!this.shard.state.filter) throw new HttpError(404, 'not_found', 'no live filter to compact');
      const pause = () => {
        console.log(`edgebloom shard: compacting, ${this.shard.store.dirty.size} chunks written, not committed`);
        const mb = new Uint8Array(1 << 20);
        for (let i = 0; i < spin; i++) mb[i % mb.length] = crc32(mb) & 0xff;
      };
      this.shard.store.compact(this.shard.state.filter, pause);
      return json(200, this.shard.store.info());
    }
    if (path === '/_test/corrupt') {
      const { chunk, fixCrc, log } = JSON.parse(body);
      const [table, key, id] = log === undefined ? ['chunks', 'i', chunk] : ['log', 'seq', log];
      const rows = this.shard.sql.exec(`SELECT data, crc FROM ${table} WHERE ${key} = ?`, id).toArray();
      if (!rows.length) throw new HttpError(404, 'not_found', `no row ${id} in ${table}`);
      const data = new Uint8Array(rows[0].data);
      data[data.length >> 1] ^= 0x10;
      const crc = fixCrc ? crc32(data) : rows[0].crc;
      this.shard.sql.exec(`UPDATE ${table} SET data = ?, crc = ? WHERE ${key} = ?`, data.buffer, crc, id);
    } else if (path !== '/_test/evict') {
      throw new HttpError(404, 'not_found', 'no such test hook');
    }
    this.shard.evict();
    return new Response(null, { status: 204 });
  }
}
