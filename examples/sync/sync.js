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
// with the package's js/ at /js/.
import { init, fromBytes, applyDelta } from '/js/index.js';

const params = new URLSearchParams(location.search);
const service = (params.get('service') ?? '').replace(/\/$/, '');
const token = params.get('token') ?? '';
const name = params.get('filter') ?? 'crawl';
const every = Number(params.get('every') ?? 30_000);
const status = document.getElementById('status');

// IndexedDB: one record a filter name, {bytes, at}.
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
const state = { syncs: 0, formats: [], bytes: 0, fromStorage: false, error: null };

async function get(path) {
  const res = await fetch(`${service}/v1/filters/${encodeURIComponent(name)}/checkpoints/${path}`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  if (!res.ok && res.status !== 410) {
    // token_expired, token_bad_signature, token_other_filter, ...: the
    // error's code says what to do (worker/README.md, "Tokens").
    const { error } = await res.json().catch(() => ({ error: { code: 'unknown', message: res.statusText } }));
    throw Object.assign(new Error(`GET ${path}: ${res.status} ${error.code}: ${error.message}`), { code: error.code });
  }
  return res;
}

async function sync() {
  const latest = await (await get('latest')).json();
  const same = at && at.generation === latest.generation;
  let format = 'none';
  let bytes = new Uint8Array(0);
  if (same && at.checkpoint === latest.checkpoint) {
    // Nothing new since the copy's checkpoint.
  } else {
    const base = `${latest.generation}/${latest.checkpoint}`;
    let res = same && at.checkpoint >= latest.oldest ? await get(`${base}/delta?from=${at.checkpoint}`) : null;
    if (res?.ok) {
      bytes = new Uint8Array(await res.arrayBuffer());
      applyDelta(copy, bytes, at.cursor);
    } else {
      // The first sync, another generation, or a checkpoint too old (410).
      res = await get(`${base}/snapshot`);
      bytes = new Uint8Array(await res.arrayBuffer());
      copy?.free();
      copy = fromBytes(bytes);
    }
    format = res.headers.get('X-Edgebloom-Format');
    at = { generation: latest.generation, checkpoint: latest.checkpoint, cursor: latest.cursor };
    await idb('readwrite', (s) => s.put({ bytes: copy.toBytes(), at }, name));
    state.formats.push(format);
    state.bytes += bytes.length;
  }
  state.syncs++;
  status.textContent = `${state.syncs} syncs (last: ${format}, ${bytes.length} bytes); ${copy.count} keys`;
}

async function main() {
  await init();
  const saved = await idb('readonly', (s) => s.get(name));
  if (saved) {
    copy = fromBytes(saved.bytes);
    at = saved.at;
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
