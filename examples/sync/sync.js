// Keeps a copy of an edgebloom service filter in this page: loaded from
// IndexedDB if a copy is there, else from GET /v1/filters/{name}/changes,
// then kept up with ?since=CURSOR on a timer (worker/README.md, "Keeping a
// local copy in sync"). After each sync the copy and its cursor go back to
// IndexedDB, so a reload resumes with a delta, not the whole snapshot.
//
// The page may be served from any origin the service lists in
// EDGEBLOOM_ALLOWED_ORIGINS (?service= is the service's URL; the page's own
// origin when absent), and holds a read token: it can read the filter and
// nothing else, so every browser that keeps a copy holds no more than that.
//
// An app imports 'edgebloom' (its bundler resolves it); this page is served
// with the package's js/ at /js/.
import { init, fromBytes, applyDelta } from '/js/index.js';

const params = new URLSearchParams(location.search);
const service = (params.get('service') ?? '').replace(/\/$/, '');
const token = params.get('token') ?? '';
const name = params.get('filter') ?? 'crawl';
const every = Number(params.get('every') ?? 30_000);
const status = document.getElementById('status');

// IndexedDB: one record a filter name, {bytes, cursor}.
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
let cursor = null;
const state = { syncs: 0, formats: [], bytes: 0, fromStorage: false, error: null };

async function sync() {
  const since = cursor ? `?since=${encodeURIComponent(cursor)}` : '';
  const res = await fetch(`${service}/v1/filters/${encodeURIComponent(name)}/changes${since}`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  if (!res.ok) {
    // token_expired, token_bad_signature, token_other_filter, ...: the
    // error's code says what to do (worker/README.md, "Tokens").
    const { error } = await res.json().catch(() => ({ error: { code: 'unknown', message: res.statusText } }));
    throw Object.assign(new Error(`GET /changes: ${res.status} ${error.code}: ${error.message}`), { code: error.code });
  }
  const bytes = new Uint8Array(await res.arrayBuffer());
  const format = res.headers.get('X-Edgebloom-Format');
  if (format === 'delta') {
    cursor = applyDelta(copy, bytes, cursor);
  } else {
    // The first sync, or the service could not give a delta (see X-Edgebloom-Resync).
    copy?.free();
    copy = fromBytes(bytes);
    cursor = res.headers.get('X-Edgebloom-Cursor');
  }
  await idb('readwrite', (s) => s.put({ bytes: copy.toBytes(), cursor }, name));
  state.syncs++;
  state.formats.push(format);
  state.bytes += bytes.length;
  status.textContent = `${state.syncs} syncs (last: ${format}, ${bytes.length} bytes); ${copy.count} keys`;
}

async function main() {
  await init();
  const saved = await idb('readonly', (s) => s.get(name));
  if (saved) {
    copy = fromBytes(saved.bytes);
    cursor = saved.cursor;
    state.fromStorage = true;
  }
  const tick = async () => {
    try {
      await sync();
      state.error = null;
    } catch (err) {
      state.error = String(err);
      status.textContent = `sync failed, will retry: ${err.message}`;
    }
    setTimeout(tick, every);
  };
  await tick();
  document.getElementById('check').onsubmit = (e) => {
    e.preventDefault();
    const key = document.getElementById('key').value;
    document.getElementById('answer').textContent = copy.has(key) ? 'probably seen' : 'certainly not seen';
  };
}

// For the test (e2e/sync-example.test.js) and the console.
window.syncExample = {
  state,
  has: (keys) => copy.hasMany(keys),
  bytes: () => copy.toBytes(),
};
main();
