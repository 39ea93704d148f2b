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
//
// A filter made with "canonicalize": true holds canonical URLs: the page
// reads the filter's parameters (GET /v1/filters/NAME, which a read token
// may) with each snapshot it loads, and then looks up canonicalURL(key),
// as the service checks it, so any spelling of a URL the filter holds is
// found.
import { init, fromBytes, applyDelta, canonicalURL } from '/js/index.js';
import { get, nextSync, readBody } from '../sync-extension/checkpoints.js';

const params = new URLSearchParams(location.search);
const config = {
  service: params.get('service') ?? location.origin,
  token: params.get('token') ?? '',
  filter: params.get('filter') ?? 'crawl',
};
const every = Number(params.get('every') ?? 30_000);
const filterURL = `${config.service.replace(/\/$/, '')}/v1/filters/${encodeURIComponent(config.filter)}`;
const status = document.getElementById('status');

// IndexedDB: one record a filter name, {bytes, at, savedAt, canonicalize}.
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
// The filter's "canonicalize" parameter, read with the snapshot.
let canonicalize = false;
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
  canonicalize: false,
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
      // The first sync, another generation (the filter may have been made
      // again, with other parameters), or a checkpoint too old (410).
      const next = fromBytes(bytes);
      const params = await (await get(filterURL, { ...config, onWait })).json();
      copy?.free();
      copy = next;
      canonicalize = params.canonicalize === true;
    }
    at = { generation: latest.generation, checkpoint: latest.checkpoint, cursor: latest.cursor };
    await idb('readwrite', (s) =>
      s.put({ bytes: copy.toBytes(), at, savedAt: Date.now(), canonicalize }, config.filter),
    );
    state.formats.push(res.headers.get('X-Edgebloom-Format'));
    state.bytes += bytes.length;
  }
  state.syncs++;
  // stats() has the count for every kind of copy, a ShardedBloomFilter's too.
  state.keys = copy.stats().count;
  state.lastSync = Date.now();
  state.canonicalize = canonicalize;
  show(`${state.syncs} syncs (the last: ${kind}, ${bytes.length} bytes).`);
}

async function main() {
  await init();
  const saved = await idb('readonly', (s) => s.get(config.filter));
  if (saved) {
    copy = fromBytes(saved.bytes);
    at = saved.at;
    canonicalize = saved.canonicalize === true;
    Object.assign(state, {
      fromStorage: true,
      keys: copy.stats().count,
      lastSync: saved.savedAt ?? null,
      canonicalize,
    });
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
    document.getElementById('answer').textContent = lookup(document.getElementById('key').value);
  };
}

// The answer for a key as typed: the copy is asked for the key, or for its
// canonicalURL when the filter canonicalizes (the service refuses a key
// that is no URL on such a filter, so the filter holds none).
function lookup(typed) {
  if (!copy) return 'no copy yet';
  let key = typed;
  if (canonicalize) {
    try {
      key = canonicalURL(typed);
    } catch (err) {
      return `certainly not seen (the filter holds canonical URLs: ${err.message})`;
    }
  }
  return copy.has(key) ? 'probably seen' : 'certainly not seen';
}

// For the test (e2e/sync-example.test.js) and the console.
window.syncExample = {
  state,
  has: (keys) => copy.hasMany(keys),
  lookup,
  bytes: () => copy.toBytes(),
};
main();
