// What examples/sync-extension costs at the size of a real blocklist: a
// filter of `keys` keys at 1 % in `shards` shards in the Worker (Miniflare),
// the extension loaded unpacked in headless Chromium (testkit/
// sync-extension.js): the first sync, a sync with nothing new, 10 k and
// 100 k new keys, a wake-up from IndexedDB, and the storage it takes. Run
// from the repository root, after `bash build.sh build`:
//
//   node worker/bench/sync-extension.js [keys, default 10000000] [shards, default 4]
//
// e2e/sync-extension.test.js runs the same at 1 M keys and checks it.
import { measureSyncExtension } from '../../testkit/sync-extension.js';
import { cleanup } from '../../testkit/process.js';

const keys = Number(process.argv[2] ?? 10_000_000);
const shards = Number(process.argv[3] ?? 4);
const MB = (b) => (b / 1e6).toFixed(2);
try {
  const r = await measureSyncExtension({ keys, shards, log: (line) => console.error(line) });
  const row = (what, s) =>
    console.log(
      `| ${what} | ${Math.round(s.ms)} ms | ${s.bytes === undefined ? MB(r.filterBytes) : MB(s.bytes)} MB | ` +
        `${s.writes} (${MB(s.bytesWritten)} MB) | ${MB(s.peak)} MB |`,
    );
  console.log(`${keys} keys in ${shards} shards at 1 %: the filter ${MB(r.filterBytes)} MB`);
  console.log('| sync | time in the worker | fetched | IndexedDB writes | memory peak over before |');
  console.log('| --- | --- | --- | --- | --- |');
  row('first (the snapshot)', r.first);
  row('nothing new', r.idle);
  for (const inc of r.increments) row(`${inc.keys} new keys`, inc);
  console.log(`wake-up (engine, copy read back, deltas kept applied): ${Math.round(r.wake.ms)} ms`);
  console.log(`storage (navigator.storage.estimate): ${MB(r.storage)} MB`);
} finally {
  await cleanup();
}
