// Shared by the Node tests.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

// crawlerURLs returns n distinct URL-like keys, the same on every call.
export function crawlerURLs(n, prefix = 'https://www.example') {
  const out = new Array(n);
  for (let i = 0; i < n; i++) out[i] = `${prefix}${i % 97}.com/path/${i}/page-${(i * 2654435761) >>> 0}.html`;
  return out;
}

// routerBytes is the router record of a sharded container for shardCount
// shards (2 to 8), as Go's snapshot.Router writes it: a classic filter with
// m = shardCount, k = 1 and seed 0x9e3779b97f4a7c15, which the JS API cannot
// make (its filters have seed 0), so Go writes them to
// snapshot/testdata/routers.json.
const routers = JSON.parse(
  readFileSync(new URL('../../snapshot/testdata/routers.json', import.meta.url), 'utf8'),
).routers;
export function routerBytes(shardCount) {
  const b64 = routers[shardCount];
  if (b64 === undefined) throw new RangeError(`no router of ${shardCount} shards in snapshot/testdata/routers.json`);
  return new Uint8Array(Buffer.from(b64, 'base64'));
}

// shardedContainer builds a container as the Worker does: the router of
// routerBytes, then the shards, every key in the shard the router gives it.
export function shardedContainer({ BloomFilter, ShardedBloomFilter }, shardCount, keys) {
  const router = BloomFilter.fromBytes(routerBytes(shardCount));
  const shards = Array.from({ length: shardCount }, () => new BloomFilter({ capacity: keys.length, errorRate: 0.01 }));
  const f = new ShardedBloomFilter(router, shards);
  f.addMany(keys);
  const bytes = f.toBytes();
  f.free();
  return bytes;
}

// initAfterRefusal checks that an engine init() refused left the module
// as it was, and that init() then starts the right one.
export async function initAfterRefusal({ init, BloomFilter }) {
  assert.throws(() => new BloomFilter({ capacity: 10, errorRate: 0.1 }), { code: 'ERR_NOT_INITIALIZED' });
  await init();
  const f = new BloomFilter({ capacity: 100, errorRate: 0.01 });
  assert.equal(f.add('https://example.com/'), true);
  assert.equal(f.has('https://example.com/'), true);
  f.free();
}

// runScript runs script, an ES module, in a fresh Node process (a fresh
// engine) in js/, with input on its stdin, and returns the JSON it prints.
export function runScript(script, input) {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    input,
    cwd: new URL('..', import.meta.url),
  });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}
