// new ShardedBloomFilter against the Worker's own snapshot, kept in
// snapshot/testdata (written by worker/test/sharded-golden.test.js, read by
// Go's snapshot tests too): the same parameters and keys give the same
// bytes, and the getters give the service's totals.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init, ShardedBloomFilter, fromBytes } from 'edgebloom';

const testdata = new URL('../../snapshot/testdata/', import.meta.url);
const golden = new Uint8Array(readFileSync(new URL('service-4shards.snap', testdata)));
const totals = JSON.parse(readFileSync(new URL('service-4shards.json', testdata), 'utf8'));

before(() => init());

test("the Worker's snapshot of 4 shards is new ShardedBloomFilter's bytes for the same keys", () => {
  const ascii = Array.from({ length: 10_000 }, (_, i) => `https://example.com/page/${i}`);
  const other = Array.from({ length: 100 }, (_, i) => [
    `https://example.com/café/${i}`,
    `https://例え.jp/ページ/${i}`,
    `https://example.com/😀/${i}`,
  ]).flat();
  const f = new ShardedBloomFilter(totals.params);
  f.addMany(ascii);
  f.addMany(other);
  assert.ok(Buffer.from(f.toBytes()).equals(Buffer.from(golden)), 'the bytes differ from the Worker snapshot');
  const { byteLength, ...rest } = totals.total;
  for (const [name, value] of Object.entries(rest)) assert.equal(f[name], value, name);
  // The service counts the shards' records; the container adds its header and router.
  assert.equal(f.byteLength, golden.length);
  assert.ok(byteLength < golden.length);
  const copy = fromBytes(golden);
  assert.deepEqual(
    copy.hasMany([...ascii, ...other]),
    [...ascii, ...other].map(() => true),
  );
  assert.deepEqual(copy.stats(), f.stats());
  copy.free();
  f.free();
});
