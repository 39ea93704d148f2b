// Keeps a copy of an edgebloom service filter in this page: loaded from
// IndexedDB if a copy is there, else from the snapshot of the service's
// latest checkpoint, then kept up on a timer with the deltas between
// checkpoints (worker/README.md, "Snapshots and local copies"), which every
// reader of the filter shares from the edge cache: a million pages cost the
// service what one does. After each sync the copy and its checkpoint go
// back to IndexedDB, so a reload resumes with a delta, not the snapshot.
//
// The page may be served from any origin the service lists in
// EDGEBLOOM_ALLOWED_ORIGINS (?service= is the service's URL; the page's own
// origin when absent), and holds a read token: it can read the filter and
// nothing else, so every browser that keeps a copy holds no more than that.
//
// An app imports 'edgebloom' (its bundler resolves it); this page is served
// with the package's js/ at /js/, and examples/ beside it: the requests to
// the service, their retries and the words of a failure are the
// extension's (../sync-extension/checkpoints.js), for a page as for it.
import { init, fromBytes, applyDelta } from '/js/index.js';
import { nextSync, readBody } from '../sync-extension/checkpoints.js';

const params = new URLSearchParams(location.search);
const config = {
  service: params.get('service') ?? location.origin,
  token: params.get('token') ?? '',
  filter: params.get('filter') ?? 'crawl',
};
const every = Number(params.get('every') ?? 30_000);
const status = document.getElementById('status');

// IndexedDB: one record a filter name, {bytes, at, savedAt}.
const db = new Promise((resolve, reject) => {
  const open = indexedDB.open('edgebloom-sync', 1);
  open.onupgradeneeded = () => open.result.createObjectStore('copies');
  open.onsuccess = () => resolve(open.result);
  open.onerror = () => reject(open.error);
});
async function idb(mode, op) {
  const store = (await db).transaction('copies', mode).objectStore('copies');
  return new Promise((resolve, reject) => {
    const req = op(store);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

let copy = null;
// The checkpoint the copy is at: {generation, checkpoint, cursor}.
let at = null;
/**
 * What the page did: keys is the copy's count, lastSync when a sync last
 * worked (ms since the epoch; the saved copy's time after a reload),
 * retries the waits on a busy service, error and code the last failure's.
 */
const state = {
  syncs: 0,
  formats: [],
  bytes: 0,
  fromStorage: false,
  error: null,
  code: null,
  keys: null,
  lastSync: null,
  retries: [],
};
const when = (ms) => (ms ? new Date(ms).toLocaleTimeString() : 'never');
const show = (text) => (status.textContent = `${text} Last synced: ${when(state.lastSync)}; ${state.keys ?? 0} keys.`);

async function sync() {
  const onWait = ({ ms, status: s, code, attempt }) => {
    state.retries.push({ ms, status: s, code });
    show(`The service is busy (${s} ${code}): try ${attempt + 1} in ${(ms / 1000).toFixed(1)} s.`);
  };
  const { latest, kind, res } = await nextSync(config, at, { onWait });
  let bytes = new Uint8Array(0);
  if (kind !== 'none') {
    bytes = await readBody(res);
    if (kind === 'delta') applyDelta(copy, bytes, at.cursor);
    else {
      // The first sync, another generation, or a checkpoint too old (410).
      const next = fromBytes(bytes);
      copy?.free();
      copy = next;
    }
    at = { generation: latest.generation, checkpoint: latest.checkpoint, cursor: latest.cursor };
    await idb('readwrite', (s) => s.put({ bytes: copy.toBytes(), at, savedAt: Date.now() }, config.filter));
    state.formats.push(res.headers.get('X-Edgebloom-Format'));
    state.bytes += bytes.length;
  }
  state.syncs++;
  // stats() has the count for every kind of copy, a ShardedBloomFilter's too.
  state.keys = copy.stats().count;
  state.lastSync = Date.now();
  show(`${state.syncs} syncs (the last: ${kind}, ${bytes.length} bytes).`);
}

async function main() {
  await init();
  const saved = await idb('readonly', (s) => s.get(config.filter));
  if (saved) {
    copy = fromBytes(saved.bytes);
    at = saved.at;
    Object.assign(state, { fromStorage: true, keys: copy.stats().count, lastSync: saved.savedAt ?? null });
  }
  const tick = async () => {
    let next = every;
    try {
      await sync();
      state.error = state.code = null;
    } catch (err) {
      Object.assign(state, { error: err.message, code: err.code ?? null });
      // Still busy after the retries: again after its Retry-After, not a whole period.
      next = err.retryAfterMs ?? every;
      show(`Sync failed: ${err.message}. Next try in ${(next / 1000).toFixed(1)} s.`);
    }
    setTimeout(tick, next);
  };
  await tick();
  document.getElementById('check').onsubmit = (e) => {
    e.preventDefault();
    const key = document.getElementById('key').value;
    document.getElementById('answer').textContent = copy?.has(key) ? 'probably seen' : 'certainly not seen';
  };
}

// For the test (e2e/sync-example.test.js) and the console.
window.syncExample = {
  state,
  has: (keys) => copy.hasMany(keys),
  bytes: () => copy.toBytes(),
};
main();
