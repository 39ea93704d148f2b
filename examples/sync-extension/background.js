// The extension's service worker: keeps a copy of one filter of an
// edgebloom service (worker/) in IndexedDB, brought up to date on an alarm
// through the filter's checkpoints (checkpoints.js: the latest checkpoint,
// then the delta from the copy's, or its snapshot, all of them answers the
// edge cache serves to every reader), and puts "seen" on the badge of a
// page whose URL the copy holds. Lookups never leave the browser.
//
// config.json names the service, the filter and a read token: a token that
// can read that filter and nothing else (worker/README.md, "Tokens"), never
// the service's secret. The service is reached through the extension's
// host permission for it (manifest.json), so it needs no CORS setting.
//
// Chrome stops an idle worker after 30 s and its module state goes with it:
// the copy and its checkpoint are read back from IndexedDB at each start
// (store.js), and the alarm, which outlives the worker, wakes it for the
// next sync. A busy service (503, 429) is retried within the sync after its
// Retry-After; when it stays busy, a one-time alarm retries soon after, not
// at the next period. Service workers reject dynamic import() and
// top-level await: the imports are static, and the start is a promise
// every event waits on.
//
// A sync writes what changed: the delta it applied, as the service sent it
// (nothing at all when nothing was new); the copy's whole encoding is
// written again only when the deltas kept pass half of it, or when the
// service sent a snapshot, which goes to IndexedDB as the Blob it arrived
// in (store.js).
/* global chrome */
import { init, applyDelta, canonicalURL } from './edgebloom/index.js';
import { nextSync, readBody, readBlob, SyncError } from './checkpoints.js';
import { load, loadBlob, keepBase, keepDelta } from './store.js';

/** Chrome runs an alarm at most every 30 s (chrome.alarms): a shorter everyMinutes is refused. */
const ALARM_FLOOR_MINUTES = 0.5;
// The one-time alarm after a sync that found the service still busy after
// its retries, or could not reach it: its Retry-After, or 30 s (Chrome's
// floor) doubled for each such sync in a row, up to 8 min.
const RETRY_MINUTES = { first: 0.5, max: 8 };

let copy = null;
// What IndexedDB holds for the copy: the record under the filter's name.
let saved = null;
/**
 * What the syncs since this start did; a 'synced' event on self follows
 * each. readyMs: how long the start took (the engine, the copy read back);
 * keys: the copy's count; lastSync: when a sync last worked (ms since the
 * epoch, kept in IndexedDB's record); retries: the waits on a busy service.
 */
self.state = {
  syncs: 0,
  formats: [],
  bytes: 0,
  fromStorage: false,
  readyMs: null,
  error: null,
  code: null,
  keys: null,
  lastSync: null,
  retries: [],
};
const started = performance.now();

// checkConfig refuses what Chrome or the service would not take, with the field's name.
function checkConfig(c) {
  const bad = (msg) => {
    throw new SyncError(`config.json: ${msg}`, { code: 'bad_config' });
  };
  if (!/^https?:\/\//.test(c.service ?? ''))
    bad(`"service" must be the service's http(s) URL, got ${JSON.stringify(c.service)}`);
  if (typeof c.filter !== 'string' || !c.filter) bad('"filter" must name the filter');
  if (typeof c.token !== 'string' || !c.token) bad('"token" must be a read token for the filter');
  if (typeof c.everyMinutes !== 'number' || !(c.everyMinutes >= ALARM_FLOOR_MINUTES))
    bad(
      `"everyMinutes" is ${JSON.stringify(c.everyMinutes)}: Chrome runs an alarm at most every ${ALARM_FLOOR_MINUTES} minutes (30 s), so it must be ${ALARM_FLOOR_MINUTES} or more`,
    );
  if (c.canonicalize !== undefined && typeof c.canonicalize !== 'boolean') bad('"canonicalize" must be true or false');
  return c;
}

const keysOf = (f) => f.stats().count;

/** The configuration, once the engine started and the saved copy (if any) is loaded; rejects on a bad config.json. */
self.ready = (async () => {
  const config = checkConfig(await (await fetch(chrome.runtime.getURL('config.json'))).json());
  await init();
  const got = await load(config.filter);
  if (got) {
    ({ filter: copy, saved } = got);
    Object.assign(self.state, { fromStorage: true, keys: keysOf(copy), lastSync: saved.savedAt ?? null });
  }
  self.state.readyMs = performance.now() - started;
  // The alarm outlives the worker: made once, not at every start (which
  // would push the next sync back each time the worker wakes).
  const alarm = await chrome.alarms.get('sync');
  if (alarm?.periodInMinutes !== config.everyMinutes) {
    await chrome.alarms.create('sync', { periodInMinutes: config.everyMinutes });
  }
  return config;
})();

const show = (text, title) => Promise.all([chrome.action.setBadgeText({ text }), chrome.action.setTitle({ title })]);

async function syncOnce() {
  const config = await self.ready;
  const { filter } = config;
  const onWait = ({ ms, status, code, attempt }) => {
    self.state.retries.push({ ms, status, code });
    // An extension API call also keeps the worker alive through the wait.
    return show('…', `the service is busy (${status} ${code}): try ${attempt + 1} in ${(ms / 1000).toFixed(1)} s`);
  };
  const { latest, kind, res } = await nextSync(config, saved?.at ?? null, { onWait });
  const at = { generation: latest.generation, checkpoint: latest.checkpoint, cursor: latest.cursor };
  let fetched = 0;
  if (kind === 'delta') {
    const bytes = await readBody(res);
    fetched = bytes.length;
    applyDelta(copy, bytes, saved.at.cursor);
    if (saved.deltaBytes + bytes.length > saved.base.bytes / 2) {
      saved = await keepBase(filter, saved, new Blob([copy.toBytes()]), at);
    } else saved = await keepDelta(filter, saved, bytes, at);
  } else if (kind === 'snapshot') {
    // The first sync, another generation, or a checkpoint too old (410):
    // the answer goes from the network to a Blob (the browser's storage)
    // and to IndexedDB as it is; the engine loads it from the Blob chunk by
    // chunk, with no buffer of all of it here.
    const blob = await readBlob(res);
    fetched = blob.size;
    const next = await loadBlob(blob, blob.size);
    saved = await keepBase(filter, saved, blob, at);
    copy?.free();
    copy = next;
  }
  self.state.syncs++;
  self.state.formats.push(res ? res.headers.get('X-Edgebloom-Format') : 'none');
  self.state.bytes += fetched;
  self.state.keys = keysOf(copy);
  self.state.lastSync = Date.now();
}

// busyStreak: the syncs in a row that found the service busy (or could not
// reach it), carried by the name of the one-time alarm that retries
// (retry/N), which outlives the worker as the periodic one does.
let busyStreak = 0;
async function retrySoon(err) {
  for (const a of await chrome.alarms.getAll()) if (a.name.startsWith('retry/')) await chrome.alarms.clear(a.name);
  if (err?.retryAfterMs === null || err?.retryAfterMs === undefined) return '';
  const minutes = Math.min(
    RETRY_MINUTES.max,
    Math.max(err.retryAfterMs / 60_000, RETRY_MINUTES.first * 2 ** busyStreak),
  );
  await chrome.alarms.create(`retry/${busyStreak + 1}`, { delayInMinutes: minutes });
  return ` (again in ${minutes} min)`;
}

const when = (ms) => (ms ? new Date(ms).toLocaleString() : 'never');

// One sync at a time: an alarm during a sync joins it.
let syncing = null;
/** Brings the copy up to date; resolves with self.state. */
self.sync = () =>
  (syncing ??= syncOnce()
    .then(
      async () => {
        self.state.error = self.state.code = null;
        await retrySoon(null);
        busyStreak = 0;
        return show('', `${self.state.keys} keys, last synced ${when(self.state.lastSync)}`);
      },
      async (err) => {
        self.state.error = err.message;
        self.state.code = err.code ?? null;
        const next = await retrySoon(err);
        return show(
          '!',
          `sync failed${next}: ${err.message}. Last synced ${when(self.state.lastSync)}; ${self.state.keys ?? 0} keys`,
        );
      },
    )
    .then(() => {
      syncing = null;
      self.dispatchEvent(new Event('synced'));
      return self.state;
    }));

/** Loads the copy again from the checkpoint's snapshot, and syncs from there. */
self.resync = async () => {
  await syncing;
  if (saved) saved = { ...saved, at: null };
  return self.sync();
};

/** Which of urls the copy holds (false for all before the first sync). */
self.has = async (urls) => {
  await self.ready.catch(() => {});
  return copy ? copy.hasMany(urls) : urls.map(() => false);
};

/** The copy's bytes, as GET /snapshot gives them at the same point. */
self.bytes = () => copy?.toBytes();

// Listeners are added at the top level, synchronously, so that the event
// that wakes a stopped worker reaches them.
chrome.alarms.onAlarm.addListener(({ name }) => {
  if (name.startsWith('retry/')) busyStreak = Number(name.slice(6));
  if (name === 'sync' || name.startsWith('retry/')) self.sync();
});
// The URL looked up is the tab's, as Chrome reports it (after redirects;
// scheme and host lower-cased, the fragment kept), or its canonicalURL when
// config.json says "canonicalize": true, as a filter made with
// "canonicalize" holds its keys.
chrome.webNavigation.onCompleted.addListener(async ({ tabId, frameId, url }) => {
  if (frameId !== 0 || !/^https?:/.test(url)) return;
  const { canonicalize } = await self.ready.catch(() => ({}));
  let key = url;
  try {
    if (canonicalize) key = canonicalURL(url);
  } catch {
    return; // no URL the service would have taken
  }
  const [known] = await self.has([key]);
  await chrome.action.setBadgeText({ tabId, text: known ? 'seen' : '' });
});

// With nothing saved (the first start after installation), sync now
// rather than at the first alarm. A config.json Chrome or the service
// would refuse is said on the badge, and nothing syncs.
self.ready.then(
  () => copy || self.sync(),
  (err) => {
    Object.assign(self.state, { error: err.message, code: err.code ?? 'bad_config' });
    self.dispatchEvent(new Event('synced'));
    return show('!', err.message);
  },
);
