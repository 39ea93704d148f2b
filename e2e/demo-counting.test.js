// The demo's counting filter: counters, Remove, "Remove anyway" and the
// false negative it makes, Undo and Reset, and Enter's action.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as eb from 'edgebloom';
import { onCleanup } from '../testkit/process.js';
import {
  addKey,
  button,
  costlyFalsePositive,
  keyField,
  marked,
  page,
  savedBytes,
  setParams,
  shot,
  sorted,
  testKey,
  useDemo,
  valueAt,
} from './demo-helpers.js';

useDemo();

describe('a counting filter: removal and its cost', () => {
  test('counting mode shows counters and removes keys', async () => {
    await setParams({ kind: 'counting', sizing: 'mk', n: 10, m: 64, k: 3 });
    await page.click('#create');
    assert.equal(await page.isVisible('#remove'), true);
    const c = new eb.CountingBloomFilter({ bits: 64, hashes: 3 });
    onCleanup(() => c.free());
    const counters = async () => {
      const bytes = c.toBytes();
      const want = Array.from({ length: 64 }, (_, i) => valueAt(bytes, 'counting', i) || '');
      const got = await page.$$eval('#grid .c', (cells) =>
        cells.map((x) => (x.textContent ? Number(x.textContent) : '')),
      );
      assert.deepEqual(got, want);
    };
    for (const key of ['red', 'green', 'red', 'blue']) {
      c.add(key);
      await addKey(key);
      assert.deepEqual(await marked('.c.new, .c.old'), sorted(c.positions(key)));
    }
    await counters();
    await shot('counting-desktop');

    c.remove('red');
    await page.fill('#key', 'red');
    await page.click('#remove');
    await page.waitForFunction(() => document.querySelector('#verdict').textContent.includes('Removed "red"'));
    await counters();
    assert.deepEqual(await marked('.c.dec'), sorted(c.positions('red')));
    assert.match(await testKey('red'), /probably in the set/); // added twice, removed once

    c.remove('green');
    await page.fill('#key', 'green');
    await page.click('#remove');
    await page.waitForFunction(() => document.querySelector('#verdict').textContent.includes('Removed "green"'));
    await counters();
    assert.equal(c.has('green'), (await testKey('green')).includes('probably'));

    // A key never added is not removed, even when the filter says "probably".
    let fp;
    for (let i = 0; !fp && i < 100_000; i++) if (c.has(`x${i}`)) fp = `x${i}`;
    if (fp) {
      await page.fill('#key', fp);
      await page.click('#remove');
      await page.waitForFunction(() => document.querySelector('#verdict').textContent.includes('will not remove'));
      await counters();
    }
    await page.waitForTimeout(700);
    await shot('counting-removed-desktop');
  });

  test('"Remove anyway", confirmed, makes a false negative that the page names', async () => {
    await page.check('input[name="kind"][value="counting"]');
    await page.check('input[name="sizing"][value="mk"]');
    await page.fill('#n', '5');
    await page.fill('#m', '40');
    await page.fill('#k', '3');
    await button('Make a new, empty filter').click();
    const keys = ['red', 'green', 'blue', 'cyan'];
    const c = new eb.CountingBloomFilter({ bits: 40, hashes: 3 });
    onCleanup(() => c.free());
    for (const key of keys) {
      c.add(key);
      await keyField().fill(key);
      await button('Add').click();
    }
    // A key never added that the filter says "probably" to, whose removal costs an added key, found in Node.
    const { fp, lost } = costlyFalsePositive(c, keys);
    await keyField().fill(fp);
    await button('Remove').click();
    assert.match(await page.textContent('#verdict'), /will not remove/);
    await button('Remove anyway…').click();
    const confirm = page.getByRole('group', { name: 'Confirm the removal' });
    assert.match(await confirm.textContent(), /though it was never added/);
    await page.waitForTimeout(0);
    await shot('remove-confirm-desktop', page);
    await button(`Yes, remove "${fp}"`).click();
    c.remove(fp);
    await page.waitForSelector('#lostlist');
    assert.match(
      await page.textContent('#verdict .verdict-head'),
      new RegExp(`Removed "${fp}" anyway: .* now a false negative`),
    );
    const named = await page.$$eval('#lostlist li', (lis) => lis.map((li) => li.dataset.lost));
    assert.deepEqual(named, lost, 'the page names the keys the removal lost');
    for (const key of lost) {
      assert.equal(c.has(key), false, `${key} is a false negative in Node too`);
      assert.equal(await page.getByRole('button', { name: `Test ${key} (added, now a false negative)` }).count(), 1);
    }
    // The counters that fell, purple; outlined when one cost an added key.
    const fell = sorted(c.positions(fp));
    assert.deepEqual(
      await page.$$eval('#grid .c.dec', (cells) => cells.map((x) => Number(x.dataset.i)).sort((a, b) => a - b)),
      fell,
    );
    const costly = sorted(
      lost.flatMap((k) => c.positions(k)).filter((p) => fell.includes(p) && valueAt(c.toBytes(), 'counting', p) === 0),
    );
    assert.deepEqual(
      await page.$$eval('#grid .c.lost', (cells) => cells.map((x) => Number(x.dataset.i)).sort((a, b) => a - b)),
      costly,
    );
    await keyField().fill(lost[0]);
    await button('Test').click();
    assert.match(await page.textContent('#verdict'), new RegExp(`"${lost[0]}": certainly not in the set`));
    await page.waitForTimeout(700);
    await page.locator('#keys-h').scrollIntoViewIfNeeded();
    await shot('false-negative-desktop', page);
  });

  test('Undo and Reset restore the bytes the filter had', async () => {
    await page.check('input[name="kind"][value="classic"]');
    await page.check('input[name="sizing"][value="np"]');
    await page.fill('#n', '100');
    await page.fill('#p', '0.05');
    await button('Make a new, empty filter').click();
    for (const key of ['apple', 'pear']) {
      await keyField().fill(key);
      await button('Add').click();
    }
    const two = await savedBytes();
    await keyField().fill('kiwi');
    await button('Add').click();
    const three = await savedBytes();
    assert.notDeepEqual(three, two);
    await page.getByRole('button', { name: /^Undo/ }).click();
    assert.deepEqual(await savedBytes(), two, 'Undo restores the bytes before the add');
    assert.equal(await page.textContent('#keycount'), '2');
    await button('Reset (empty the filter)').click();
    const empty = new eb.BloomFilter({ capacity: 100, errorRate: 0.05 });
    onCleanup(() => empty.free());
    assert.deepEqual(await savedBytes(), Buffer.from(empty.toBytes()), 'Reset empties the filter, same size');
    assert.equal(await page.textContent('#keycount'), '0');
    await page.getByRole('button', { name: /^Undo/ }).click();
    assert.deepEqual(await savedBytes(), two, 'Undo brings back the keys a Reset took');
    assert.equal(await page.textContent('#keycount'), '2');
    assert.match(await page.textContent('#verdict'), /Undone/);
  });

  test('Enter after Test adds nothing: it tests again, as the field says', async () => {
    const before0 = await savedBytes();
    await keyField().fill('never-added-key');
    await button('Test').click();
    assert.match(await page.textContent('#key-help'), /Enter tests the key.*it adds nothing/);
    await page.$eval('#verdict', (v) => v.replaceChildren());
    await keyField().press('Enter');
    await page.waitForFunction(() => document.querySelector('#verdict').textContent.includes('"never-added-key":'));
    assert.match(await page.textContent('#verdict'), /certainly not in the set/);
    assert.deepEqual(await savedBytes(), before0, 'the filter did not change');
    assert.equal(await page.textContent('#keycount'), '2');
    await button('Add').click();
    assert.match(await page.textContent('#key-help'), /Enter adds the key/);
  });
});

describe('the verdict after a removal says what happened to the key', () => {
  const fruits = ['apple', 'banana', 'cherry', 'grape', 'lemon', 'mango'];
  let c;

  test('after "Remove anyway" names "apple" a false negative, testing "apple" says it was added and is a false negative', async () => {
    await setParams({ kind: 'counting', sizing: 'mk', n: 6, m: 40, k: 3 });
    await page.click('#create');
    c = new eb.CountingBloomFilter({ bits: 40, hashes: 3 });
    onCleanup(() => c.free());
    for (const key of fruits) {
      c.add(key);
      await addKey(key);
    }
    // A key never added, "probably" in the filter, whose removal takes one of apple's counters to 0.
    const { fp } = costlyFalsePositive(c, fruits, ['apple']);
    await keyField().fill(fp);
    await button('Remove').click();
    await button('Remove anyway…').click();
    await button(`Yes, remove "${fp}"`).click();
    c.remove(fp);
    await page.waitForSelector('#lostlist li[data-lost="apple"]');
    const verdict = await testKey('apple');
    assert.match(verdict, /"apple": certainly not in the set\./);
    assert.match(verdict, /Yet "apple" was added on this page: this is a false negative/);
    assert.match(verdict, new RegExp(`Removing "${fp}" anyway, though never added, took (it|them) to 0`));
    assert.doesNotMatch(verdict, /"apple" would have set|so it was never added/);
    assert.equal(await page.getAttribute('#verdict .verdict-head', 'data-history'), 'added');
    await page.waitForTimeout(700);
    await shot('false-negative-tested-desktop');
  });

  test('after a Remove of "banana", testing it says it was added and removed', async () => {
    await keyField().fill('banana');
    await button('Remove').click();
    await page.waitForFunction(() => document.querySelector('#verdict').textContent.includes('Removed "banana"'));
    c.remove('banana');
    const verdict = await testKey('banana');
    assert.doesNotMatch(verdict, /Adding "banana" would have set|so it was never added|"banana" was never added/);
    if (c.has('banana')) {
      assert.match(verdict, /"banana": probably in the set\..*But "banana" was removed: other keys still hold/s);
    } else {
      assert.match(verdict, /"banana": certainly not in the set\..*"banana" was added and then removed/s);
    }
    assert.equal(await page.getAttribute('#verdict .verdict-head', 'data-history'), 'removed');
    // Undo brings it back as added.
    await page.getByRole('button', { name: /^Undo/ }).click();
    assert.match(await testKey('banana'), /And it really is: it was added on this page\./);
  });
});

describe('the form and the Enter key follow the filter on show', () => {
  test('Undo of "Make a new filter" puts back the form of the filter it brings back', async () => {
    await setParams({ kind: 'classic', sizing: 'mk', n: 10, m: 300, k: 5 });
    await page.click('#create');
    await setParams({ kind: 'counting', sizing: 'mk', n: 10, m: 80, k: 2 });
    await page.click('#create');
    assert.match(await page.textContent('#stats dd[data-name="Size m"]'), /^80 counters/);
    await page.getByRole('button', { name: /^Undo/ }).click();
    assert.match(await page.textContent('#stats dd[data-name="Size m"]'), /^300 bits/);
    assert.deepEqual(
      await page.evaluate(() => ({
        kind: document.querySelector('input[name="kind"]:checked').value,
        m: document.querySelector('#m').value,
        k: document.querySelector('#k').value,
      })),
      { kind: 'classic', m: '300', k: '5' },
    );
  });

  test('Enter after Remove removes; after a classic filter is made, Enter adds again, as the field says', async () => {
    await setParams({ kind: 'counting', sizing: 'mk', n: 10, m: 64, k: 3 });
    await page.click('#create');
    await addKey('plum');
    await keyField().fill('plum');
    await button('Remove').click();
    assert.match(await page.textContent('#key-help'), /Enter removes the key/);
    await setParams({ kind: 'classic', sizing: 'mk', n: 10, m: 64, k: 3 });
    await page.click('#create');
    assert.match(await page.textContent('#key-help'), /Enter adds the key/);
    await keyField().fill('fig');
    await keyField().press('Enter');
    await page.waitForFunction(() => document.querySelector('#verdict').textContent.includes('Added "fig"'));
  });
});
