// Bytes written by the npm module load in Go's bloom package and answer the
// same (the other direction is covered by the golden vectors).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { init, BloomFilter, CountingBloomFilter, ScalableBloomFilter, BlockedBloomFilter } from 'edgebloom';
import { crawlerURLs } from './helpers.js';

before(() => init());

test('filters written in JS answer the same in Go, and Go re-encodes them byte for byte', () => {
  const dir = mkdtempSync(join(tmpdir(), 'edgebloom-'));
  const root = new URL('../..', import.meta.url).pathname;
  const bin = join(dir, 'gocheck');
  execFileSync('go', ['build', '-o', bin, './js/test/gocheck'], { cwd: root });
  try {
    const keys = crawlerURLs(3000);
    const probes = keys.slice(0, 100).concat(crawlerURLs(2000, 'https://absent.example'), ['', '例子', '😀']);
    writeFileSync(join(dir, 'probes.json'), JSON.stringify(probes));
    for (const f of [
      new BloomFilter({ capacity: 3000, errorRate: 0.01 }),
      new CountingBloomFilter({ bits: 5000, hashes: 4 }),
      new ScalableBloomFilter({ initialCapacity: 100, errorRate: 0.01 }),
      new BlockedBloomFilter({ capacity: 3000, errorRate: 0.01 }),
      BlockedBloomFilter.fromParquet(new Uint8Array(32 * 200).fill(0x11)),
    ]) {
      f.addMany(keys);
      const bytes = f.toBytes();
      writeFileSync(join(dir, 'filter.bin'), bytes);
      const out = JSON.parse(
        execFileSync(bin, [join(dir, 'filter.bin'), join(dir, 'probes.json')], { encoding: 'utf8' }),
      );
      assert.equal(out.kind, f.kind);
      assert.deepEqual(out.has, f.hasMany(probes), `${f.kind}: Go answers as JS`);
      assert.equal(out.base64, Buffer.from(bytes).toString('base64'), `${f.kind}: Go re-encodes identically`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
