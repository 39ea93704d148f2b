// Batches are all or nothing: addMany and hasMany check every key before
// touching the filter, so a TypeError means nothing was added.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import {
  init,
  BloomFilter,
  CountingBloomFilter,
  ScalableBloomFilter,
  WindowBloomFilter,
  BlockedBloomFilter,
  ShardedBloomFilter,
} from 'edgebloom';
import { crawlerURLs, shardedContainer } from './helpers.js';

before(() => init());

const makers = {
  classic: () => new BloomFilter({ capacity: 50_000, errorRate: 0.01 }),
  counting: () => new CountingBloomFilter({ capacity: 50_000, errorRate: 0.01 }),
  scalable: () => new ScalableBloomFilter({ initialCapacity: 1000, errorRate: 0.01 }),
  window: () => new WindowBloomFilter({ capacityPerGeneration: 50_000, errorRate: 0.01, generations: 2 }),
  blocked: () => new BlockedBloomFilter({ capacity: 50_000, errorRate: 0.01 }),
  sharded: () =>
    ShardedBloomFilter.fromBytes(shardedContainer({ BloomFilter, ShardedBloomFilter }, 3, ['https://seed.example/'])),
};

const good = crawlerURLs(30_000);
const bytesKey = new TextEncoder().encode('https://bytes.example/');
const batches = {
  // 30 000 keys, then a number: once added 26 755 keys before it threw.
  'a number after 30 000 strings': [...good, 42],
  'null first': [null, ...good.slice(0, 100)],
  'undefined among bytes and strings': [bytesKey, 'https://a.example/', undefined, 'https://b.example/'],
  'an ArrayBuffer (not a Uint8Array) last': [...good.slice(0, 1000), bytesKey.buffer],
  'a String object': ['https://a.example/', new String('https://b.example/')],
};

for (const [kind, make] of Object.entries(makers)) {
  test(`${kind}: a batch with one bad key throws a TypeError naming it and adds nothing`, () => {
    const f = make();
    const before = f.stats();
    for (const [name, keys] of Object.entries(batches)) {
      const bad = keys.findIndex((k) => typeof k !== 'string' && !(k instanceof Uint8Array));
      assert.throws(() => f.addMany(keys), { name: 'TypeError', message: new RegExp(`keys\\[${bad}\\]`) }, name);
      assert.throws(() => f.hasMany(keys), TypeError, name);
      assert.equal(f.stats().count, before.count, `${name}: count after the refused batch`);
      assert.equal(f.stats().setBits, before.setBits, `${name}: bits set by the refused batch`);
    }
    // The filter keeps working.
    assert.deepEqual(f.addMany(['https://x.example/', bytesKey]), [true, true]);
    assert.deepEqual(f.hasMany(['https://x.example/', bytesKey]), [true, true]);
    f.free();
  });
}
