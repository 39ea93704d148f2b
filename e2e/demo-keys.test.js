// The demo's section 2, step by step: add keys and see their bits, test
// keys present and absent, a false positive explained, a duplicate, and the
// arithmetic of a key's positions; the page checked against the npm module.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import * as eb from 'edgebloom';
import { onCleanup } from '../testkit/process.js';
import { e2eDir } from './helpers.js';
import {
  addKey,
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

describe('adding and testing keys', () => {
  // The page's filter and a mirror in Node made with the same parameters.
  const keys = ['apple', 'pear', 'kiwi', 'plum', 'https://example.com/', 'ключ'];
  let mirror;

  test('inserting a key lights exactly its positions, new and already-set bits apart', async () => {
    await setParams({ n: 20, p: '0.05' });
    await page.click('#create');
    mirror = new eb.BloomFilter({ capacity: 20, errorRate: 0.05 });
    onCleanup(() => mirror.free());
    assert.equal(await page.$$eval('#grid .c', (c) => c.length), mirror.bits);
    for (const key of keys) {
      const positions = mirror.positions(key);
      const before = mirror.toBytes();
      const fresh = sorted(positions.filter((p) => !valueAt(before, 'classic', p)));
      mirror.add(key);
      await addKey(key);
      assert.deepEqual(await marked('.c.new, .c.old'), sorted(positions), `cells lit for ${key}`);
      assert.deepEqual(await marked('.c.new'), fresh, `newly set cells for ${key}`);
      assert.match(await page.textContent('#verdict'), new RegExp(`bits: ${positions.join(', ')}\\.`));
    }
    // Every cell shows the module's bit.
    const bytes = mirror.toBytes();
    const set = [];
    for (let i = 0; i < mirror.bits; i++) if (valueAt(bytes, 'classic', i)) set.push(i);
    assert.deepEqual(await marked('.c.set'), set);
    assert.equal(await page.textContent('#keycount'), String(keys.length));
    await page.waitForTimeout(700); // let the animation end
    await shot('insert-desktop');
  });

  test('after keys were added the status line says what the filter holds, not "an empty filter"', async () => {
    const status = await page.textContent('#status');
    assert.doesNotMatch(status, /empty/);
    assert.match(
      status,
      new RegExp(`classic filter of ${mirror.bits} bits and ${mirror.hashes} hashes, holding ${keys.length} keys`),
    );
  });

  test('a key of the list of keys added, clicked, is tested and put in the field', async () => {
    const key = keys[0];
    await page.fill('#key', '');
    await page.click(`#keylist button[aria-label="Test ${key}"]`);
    await page.waitForFunction((k) => document.querySelector('#verdict')?.textContent.includes(`"${k}":`), key);
    assert.match(await page.textContent('#verdict'), new RegExp(`"${key}": probably in the set`));
    assert.equal(await page.inputValue('#key'), key);
  });

  test("for the key added or tested, the page shows how one XXH64 gives each of its k positions, and they are the filter's", async () => {
    for (const key of keys) {
      await testKey(key);
      const math = await hashMath();
      assert.equal(math.hidden, false, `the arithmetic of ${key} is shown`);
      assert.deepEqual(math.positions, mirror.positions(key), `positions shown for ${key}, in probe order`);
      assert.match(math.text, new RegExp(`${mirror.hashes} probes of enhanced double hashing`));
      assert.match(math.text, /h₂ = mix64\(h₁\)/);
    }
    await addKey('fig');
    mirror.add('fig');
    keys.push('fig');
    assert.deepEqual((await hashMath()).positions, mirror.positions('fig'), 'shown after an add too');
    await page.locator('#hashmath').scrollIntoViewIfNeeded();
    await shot('hash-math-desktop');

    // docs/format.md walks two keys through a filter of m = 24, k = 3
    // (written by Go's TestFormatDoc): the page shows the same numbers.
    const doc = await readFile(path.join(e2eDir, '..', 'docs', 'format.md'), 'utf8');
    const walk = [
      ...doc.matchAll(
        /key "([^"]+)" \(\d+ bytes of UTF-8\)\n\s+h1 = XXH64\(key, seed 0\) = (0x[0-9a-f]+)\n\s+h2 = mix64\(h1\)\s+= (0x[0-9a-f]+)\n\s+x\s+= hi64\(h1 · m\)\s+= (\d+)\n\s+y\s+= hi64\(h2 · m\)\s+= (\d+)\n((?:\s+position \d+ = \d+.*\n)+)/g,
      ),
    ];
    assert.equal(walk.length, 2, 'docs/format.md walks two keys');
    await setParams({ sizing: 'mk', n: 5, m: 24, k: 3 });
    await page.click('#create');
    for (const [, key, h1, h2, x, y, lines] of walk) {
      await testKey(key);
      const math = await hashMath();
      assert.deepEqual(math.values, { h1, h2, x, y }, `the values of ${key}`);
      assert.deepEqual(
        math.positions,
        [...lines.matchAll(/position \d+ = (\d+)/g)].map((m) => Number(m[1])),
        `the positions of ${key}`,
      );
    }
    // The page's filter is the mirror again for the tests below.
    await setParams({ sizing: 'np', n: 20, p: '0.05' });
    await page.click('#create');
    for (const key of keys) await addKey(key);
  });

  test('the page shows how n and p give m and k with its numbers, and the filter it makes has them', async () => {
    for (const [n, p, pText] of [
      [20, 0.05, '0.05'],
      [1000, 0.01, '1%'],
      [123456, 0.001, '0.001'],
    ]) {
      await setParams({ n, p: pText });
      const want = eb.optimal(n, p);
      const math = await sizeMath();
      assert.equal(math.results.m, want.bits.toLocaleString('en-US'), `m for n = ${n}, p = ${p}`);
      assert.equal(math.results.k, String(want.hashes), `k for n = ${n}, p = ${p}`);
      assert.match(math.text, new RegExp(`⌈−${n.toLocaleString('en-US')} × ln ${p} / 0\\.4805⌉`));
      assert.match(
        math.text,
        new RegExp(`round\\(${want.bits.toLocaleString('en-US')} / ${n.toLocaleString('en-US')} × 0\\.6931\\)`),
      );
      // Shown with three significant digits, in % from 0.1 %.
      const shown = math.results.rate;
      const rate = shown.endsWith(' %') ? Number(shown.slice(0, -2)) / 100 : Number(shown);
      const theory = eb.estimateFPR(want.bits, want.hashes, n);
      assert.ok(Math.abs(rate - theory) <= 0.005 * theory, `rate shown ${shown}, theory ${theory}`);
    }
    await setParams({ n: 20, p: '0.05' });
    await page.click('#create');
    const stats = async (name) => page.textContent(`#stats dd[data-name="${name}"]`);
    const math = await sizeMath();
    assert.equal(await stats('Size m'), `${math.results.m} bits`, 'the filter made has the m shown');
    assert.equal(await stats('Hashes k'), math.results.k, 'the filter made has the k shown');
    assert.equal(
      await page.textContent('#status'),
      `Ready: an empty classic filter of ${math.results.m} bits and ${math.results.k} hashes. Type a key below and press Enter.`,
    );
    await page.locator('#size-h').scrollIntoViewIfNeeded();
    await shot('size-math-desktop');
    for (const key of keys) await addKey(key);
  });

  test('an absent key is certainly not in the set, naming its zero bits; a present key is probably in it', async () => {
    let absent;
    for (let i = 0; !absent; i++) if (!mirror.has(`zebra-${i}`)) absent = `zebra-${i}`;
    const positions = mirror.positions(absent);
    const bytes = mirror.toBytes();
    const zeros = sorted(positions.filter((p) => !valueAt(bytes, 'classic', p)));
    const verdict = await testKey(absent);
    assert.match(verdict, /certainly not in the set/);
    assert.match(verdict, zeros.length === 1 ? new RegExp(`bit ${zeros[0]} is 0`) : /bits .* are 0/);
    for (const z of zeros) assert.ok(verdict.includes(String(z)), `verdict names zero bit ${z}`);
    assert.deepEqual(await marked('.c.zero'), zeros);
    assert.deepEqual(await marked('.c.zero, .c.probe'), sorted(positions));
    await shot('absent-desktop');

    const present = await testKey('pear');
    assert.match(present, /"pear": probably in the set/);
    assert.match(present, /added on this page/);
    assert.equal(await page.textContent('#explain'), '');
  });

  // expectedExplanation maps each probed bit to the earlier keys that set it.
  function expectedExplanation(key, added) {
    const out = {};
    for (const p of mirror.positions(key)) out[p] = added.filter((k) => mirror.positions(k).includes(p)).sort();
    return out;
  }

  async function shownExplanation() {
    return page.$$eval('#fplist li', (lis) =>
      Object.fromEntries(
        lis.map((li) => [li.dataset.bit, [...li.querySelectorAll('.kname')].map((q) => q.textContent).sort()]),
      ),
    );
  }

  test('a false positive is explained by the earlier keys that set each bit', async () => {
    // One found in Node, typed into the page.
    let fp;
    for (let i = 0; !fp; i++) if (mirror.has(`word-${i}`)) fp = `word-${i}`;
    const verdict = await testKey(fp);
    assert.match(verdict, /probably in the set/);
    assert.match(verdict, /never added: this is a false positive/);
    assert.deepEqual(await shownExplanation(), expectedExplanation(fp, keys));
    await shot('false-positive-desktop');

    // One the page finds itself.
    await page.fill('#key', '');
    await page.click('#findfp');
    await page.waitForFunction(() =>
      /Found after|No false positive/.test(document.querySelector('#verdict').textContent),
    );
    const found = await page.inputValue('#key');
    assert.match(
      await page.textContent('#verdict'),
      new RegExp(`Found after [0-9,]+ tr(y|ies): "${found}": probably in the set`),
    );
    assert.ok(mirror.has(found) && !keys.includes(found), `${found} is a false positive`);
    assert.deepEqual(await shownExplanation(), expectedExplanation(found, keys));
  });

  test('an empty key gets a message next to the field, and the page keeps working', async () => {
    await page.fill('#key', '');
    await page.click('#test');
    assert.match(await page.textContent('#key-err'), /Type a key first/);
    await page.press('#key', 'Enter');
    assert.match(await page.textContent('#key-err'), /Type a key first/);
    assert.equal(await page.textContent('#keycount'), String(keys.length));
    await shot('empty-key-desktop');
    assert.match(await testKey('kiwi'), /probably in the set/);
    assert.equal(await page.textContent('#key-err'), '');
  });

  test('adding a key already there is headed as a duplicate, or as a false positive when it never was added', async () => {
    await setParams({ kind: 'classic', sizing: 'np', n: 20, p: '0.05' });
    await page.click('#create');
    const f = new eb.BloomFilter({ capacity: 20, errorRate: 0.05 });
    onCleanup(() => f.free());
    for (const key of ['apple', 'pear', 'kiwi', 'plum', 'fig', 'lime']) {
      f.add(key);
      await addKey(key);
    }
    assert.equal(await addKey('apple'), 'Duplicate: "apple" was already added.');
    assert.match(
      await page.textContent('#verdict'),
      /already 1 \(amber\), so add\(\) answered "already there" and the filter did not change/,
    );
    let fp;
    for (let i = 0; !fp && i < 1_000_000; i++) if (f.has(`never-${i}`)) fp = `never-${i}`;
    assert.ok(fp, 'a key never added whose bits are all set');
    assert.equal(await addKey(fp), `Already there: "${fp}" was never added, yet all its bits were set.`);
    await page.waitForTimeout(700);
    await shot('duplicate-desktop');
    // A counting filter counts a duplicate again, and says so.
    await page.check('input[name="kind"][value="counting"]');
    await page.click('#create');
    await addKey('apple');
    assert.equal(await addKey('apple'), 'Duplicate: "apple" was already added.');
    assert.match(await page.textContent('#verdict'), /each went up by one more/);
    // A new key is "Added".
    assert.equal(await addKey('pear'), 'Added "pear".');
  });
});
