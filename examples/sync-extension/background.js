// The extension's service worker: keeps a copy of one filter of an
// edgebloom service (worker/) in IndexedDB, brought up to date by
// GET /v1/filters/{name}/changes?since=CURSOR on an alarm, and puts
// "seen" on the badge of a page whose URL the copy holds. Lookups never
// leave the browser; a sync fetches only the bits set since the last one.
//
// config.json names the service, the filter and a read token: a token that
// can read that filter and nothing else (worker/README.md, "Tokens"), never
// the service's secret. The service is reached through the extension's
// host permission for it (manifest.json), so it needs no CORS setting.
//
// Chrome stops an idle worker after 30 s and its module state goes with it:
// the copy and its cursor are read back from IndexedDB at each start, and
// the alarm, which outlives the worker, wakes it for the next sync.
// Service workers reject dynamic import() and top-level await: the imports
// are static, and the start is a promise every event waits on.
//
// A sync writes what changed: the delta it applied, as the service sent it
// (nothing at all when nothing was new); the copy's whole encoding is
// written again only when the deltas kept pass half of it, or when the
// service sent a snapshot. A start loads the encoding and applies the
// deltas kept since.
/* global chrome */
import { init, fromBytes, applyDelta } from './edgebloom/index.js';

// IndexedDB, one object store, per filter name NAME:
//   NAME                {cursor, base: {cursor, gen, pieces, bytes}, deltas, deltaBytes}
//   NAME/base/G/IIIIII  piece I of the copy's encoding at base.cursor, written as generation G
//   NAME/delta/JJJJJJ   the J-th delta applied since, as the service sent it
const PIECE_BYTES = 1 << 20;
// The largest answer read into a buffer of its stated length (a 1 G-key filter at 1 % is 1.2 GB).
const MAX_ANSWER_BYTES = 2 ** 31;
const key = (filter, kind, i) => `${filter}/${kind}/${String(i).padStart(6, '0')}`;
const range = (filter, kind) => IDBKeyRange.bound(`${filter}/${kind}/`, `${filter}/${kind}/\uffff`);

let opening;
function idb(mode, op) {
  opening ??= new Promise((resolve, reject) => {
    const req = indexedDB.open('edgebloom-sync', 3);
    req.onupgradeneeded = () => {
      // Versions 1 and 2 kept the encoding in other keys: start again.
      if (req.result.objectStoreNames.contains('copies')) req.result.deleteObjectStore('copies');
      req.result.createObjectStore('copies');
    };
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => {
      opening = undefined;
      reject(req.error);
    };
  });
  return opening.then(
    (db) =>
      new Promise((resolve, reject) => {
        const tx = db.transaction('copies', mode);
        const req = op(tx.objectStore('copies'));
        tx.oncomplete = () => resolve(req?.result);
        tx.onerror = tx.onabort = () => reject(tx.error ?? new Error('IndexedDB transaction aborted'));
      }),
  );
}

// load reads the copy back: its encoding piece by piece into one buffer
// (no second copy of the pieces is held), then the deltas kept since.
async function load(filter) {
  const meta = await idb('readonly', (s) => s.get(filter));
  if (!meta) return null;
  const encoding = new Uint8Array(meta.base.bytes);
  let at = 0;
  await idb('readonly', (s) => {
    s.openCursor(range(filter, `base/${meta.base.gen}`)).onsuccess = (e) => {
      const c = e.target.result;
      if (!c) return;
      encoding.set(c.value, at);
      at += c.value.length;
      c.continue();
    };
  });
  if (at !== encoding.length) throw new Error(`the saved copy of ${filter} is ${at} bytes, not ${encoding.length}`);
  const f = fromBytes(encoding);
  const deltas = await idb('readonly', (s) => s.getAll(range(filter, 'delta')));
  let c = meta.base.cursor;
  for (const d of deltas) c = applyDelta(f, d, c);
  return { filter: f, cursor: c, meta };
}

// rebase writes encoding (the copy's bytes at cursor) as the new base: each
// piece in a transaction of its own, under a generation the record does not
// name yet, then the record naming it, in the transaction that drops the
// other generations and the deltas kept. A piece is put as a copy of its
// bytes, not as a view: a view's structured clone is its whole buffer.
// One piece's clone is held at a time, not the whole encoding's.
async function rebase(filter, encoding, cursor) {
  const pieces = Math.ceil(encoding.length / PIECE_BYTES);
  const gen = (saved?.base.gen ?? 0) + 1;
  const mine = range(filter, `base/${gen}`);
  for (let i = 0; i < pieces; i++) {
    await idb('readwrite', (s) => {
      if (i === 0) s.delete(mine); // what a write of this generation left unfinished
      s.put(encoding.slice(i * PIECE_BYTES, (i + 1) * PIECE_BYTES), key(filter, `base/${gen}`, i));
    });
  }
  const next = { cursor, base: { cursor, gen, pieces, bytes: encoding.length }, deltas: 0, deltaBytes: 0 };
  await idb('readwrite', (s) => {
    s.delete(IDBKeyRange.bound(`${filter}/base/`, mine.lower, false, true));
    s.delete(IDBKeyRange.bound(mine.upper, `${filter}/base/\uffff`, true, false));
    s.delete(range(filter, 'delta'));
    return s.put(next, filter);
  });
  saved = next;
}

let copy = null;
let cursor = null;
// What IndexedDB holds for the copy: the record under the filter's name.
let saved = null;
/**
 * What the syncs since this start did; a 'synced' event on self follows
 * each. readyMs: how long the start took (the engine, the copy read back).
 */
self.state = { syncs: 0, formats: [], bytes: 0, fromStorage: false, readyMs: null, error: null, code: null };
const started = performance.now();

/** The configuration, once the engine started and the saved copy (if any) is loaded. */
self.ready = (async () => {
  const config = await (await fetch(chrome.runtime.getURL('config.json'))).json();
  await init();
  const got = await load(config.filter);
  if (got) {
    ({ filter: copy, cursor, meta: saved } = got);
    self.state.fromStorage = true;
  }
  self.state.readyMs = performance.now() - started;
  // The alarm outlives the worker: made once, not at every start (which
  // would push the next sync back each time the worker wakes).
  if (!(await chrome.alarms.get('sync'))) {
    await chrome.alarms.create('sync', { periodInMinutes: config.everyMinutes });
  }
  return config;
})();

// body reads an answer into one buffer of its Content-Length, chunk by
// chunk as they arrive; res.arrayBuffer() holds the chunks and the buffer
// it copies them into at once. An answer with no length (or a coded one)
// is read with res.arrayBuffer().
async function body(res) {
  const length = res.headers.get('Content-Length');
  const n = Number(length);
  if (length === null || res.headers.has('Content-Encoding') || !Number.isSafeInteger(n) || n > MAX_ANSWER_BYTES) {
    return new Uint8Array(await res.arrayBuffer());
  }
  const out = new Uint8Array(n);
  let at = 0;
  for (const reader = res.body.getReader(); ;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (value.length > n - at) {
      await reader.cancel();
      throw new Error(`the answer is longer than its Content-Length, ${n} bytes`);
    }
    out.set(value, at);
    at += value.length;
  }
  if (at !== n) throw new Error(`the answer is ${at} bytes, not its Content-Length, ${n}`);
  return out;
}

async function syncOnce() {
  const { service, filter, token } = await self.ready;
  const since = cursor ? `?since=${encodeURIComponent(cursor)}` : '';
  const res = await fetch(`${service.replace(/\/$/, '')}/v1/filters/${encodeURIComponent(filter)}/changes${since}`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  if (!res.ok) {
    // token_expired, token_bad_signature, token_other_filter, ...: the
    // code says what to do; the copy stays as it is until a sync works.
    const { error } = await res.json().catch(() => ({ error: { code: 'unknown', message: res.statusText } }));
    throw Object.assign(new Error(`${res.status} ${error.code}: ${error.message}`), { code: error.code });
  }
  const bytes = await body(res);
  const format = res.headers.get('X-Edgebloom-Format');
  if (format === 'delta') {
    const since = cursor;
    cursor = applyDelta(copy, bytes, cursor);
    // A delta of no records (bytes 40-43): nothing new, nothing to write.
    if (new DataView(bytes.buffer).getUint32(40, true) > 0) {
      if (saved.deltaBytes + bytes.length > saved.base.bytes / 2) {
        await rebase(filter, copy.toBytes(), cursor);
      } else {
        const j = saved.deltas;
        saved = { ...saved, cursor, deltas: j + 1, deltaBytes: saved.deltaBytes + bytes.length };
        await idb('readwrite', (s) => {
          s.put(bytes, key(filter, 'delta', j));
          return s.put(saved, filter);
        });
      }
    } else if (cursor !== since) {
      throw new Error('a delta of no records moved the cursor');
    }
  } else {
    // The first sync, or the service could not give a delta (X-Edgebloom-Resync).
    copy?.free();
    copy = fromBytes(bytes);
    cursor = res.headers.get('X-Edgebloom-Cursor');
    await rebase(filter, bytes, cursor);
  }
  self.state.syncs++;
  self.state.formats.push(format);
  self.state.bytes += bytes.length;
}

// One sync at a time: an alarm during a sync joins it.
let syncing = null;
/** Brings the copy up to date; resolves with self.state. */
self.sync = () =>
  (syncing ??= syncOnce()
    .then(
      () => {
        self.state.error = self.state.code = null;
        return chrome.action.setBadgeText({ text: '' });
      },
      (err) => {
        self.state.error = err.message;
        self.state.code = err.code ?? null;
        return Promise.all([
          chrome.action.setBadgeText({ text: '!' }),
          chrome.action.setTitle({ title: `sync failed: ${err.message}` }),
        ]);
      },
    )
    .then(() => {
      syncing = null;
      self.dispatchEvent(new Event('synced'));
      return self.state;
    }));

/** Loads the copy again from the service's snapshot, and syncs from there. */
self.resync = async () => {
  await syncing;
  cursor = null;
  return self.sync();
};

/** Which of urls the copy holds (false for all before the first sync). */
self.has = async (urls) => {
  await self.ready;
  return copy ? copy.hasMany(urls) : urls.map(() => false);
};

/** The copy's bytes, as GET /snapshot gives them at the same point. */
self.bytes = () => copy?.toBytes();

// Listeners are added at the top level, synchronously, so that the event
// that wakes a stopped worker reaches them.
chrome.alarms.onAlarm.addListener(({ name }) => name === 'sync' && self.sync());
chrome.webNavigation.onCompleted.addListener(async ({ tabId, frameId, url }) => {
  if (frameId !== 0 || !/^https?:/.test(url)) return;
  const [known] = await self.has([url]);
  await chrome.action.setBadgeText({ tabId, text: known ? 'seen' : '' });
});

// With nothing saved (the first start after installation), sync now
// rather than at the first alarm.
self.ready.then(() => copy || self.sync());
