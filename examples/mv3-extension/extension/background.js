// The extension's service worker: every page a tab finishes loading is
// tested and added to a Bloom filter in one call; the badge says "new" on a
// page never seen before. The filter lives in IndexedDB: written after each
// change, read back when the worker starts (Chrome stops an idle worker
// after 30 s, and all module state goes with it).
//
// Service workers reject dynamic import() and top-level await: the imports
// are static, and the start is a promise every event waits on.
/* global chrome */
import { init, BloomFilter } from './edgebloom/index.js';
import { load, save } from './store.js';

// 1,000,000 URLs at 1 %: 1,198,208 bytes in IndexedDB, whatever the number
// of URLs in it so far (a ScalableBloomFilter grows instead: 2.9 MB at 1M).
const CAPACITY = 1_000_000;
const ERROR_RATE = 0.01;
const NAME = 'visited';

// performance.now() counts from the worker's start: t0 is the time it took
// to fetch and evaluate the scripts.
const t0 = performance.now();
/** How this start went: the engine's start (init), then reading and loading the filter, in ms. */
self.wakeUp = null;
/** The filter, once the engine started and the saved one is loaded. */
self.ready = (async () => {
  await init(); // fetches edgebloom/edgebloom.wasm from the extension
  const t1 = performance.now();
  const bytes = await load(NAME);
  const filter = bytes ? BloomFilter.fromBytes(bytes) : new BloomFilter({ capacity: CAPACITY, errorRate: ERROR_RATE });
  const t2 = performance.now();
  self.wakeUp = {
    scriptMs: t0,
    engineMs: t1 - t0,
    loadMs: t2 - t1,
    totalMs: t2,
    keys: filter.count,
    bytes: bytes?.byteLength ?? 0,
  };
  return filter;
})();

// Writes coalesce: a change made while a write runs is saved by one more
// write after it, so the last state always reaches IndexedDB.
let saving = null;
let dirty = false;
function persist(filter) {
  dirty = true;
  saving ??= (async () => {
    try {
      while (dirty) {
        dirty = false;
        await save(NAME, filter.toBytes());
      }
    } finally {
      saving = null;
    }
  })();
  return saving;
}

/** Tests and adds urls; resolves with which were new, once they are saved. */
self.visit = async (urls) => {
  const filter = await self.ready;
  const fresh = filter.addMany(urls);
  if (fresh.includes(true)) await persist(filter);
  return fresh;
};

/** Which of urls were seen before (nothing is added). */
self.seen = async (urls) => (await self.ready).hasMany(urls);

// Listeners are added at the top level, synchronously, so that the event
// that wakes a stopped worker reaches them.
// Pages handled since this start; a 'visited' event on self follows each.
self.pages = { seen: 0, new: 0 };
chrome.webNavigation.onCompleted.addListener(async ({ tabId, frameId, url }) => {
  if (frameId !== 0 || !/^https?:/.test(url)) return;
  const [isNew] = await self.visit([url]);
  await chrome.action.setBadgeText({ tabId, text: isNew ? 'new' : '' });
  self.pages[isNew ? 'new' : 'seen']++;
  self.dispatchEvent(new Event('visited'));
});
