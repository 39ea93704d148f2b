// examples/mv3-extension: the packed package in an MV3 extension loaded into
// Chromium. Pages a tab opens are deduped by the service worker; the filter
// is written to IndexedDB after each change, and after the worker is
// stopped (as Chrome stops an idle one) and woken by the next page, every
// key is back.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { cleanup, timeout } from '../../testkit/process.js';
import { serve } from '../../testkit/browser.js';
import { loadExtension, pagesHandled } from './extension.js';

let ext;
let site;
before(
  async () => {
    site = await serve({ pages: { '/a': '<p>a</p>', '/b': '<p>b</p>', '/c': '<p>c</p>' } });
    ext = await loadExtension();
  },
  { timeout },
);
after(cleanup);

test('pages opened in a tab are deduped, and every key is back after the worker was stopped', { timeout }, async () => {
  const { worker, browser } = ext;
  const page = await browser.context.newPage();
  const url = (p) => `${site.origin}${p}`;
  for (const p of ['/a', '/b', '/a']) await page.goto(url(p));
  assert.deepEqual(await pagesHandled(worker, 3), { seen: 1, new: 2 });

  // Many more keys, through the same path (test-and-add, then save).
  const keys = Array.from({ length: 50_000 }, (_, i) => `https://example.com/page/${i}?q=${(i * 7919) % 1000}`);
  for (let i = 0; i < keys.length; i += 10_000) {
    const fresh = await worker.evaluate((chunk) => self.visit(chunk), keys.slice(i, i + 10_000));
    assert.equal(fresh.filter(Boolean).length, 10_000);
  }
  await worker.evaluate(() => (self.marker = 'before the stop'));

  await ext.stop();
  await page.goto(url('/c')); // the navigation wakes the worker
  await ext.running();
  assert.deepEqual(await pagesHandled(worker, 1), { seen: 0, new: 1 });
  assert.equal(await worker.evaluate(() => self.marker), undefined, 'a fresh start of the worker');

  const wakeUp = await worker.evaluate(() => self.wakeUp);
  assert.equal(wakeUp.keys, 2 + keys.length, JSON.stringify(wakeUp));
  const back = await worker.evaluate((all) => self.seen(all), [...keys, url('/a'), url('/b'), url('/c')]);
  assert.equal(back.filter((b) => !b).length, 0, 'keys missing after the restart');
  browser.assertClean();
});
