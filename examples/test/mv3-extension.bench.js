// The wake-up of examples/mv3-extension's service worker: how long a start
// takes (the engine's start, then reading the filter from IndexedDB and
// loading it) with 100,000 and 1,000,000 keys saved. A measurement, not a
// test: it prints a table for examples/mv3-extension/README.md.
//
//   node examples/test/mv3-extension.bench.js   (from the repository root; packs the package first)
//
// Each row: the extension loaded afresh, its filter filled with that many
// keys through self.visit (test-and-add, then save), then 7 times: stop the
// worker (as Chrome stops an idle one), wake it with a page load, read its
// self.wakeUp. Medians of the 7; the first start (nothing saved yet) apart.

import { cleanup } from '../../testkit/process.js';
import { serve } from '../../testkit/browser.js';
import { loadExtension } from './extension.js';

const runs = [
  { capacity: 1_000_000, keys: 100_000 },
  { capacity: 1_000_000, keys: 1_000_000 },
  { capacity: 100_000, keys: 100_000 },
];
const wakes = 7;
const chunk = 50_000;

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const ms = (x) => x.toFixed(1).padStart(7);

try {
  const site = await serve({ pages: { '/': '<p>wake up</p>' } });
  console.log(
    'capacity   keys       bytes      first start  | wake-up: script  engine  load    total (ms, median of 7)',
  );
  for (const { capacity, keys } of runs) {
    const ext = await loadExtension({ capacity });
    const { worker } = ext;
    const first = await worker.evaluate(async () => (await self.ready, self.wakeUp));
    for (let i = 0; i < keys; i += chunk) {
      const batch = Array.from({ length: Math.min(chunk, keys - i) }, (_, j) => `https://example.com/page/${i + j}`);
      await worker.evaluate((b) => self.visit(b), batch);
    }
    const page = await ext.browser.context.newPage();
    const seen = [];
    for (let w = 0; w < wakes; w++) {
      await ext.stop();
      await page.goto(`${site.origin}/?${w}`);
      await ext.running();
      seen.push(await worker.evaluate(async () => (await self.ready, self.wakeUp)));
    }
    const m = (k) => ms(median(seen.map((s) => s[k])));
    console.log(
      `${String(capacity).padEnd(10)} ${String(keys).padEnd(10)} ${String(seen[0].bytes).padEnd(10)} ${ms(first.totalMs)}      | ${m('scriptMs')} ${m('engineMs')} ${m('loadMs')} ${m('totalMs')}`,
    );
    await ext.browser.context.close();
  }
} finally {
  await cleanup();
}
