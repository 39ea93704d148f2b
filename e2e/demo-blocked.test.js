// The demo's split-block filter: one block a key, one bit in each 32-bit
// word, sized as Go sizes it, and the arithmetic of its positions.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as eb from 'edgebloom';
import { onCleanup } from '../testkit/process.js';
import {
  addKey,
  derived,
  hashMath,
  marked,
  page,
  setParams,
  shot,
  sizeMath,
  sorted,
  testKey,
  useDemo,
  valueAt,
} from './demo-helpers.js';

useDemo();

describe('a split-block filter', () => {
  const keys = ['apple', 'pear', 'kiwi', 'plum', 'https://example.com/', 'ключ'];

  test('split-block: a key lights its one block, one bit in each 32-bit word, exactly its positions', async () => {
    await setParams({ kind: 'blocked', sizing: 'mk', m: 1000 });
    assert.equal(await page.isVisible('#k'), false, 'a split-block filter has no k to choose');
    assert.match(await page.textContent('#m-err'), /multiple of 256/);
    await page.fill('#m', '1024');
    assert.equal(await page.textContent('#m-err'), '');
    await page.click('#create');
    const b = new eb.BlockedBloomFilter({ blocks: 4 });
    onCleanup(() => b.free());
    assert.equal(await page.$$eval('#grid .c', (c) => c.length), 1024);
    assert.equal(await page.$$eval('#grid .blockwrap', (w) => w.length), 4);
    assert.equal(await page.isVisible('#blockexplain'), true);
    assert.match(await page.textContent('#blockexplain'), /one cache miss/);
    for (const key of keys) {
      const positions = b.positions(key);
      const block = Math.floor(positions[0] / 256);
      assert.deepEqual(
        positions.map((p) => Math.floor((p - 256 * block) / 32)),
        [0, 1, 2, 3, 4, 5, 6, 7],
        `${key}: one bit in each word of block ${block}`,
      );
      const before = b.toBytes();
      const fresh = sorted(positions.filter((p) => !valueAt(before, 'blocked', p)));
      b.add(key);
      await addKey(key);
      assert.deepEqual(await marked('.c.new, .c.old'), sorted(positions), `cells lit for ${key}`);
      assert.deepEqual(await marked('.c.new'), fresh, `newly set cells for ${key}`);
      assert.deepEqual(await page.$$eval('#grid .blockwrap.hit', (w) => w.map((x) => Number(x.dataset.block))), [
        block,
      ]);
      assert.match(
        await page.textContent('#verdict'),
        new RegExp(`bits: ${positions.join(', ')}\\..* in block ${block} `),
      );
    }
    const bytes = b.toBytes();
    const set = [];
    for (let i = 0; i < b.bits; i++) if (valueAt(bytes, 'blocked', i)) set.push(i);
    assert.deepEqual(await marked('.c.set'), set, "every cell shows the module's bit");

    let absent;
    for (let i = 0; !absent; i++) if (!b.has(`zebra-${i}`)) absent = `zebra-${i}`;
    const positions = b.positions(absent);
    const zeros = sorted(positions.filter((p) => !valueAt(bytes, 'blocked', p)));
    const verdict = await testKey(absent);
    assert.match(verdict, /certainly not in the set/);
    for (const z of zeros) assert.ok(verdict.includes(String(z)), `verdict names zero bit ${z}`);
    assert.deepEqual(await marked('.c.zero'), zeros);
    assert.deepEqual(await marked('.c.zero, .c.probe'), sorted(positions));
    assert.match(await testKey('kiwi'), /"kiwi": probably in the set.*added on this page/);
    assert.deepEqual(await marked('.c.probe'), sorted(b.positions('kiwi')));
    await page.waitForTimeout(700);
    await shot('blocked-desktop');
  });

  test('split-block: sized by Go from n and p; a large filter shows the one block a key lands in', async () => {
    await setParams({ kind: 'blocked', sizing: 'np', n: 10000, p: '1%' });
    const big = new eb.BlockedBloomFilter({ capacity: 10000, errorRate: 0.01 });
    onCleanup(() => big.free());
    assert.match(await derived('Bits m'), new RegExp(`^${big.bits.toLocaleString('en-US')} `));
    assert.match(await derived('Blocks'), new RegExp(`^${big.blocks.toLocaleString('en-US')} of 256`));
    assert.match(await derived('Hashes k'), /^8, one bit in each 32-bit word/);
    // Go sizes for at most 0.9 p at capacity.
    const theory = Number((await derived('False-positive rate')).match(/^([0-9.]+) %/)?.[1]);
    assert.ok(theory > 0.8 && theory <= 0.9, `theory ${theory} %`);
    await page.click('#create');
    assert.equal(await page.$$eval('#grid .c', (c) => c.length), 0);
    assert.match(await page.textContent('#gridcaption'), /too many to draw.*Add or test a key/);
    for (const key of keys.slice(0, 3)) {
      big.add(key);
      await addKey(key);
      const positions = big.positions(key);
      const block = Math.floor(positions[0] / 256);
      const drawn = await page.$$eval('#grid .c', (c) => c.map((x) => Number(x.dataset.i)));
      assert.deepEqual(
        [drawn.length, drawn[0], drawn[255]],
        [256, 256 * block, 256 * block + 255],
        `the block of ${key}`,
      );
      assert.deepEqual(await marked('.c.new, .c.old'), sorted(positions), `cells lit for ${key}`);
      assert.match(
        await page.textContent('#gridcaption'),
        new RegExp(`This is block ${block.toLocaleString('en-US')},`),
      );
    }
    assert.match(await testKey('pear'), /"pear": probably in the set/);
    assert.deepEqual(await marked('.c.probe'), sorted(big.positions('pear')));
    await page.click('#bulk');
    await page.waitForFunction(() => document.querySelector('#bulk-status').textContent.startsWith('Done'), null, {
      timeout: 30_000,
    });
    assert.equal(await page.$$eval('#chart-fpr path.theory', (c) => c.length), 1);
    assert.match(
      await page.textContent('#stats'),
      new RegExp(`Blocks${big.blocks.toLocaleString('en-US')} of 256 bits`),
    );
    await page.locator('#keys-h').scrollIntoViewIfNeeded();
    await shot('blocked-large-desktop');
  });

  test('split-block: the page shows the two halves of one XXH64 picking the block and the bits, and how n and p give the blocks', async () => {
    await setParams({ kind: 'blocked', sizing: 'mk', m: 1792 });
    await page.click('#create');
    const b = new eb.BlockedBloomFilter({ blocks: 7 });
    onCleanup(() => b.free());
    for (const key of ['apple', 'https://example.com/', 'ключ']) {
      await addKey(key);
      const math = await hashMath();
      const positions = b.positions(key);
      assert.deepEqual(math.positions, positions, `the 8 bits of ${key}, word by word`);
      assert.equal(math.values.block, String(Math.floor(positions[0] / 256)), `the block of ${key}`);
      assert.match(math.text, /upper half picks the block/);
    }
    await shot('blocked-hash-math-desktop');
    await setParams({ kind: 'blocked', sizing: 'np', n: 5000, p: '0.5%' });
    const big = new eb.BlockedBloomFilter({ capacity: 5000, errorRate: 0.005 });
    onCleanup(() => big.free());
    const math = await sizeMath();
    assert.equal(math.results.b, big.blocks.toLocaleString('en-US'));
    assert.equal(math.results.m, big.bits.toLocaleString('en-US'));
    assert.equal(math.results.k, '8');
  });
});
