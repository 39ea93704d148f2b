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
/* global chrome */
import { init, fromBytes, applyDelta } from './edgebloom/index.js';

// IndexedDB: one record a filter name, {bytes, cursor}.
let opening;
function idb(mode, op) {
  opening ??= new Promise((resolve, reject) => {
    const req = indexedDB.open('edgebloom-sync', 1);
    req.onupgradeneeded = () => req.result.createObjectStore('copies');
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
        tx.oncomplete = () => resolve(req.result);
        tx.onerror = tx.onabort = () => reject(tx.error ?? new Error('IndexedDB transaction aborted'));
      }),
  );
}

let copy = null;
let cursor = null;
/** What the syncs since this start did; a 'synced' event on self follows each. */
self.state = { syncs: 0, formats: [], bytes: 0, fromStorage: false, error: null, code: null };

/** The configuration, once the engine started and the saved copy (if any) is loaded. */
self.ready = (async () => {
  const config = await (await fetch(chrome.runtime.getURL('config.json'))).json();
  await init();
  const saved = await idb('readonly', (s) => s.get(config.filter));
  if (saved) {
    copy = fromBytes(saved.bytes);
    cursor = saved.cursor;
    self.state.fromStorage = true;
  }
  // The alarm outlives the worker: made once, not at every start (which
  // would push the next sync back each time the worker wakes).
  if (!(await chrome.alarms.get('sync'))) {
    await chrome.alarms.create('sync', { periodInMinutes: config.everyMinutes });
  }
  return config;
})();

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
  const bytes = new Uint8Array(await res.arrayBuffer());
  const format = res.headers.get('X-Edgebloom-Format');
  if (format === 'delta') {
    cursor = applyDelta(copy, bytes, cursor);
  } else {
    // The first sync, or the service could not give a delta (X-Edgebloom-Resync).
    copy?.free();
    copy = fromBytes(bytes);
    cursor = res.headers.get('X-Edgebloom-Cursor');
  }
  await idb('readwrite', (s) => s.put({ bytes: copy.toBytes(), cursor }, filter));
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
