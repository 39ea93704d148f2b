// applyDelta: a copy loaded from a snapshot follows the service's filter
// through deltas, byte for byte, and refuses a delta that does not fit it.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init, BloomFilter, ShardedBloomFilter, applyDelta, fromBytes } from 'edgebloom';
import { crawlerURLs, routerBytes } from './helpers.js';
import { encodeRice, decodeRice } from '../rice.js';
import { formatCursor, parseCursor } from '../delta.js';

before(() => init());

// CRC-32 (IEEE) for the test's encoder, written apart from the module's.
function crc32(bytes) {
  let c = 0xffffffff;
  for (const b of bytes) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  }
  return (c ^ 0xffffffff) >>> 0;
}

function varint(out, v) {
  for (; v >= 0x80; v = Math.floor(v / 128)) out.push((v % 128) | 0x80);
  out.push(v);
}

// The same bytes as token with the unused low bits of its last character
// set (a token of 4n + 2 or 4n + 3 characters has 4 or 2 of them).
function otherSpelling(token) {
  const abc = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const last = abc.indexOf(token.at(-1));
  return token.slice(0, -1) + abc[last | 1];
}

// The service, played in JS: shards whose adds are logged as the bits they
// set, and deltas encoded as docs/format.md says.
class Service {
  constructor(shards) {
    this.shards = Array.from({ length: shards }, () => new BloomFilter({ capacity: 1000, errorRate: 0.01 }));
    this.router = shards > 1 ? fromBytes(routerBytes(shards)) : null;
    this.logs = this.shards.map(() => []);
    this.generation = 1764082800123;
  }
  add(keys) {
    for (const key of keys) {
      const i = this.router ? this.router.positions(key)[0] : 0;
      const ch = this.shards[i].addManyChanges([key]);
      if (ch.changed.length) this.logs[i].push(ch.changed);
    }
  }
  cursor() {
    const out = [1];
    varint(out, this.generation);
    varint(out, this.shards.length);
    this.logs.forEach((log, i) => {
      varint(out, 100 + i);
      varint(out, log.length);
    });
    return Buffer.from(out).toString('base64url');
  }
  delta(positionsAt) {
    const body = [];
    let records = 0;
    this.logs.forEach((log, i) => {
      const from = positionsAt[i];
      if (from === log.length) return;
      records++;
      const pos = [...new Set(log.slice(from).flatMap((c) => [...c]))].sort((a, b) => a - b);
      const bytes = [];
      pos.forEach((p, j) => varint(bytes, j ? p - pos[j - 1] : p));
      const head = Buffer.alloc(40);
      head.writeUInt32LE(i, 0);
      head.writeUInt32LE(100 + i, 4);
      head.writeBigUInt64LE(BigInt(from), 8);
      head.writeBigUInt64LE(BigInt(log.length), 16);
      head.writeBigUInt64LE(BigInt(this.shards[i].count), 24);
      head.writeUInt32LE(pos.length, 32);
      head.writeUInt32LE(bytes.length, 36);
      body.push(head, Buffer.from(bytes));
    });
    const f = this.shards[0];
    const head = Buffer.alloc(48);
    head.write('EBDL', 0, 'latin1');
    head[4] = 1;
    head[5] = 1;
    head.writeBigUInt64LE(BigInt(this.generation), 8);
    head.writeBigUInt64LE(BigInt(f.bits), 24);
    head.writeUInt32LE(f.hashes, 32);
    head.writeUInt32LE(this.shards.length, 36);
    head.writeUInt32LE(records, 40);
    const all = Buffer.concat([head, ...body]);
    const tail = Buffer.alloc(4);
    tail.writeUInt32LE(crc32(all));
    return new Uint8Array(Buffer.concat([all, tail]));
  }
  positions() {
    return this.logs.map((l) => l.length);
  }
  snapshot() {
    if (this.shards.length === 1) return this.shards[0].toBytes();
    const s = new ShardedBloomFilter(this.router, this.shards);
    return s.toBytes();
  }
}

for (const shards of [1, 3]) {
  test(`a copy follows ${shards} shard(s) through deltas byte for byte, counts included`, () => {
    const sv = new Service(shards);
    sv.add(crawlerURLs(50));
    const copy = fromBytes(sv.snapshot());
    let cursor = sv.cursor();
    for (let round = 0; round < 5; round++) {
      const at = sv.positions();
      const fresh = crawlerURLs(100, `https://r${round}.example`);
      sv.add(fresh);
      sv.add(crawlerURLs(10)); // present already: nothing logged
      cursor = applyDelta(copy, sv.delta(at), cursor);
      assert.equal(cursor, sv.cursor());
      assert.deepEqual(copy.toBytes(), sv.snapshot(), `round ${round}`);
      assert.ok(copy.hasMany(fresh).every(Boolean));
    }
    // Nothing new: 52 bytes, and the cursor stays.
    const empty = sv.delta(sv.positions());
    assert.equal(empty.length, 52);
    assert.equal(applyDelta(copy, empty, cursor), cursor);
  });
}

test('a delta that does not fit the copy is refused with a code and changes nothing', () => {
  const sv = new Service(2);
  sv.add(crawlerURLs(40));
  const snap = sv.snapshot();
  const cursor = sv.cursor();
  const at = sv.positions();
  sv.add(crawlerURLs(40, 'https://new.example'));
  const good = sv.delta(at);
  const flipped = good.slice();
  flipped[flipped.length >> 1] ^= 1;
  const bigger = new Service(2);
  bigger.shards = [new BloomFilter({ capacity: 2000, errorRate: 0.01 }), ...bigger.shards.slice(1)];
  const cases = [
    [
      'another generation',
      good,
      (() => {
        const s = new Service(2);
        s.generation++;
        s.logs = sv.logs.map((l, i) => l.slice(0, at[i]));
        return s.cursor();
      })(),
      'ERR_GENERATION',
    ],
    [
      'a gap',
      good,
      (() => {
        const s = new Service(2);
        s.logs = sv.logs.map((l, i) => l.slice(0, at[i] + (i === 0 ? 1 : 0)));
        return s.cursor();
      })(),
      'ERR_GAP',
    ],
    ['a flipped bit', flipped, cursor, 'ERR_CHECKSUM'],
    ['cut short', good.subarray(0, good.length - 9), cursor, 'ERR_TRUNCATED'],
    ['a snapshot, not a delta', snap, cursor, 'ERR_NOT_FILTER'],
    [
      'shards of another size',
      (() => {
        const s = new Service(2);
        s.shards = bigger.shards;
        s.logs = sv.logs;
        return s.delta(at);
      })(),
      cursor,
      'ERR_INCOMPATIBLE',
    ],
    ['a cursor that is no cursor', good, 'x!y', 'ERR_ARG'],
  ];
  for (const [name, bytes, cur, code] of cases) {
    const copy = fromBytes(snap);
    assert.throws(
      () => applyDelta(copy, bytes, cur),
      (err) => err.code === code && /^edgebloom: /.test(err.message),
      name,
    );
    assert.deepEqual(copy.toBytes(), snap, `${name}: the copy changed`);
  }
  // A plain filter is a copy of one shard only.
  const one = new BloomFilter({ capacity: 1000, errorRate: 0.01 });
  assert.throws(() => applyDelta(one, good, new Service(1).cursor()), { code: 'ERR_INCOMPATIBLE' });
});

test("Go's golden delta (snapshot/testdata/delta.json) gives Go's copy and cursor", () => {
  const g = JSON.parse(readFileSync(new URL('../../snapshot/testdata/delta.json', import.meta.url), 'utf8'));
  const b = (s) => new Uint8Array(Buffer.from(s, 'base64'));
  const copy = fromBytes(b(g.snapshot));
  assert.equal(applyDelta(copy, b(g.delta), g.cursor), g.next);
  assert.deepEqual(copy.toBytes(), b(g.after));
  copy.free();
});

// The shards' encoder (js/rice.js) writes what Go's writes: the golden
// delta's first record, decoded and encoded again, is the same bytes.
test("encodeRice writes Go's bytes for the golden delta's record", () => {
  const g = JSON.parse(readFileSync(new URL('../../snapshot/testdata/delta.json', import.meta.url), 'utf8'));
  const d = new Uint8Array(Buffer.from(g.delta, 'base64'));
  const dv = new DataView(d.buffer, d.byteOffset);
  const bits = Number(dv.getBigUint64(24, true));
  const n = dv.getUint32(48 + 32, true);
  const b = dv.getUint32(48 + 36, true);
  const body = d.subarray(48 + 40, 48 + 40 + b);
  assert.equal(body[0], 1, 'a Rice-coded record');
  const positions = new Uint32Array(n);
  assert.ok(decodeRice(body, 2, b, body[1], bits, positions));
  assert.deepEqual(encodeRice(positions), body);
});

// Rice-coded gaps of random positions take at most 1.05 times their
// entropy (log2 of the ways to choose n of m bits) at the densities of a
// delta, and decode to the same positions.
test('Rice-coded positions take near their entropy and decode back', () => {
  const m = 1 << 22;
  let seed = 12345;
  const rand = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % m;
  const lnFact = (x) => x * Math.log(x) - x + 0.5 * Math.log(2 * Math.PI * x);
  for (const density of [0.0001, 0.001, 0.01, 0.05, 0.1, 0.3]) {
    const set = new Set();
    while (set.size < density * m) set.add(rand());
    const positions = Uint32Array.from(set).sort();
    const n = positions.length;
    const entropy = (lnFact(m) - lnFact(n) - lnFact(m - n)) / Math.LN2 / 8;
    const body = encodeRice(positions);
    assert.ok(body.length <= 1.05 * entropy, `density ${density}: ${body.length} bytes, entropy ${entropy}`);
    const back = new Uint32Array(n);
    assert.ok(decodeRice(body, 2, body.length, body[1], m, back));
    assert.deepEqual(back, positions);
    assert.equal(decodeRice(body, 2, body.length - 1, body[1], m, back), false, 'cut short');
  }
});

test("a cursor is read in one spelling, as Go's ParseCursor reads it", () => {
  let spare = 0;
  for (let s = 1; s <= 4; s++) {
    for (const position of [0, 5, 300, 70000, 2 ** 40]) {
      const cur = { generation: 7 + s, shards: Array.from({ length: s }, (_, i) => ({ epoch: i, position })) };
      const token = formatCursor(cur);
      assert.deepEqual(parseCursor(token), cur);
      if (token.length % 4 === 0) continue;
      spare++;
      assert.throws(() => parseCursor(otherSpelling(token)), { code: 'ERR_ARG' }, token);
    }
  }
  assert.ok(spare >= 5, `only ${spare} cursors had spare bits`);
});
