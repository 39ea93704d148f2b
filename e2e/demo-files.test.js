// The demo's section 6: a filter downloaded opens again, filters written by
// Go and a Worker's sharded snapshot open and answer, and a file that is
// not a filter gets a message.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import * as eb from 'edgebloom';
import { crawlerURLs, shardedContainer } from '../js/test/helpers.js';
import { onCleanup, tempDir } from '../testkit/process.js';
import { addKey, goFilters, openPage, page, setParams, shot, testKey, useDemo } from './demo-helpers.js';

useDemo();

describe('saving and opening filters', () => {
  async function openFile(file) {
    await page.setInputFiles('#file', file);
    await page.waitForFunction(
      (name) =>
        document.querySelector('#file-err').textContent ||
        document.querySelector('#fileinfo').textContent.includes(name),
      path.basename(file),
    );
  }

  test('a downloaded filter opens again: the same bytes, count and answers, and the page says what it cannot know', async () => {
    await setParams({ n: 20, p: '0.05' });
    await page.click('#create');
    const mirror = new eb.BloomFilter({ capacity: 20, errorRate: 0.05 });
    onCleanup(() => mirror.free());
    for (const key of ['apple', 'pear', 'kiwi']) {
      mirror.add(key);
      await addKey(key);
    }
    const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
    const file = path.join(await tempDir('demo-dl'), dl.suggestedFilename());
    await dl.saveAs(file);
    assert.deepEqual(await readFile(file), Buffer.from(mirror.toBytes()), 'the download is the filter');
    // Opened on a fresh page, with nothing of what was added before.
    await openPage();
    await openFile(file);
    assert.equal(await page.textContent('#file-err'), '');
    assert.match(await page.textContent('#fileinfo'), /Keys added3(?![0-9])/);
    assert.match(await page.textContent('#status'), /Opened .*: a classic filter with 3 keys/);
    const yes = await testKey('pear');
    assert.match(yes, /"pear": probably in the set/);
    assert.match(yes, /opened from a file, so the page cannot tell whether "pear" was added or is a false positive/);
    let absent;
    for (let i = 0; !absent; i++) if (!mirror.has(`zebra-${i}`)) absent = `zebra-${i}`;
    assert.match(await testKey(absent), /certainly not in the set.*so it was never added to this filter\./);
  });

  test('filters written by Go open, show their parameters and answer like Go', async () => {
    const vectors = await goFilters();
    const dir = await tempDir('demo-go');
    let checked = 0;
    for (const v of vectors) {
      const file = path.join(dir, `${v.name.replace(/\W+/g, '-')}.bloom`);
      await writeFile(file, Buffer.from(v.base64, 'base64'));
      await page.setInputFiles('#file', []);
      await openFile(file);
      assert.equal(await page.textContent('#file-err'), '', v.name);
      const info = await page.textContent('#fileinfo');
      assert.match(info, new RegExp(`Kind${v.kind}`), v.name);
      assert.match(info, new RegExp(`Keys added${v.count.toLocaleString('en-US')}(?![0-9])`), v.name);
      const picked = sample(v);
      const verdicts = await verdictsFor(picked.map((i) => v.probes[i]));
      picked.forEach((i, j) => {
        const key = v.probes[i];
        assert.ok(verdicts[j].includes(`"${key}": `), `verdict about ${key}`);
        assert.match(verdicts[j], v.has[i] ? /probably in the set/ : /certainly not in the set/, `${v.name}: ${key}`);
        checked++;
      });
      if (v.kind === 'counting') await shot('go-counting-desktop');
    }
    assert.ok(checked > 20, `checked ${checked} answers`);
  });

  test('a sharded Worker snapshot opens and answers for every shard', async () => {
    const keys = crawlerURLs(300, 'https://snap.example');
    const bytes = shardedContainer(eb, 3, keys);
    const file = path.join(await tempDir('demo-sharded'), 'snapshot.bloom');
    await writeFile(file, bytes);
    await page.setInputFiles('#file', []);
    await openFile(file);
    assert.equal(await page.textContent('#file-err'), '');
    const info = await page.textContent('#fileinfo');
    assert.match(info, /Kindsharded/);
    const probes = [...keys.slice(0, 5), 'https://never.example/added'];
    const node = eb.fromBytes(bytes);
    const want = probes.map((k) => node.has(k));
    node.free();
    const verdicts = await verdictsFor(probes);
    probes.forEach((k, i) =>
      assert.match(verdicts[i], want[i] ? /probably in the set/ : /certainly not in the set/, k),
    );
    assert.deepEqual(want.slice(0, 5), [true, true, true, true, true]);
  });

  // verdictsFor types and tests each key in the page in one round trip (the
  // Test button answers synchronously) and returns the verdicts.
  function verdictsFor(keys) {
    return page.evaluate((keys) => {
      const input = document.querySelector('#key');
      return keys.map((key) => {
        input.value = key;
        input.dispatchEvent(new Event('input', { bubbles: true }));
        document.querySelector('#test').click();
        return document.querySelector('#verdict').textContent;
      });
    }, keys);
  }

  // sample picks the probes to type: every false positive (a "yes" for a
  // key never added) and up to 6 other yeses and 6 noes. Keys an <input>
  // cannot hold (the empty key, control characters) are left out.
  function sample(v) {
    const typable = [...v.probes.keys()].filter((i) => v.probes[i] !== '' && !/[\x00-\x1f]/.test(v.probes[i]));
    const fps = typable.filter((i) => v.has[i] && v.probes[i].includes('/absent/')).slice(0, 4);
    const yes = typable.filter((i) => v.has[i] && !fps.includes(i)).slice(0, 6);
    const no = typable.filter((i) => !v.has[i]).slice(0, 6);
    return [...fps, ...yes, ...no];
  }

  test('a file that is not a filter gets a message next to the field, and the page keeps working', async () => {
    const dir = await tempDir('demo-bad');
    const text = path.join(dir, 'notes.txt');
    await writeFile(text, 'this is not a Bloom filter, just some text that is long enough to have a header');
    await openFile(text);
    assert.match(await page.textContent('#file-err'), /not an edgebloom filter/);
    assert.equal(await page.getAttribute('#file', 'aria-invalid'), 'true');
    await shot('bad-file-desktop');
    // Shorter than a header, and not a filter's start: not a filter, not "cut short".
    for (const [name, body] of [
      ['twelve.txt', 'hello, world'],
      ['empty.bin', ''],
    ]) {
      const file = path.join(dir, name);
      await writeFile(file, body);
      await page.setInputFiles('#file', []);
      await page.$eval('#file-err', (e) => (e.textContent = ''));
      await openFile(file);
      assert.match(await page.textContent('#file-err'), /not an edgebloom filter/, name);
    }

    const damaged = path.join(dir, 'damaged.bloom');
    const made = new eb.BloomFilter({ capacity: 100, errorRate: 0.01 });
    made.addMany(['apple', 'pear', 'kiwi']);
    const bytes = Buffer.from(made.toBytes());
    made.free();
    bytes[80] ^= 0xff;
    await writeFile(damaged, bytes);
    await page.setInputFiles('#file', []);
    await openFile(damaged);
    assert.match(await page.textContent('#file-err'), /damaged|checksum/);

    const short = path.join(dir, 'short.bloom');
    await writeFile(short, bytes.subarray(0, 30));
    await page.setInputFiles('#file', []);
    await openFile(short);
    assert.match(await page.textContent('#file-err'), /cut short/);

    // The page still works: a fresh filter takes keys.
    await setParams({ kind: 'classic', sizing: 'np', n: 20, p: '0.05' });
    await page.click('#create');
    await addKey('still works');
    assert.match(await testKey('still works'), /probably in the set/);
  });
});
