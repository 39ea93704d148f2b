// What examples/sync-extension costs, measured in headless Chromium against
// the Worker (Miniflare on 127.0.0.1) with a filter of `keys` keys: the
// first sync, a sync with nothing new, increments of new keys, and a wake-up
// from IndexedDB, each with its time in the extension's service worker, the
// IndexedDB writes it made (counted by wrapping IDBObjectStore's writes in
// the worker) and the peak resident memory of the extension's process
// during it (sampled from /proc every few milliseconds, over the memory
// before). e2e/sync-extension.test.js runs it at 1 M keys and checks what it
// finds; worker/bench/sync-extension.js prints it at any size.
import { cp, readFile, writeFile } from 'node:fs/promises';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { buildWorker, startWorker } from './worker.js';
import { repoRoot, tempDir } from './process.js';
import { launchChromium, serve } from './browser.js';
import { busyProxy } from './busy.js';

// The processes under this one, by walking /proc's parent links.
function descendants(root) {
  const kids = new Map();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (!kids.has(ppid)) kids.set(ppid, []);
      kids.get(ppid).push(Number(d));
    } catch {
      // gone meanwhile
    }
  }
  const out = [];
  for (let todo = [root]; todo.length;) {
    const pid = todo.pop();
    for (const k of kids.get(pid) ?? []) (out.push(k), todo.push(k));
  }
  return out;
}

// The extension's renderer process, which runs its service worker.
function extensionProcess() {
  for (const pid of descendants(process.pid)) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('--extension-process')) return pid;
    } catch {
      // gone meanwhile
    }
  }
  return null;
}

const rss = (pid) => {
  try {
    return 1024 * Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
  } catch {
    return 0;
  }
};

// peakOver runs fn and returns [its result, the peak resident memory of the
// extension's process while it ran, over what it was before].
async function peakOver(fn) {
  const pid = extensionProcess();
  const before = pid ? rss(pid) : 0;
  let peak = before;
  const sample = setInterval(() => (peak = Math.max(peak, pid ? rss(pid) : 0)), 2);
  try {
    const out = await fn();
    peak = Math.max(peak, pid ? rss(pid) : 0);
    return [out, pid ? peak - before : null];
  } finally {
    clearInterval(sample);
  }
}

/**
 * Stops the extension's service worker as Chrome stops an idle one, and
 * wakes it with a page load; resolves once it runs again.
 */
export async function stopAndWake(context, worker) {
  const cdp = await context.newCDPSession(await context.newPage());
  const status = new Map(); // versionId -> runningStatus of the extension's worker
  const waiters = new Set();
  cdp.on('ServiceWorker.workerVersionUpdated', ({ versions }) => {
    for (const v of versions) if (v.scriptURL === worker.url()) status.set(v.versionId, v.runningStatus);
    for (const check of waiters) check();
  });
  const until = (done) =>
    new Promise((resolve) => {
      const check = () => done() && (waiters.delete(check), resolve());
      waiters.add(check);
      check();
    });
  await cdp.send('ServiceWorker.enable');
  await cdp.send('ServiceWorker.stopAllWorkers');
  await until(() => status.size > 0 && [...status.values()].every((v) => v === 'stopped'));
  const site = await serve({ pages: { '/page': '<!doctype html><title>a page</title>' } });
  await (await context.newPage()).goto(`${site.origin}/page`);
  await until(() => [...status.values()].includes('running'));
}

// settled resolves once the filter's latest checkpoint holds every key
// added before the call: a checkpoint is published when "latest" is asked
// for and an interval (1 s here) has passed, and "latest" is cached for
// that long, so it is asked for until two answers a few intervals apart
// name the same checkpoint.
async function settled(w, name) {
  let last = null;
  for (let i = 0; i < 60; i++) {
    await new Promise((r) => setTimeout(r, 1_500));
    const res = await w.request('GET', `/v1/filters/${name}/checkpoints/latest`);
    if (res.status === 200 && last?.checkpoint === res.json.checkpoint && i >= 2) return res.json;
    if (res.status === 200) last = res.json;
  }
  throw new Error(`no checkpoint of ${name} settled: ${JSON.stringify(last)}`);
}

/**
 * Runs the extension against a filter of `keys` keys in `shards` shards
 * and returns what each step cost; `increments` are the new keys of each
 * sync after the first. The first sync is the one a new installation
 * makes, on a fresh profile: the extension's requests go through a proxy
 * that holds them (testkit/busy.js) until its process has started, its
 * engine is loaded and it has asked for the latest checkpoint; its memory
 * is the peak over what the process held then.
 */
export async function measureSyncExtension({ keys, shards = 4, increments = [10_000, 100_000], log = () => {} }) {
  const dir = await tempDir('sync-extension');
  buildWorker(path.join(dir, 'bundle'));
  const w = await startWorker(path.join(dir, 'bundle'), path.join(dir, 'state'), {
    port: 0,
    bindings: { EDGEBLOOM_CHECKPOINT_SECONDS: '1' },
  });
  try {
    const gate = await busyProxy(new URL(w.url).origin, { hold: true });
    const name = 'big';
    const put = await w.request('PUT', `/v1/filters/${name}`, { capacity: keys, errorRate: 0.01, shards });
    if (put.status !== 201) throw new Error(`PUT: ${put.status}`);
    let n = 0;
    const add = async (count) => {
      for (let i = 0; i < count; i += 10_000) {
        const batch = Array.from({ length: Math.min(10_000, count - i) }, () => `https://www.example.com/p/${n++}`);
        const res = await w.request('POST', `/v1/filters/${name}/add`, { keys: batch });
        if (res.status !== 200) throw new Error(`add: ${res.status}`);
      }
    };
    await add(keys - increments.reduce((a, b) => a + b, 0));
    await settled(w, name);
    log(`filled with ${n} keys`);
    const minted = await w.request('POST', '/v1/tokens', { scope: 'read', filter: name, expiresIn: 3600 });

    const ext = path.join(dir, 'extension');
    await cp(path.join(repoRoot, 'examples/sync-extension'), ext, {
      recursive: true,
      filter: (f) => !f.endsWith('.md'),
    });
    await cp(path.join(repoRoot, 'js'), path.join(ext, 'edgebloom'), {
      recursive: true,
      filter: (src) => src === path.join(repoRoot, 'js') || /\.(js|wasm)$/.test(src),
    });
    // everyMinutes: no alarm during the run; the syncs are the run's.
    await writeFile(
      path.join(ext, 'config.json'),
      JSON.stringify({ service: gate.url, filter: name, token: minted.json.token, everyMinutes: 600 }),
    );
    const manifest = JSON.parse(await readFile(path.join(ext, 'manifest.json'), 'utf8'));
    manifest.host_permissions = ['http://127.0.0.1/*'];
    await writeFile(path.join(ext, 'manifest.json'), JSON.stringify(manifest));

    const browser = await launchChromium({ extensionDir: ext });
    const { context } = browser;
    let worker = context.serviceWorkers()[0] ?? (await context.waitForEvent('serviceworker'));
    // Counts IndexedDB's writes in the worker (again after each start).
    const countWrites = () =>
      worker.evaluate(() => {
        if (self.idbWrites) return;
        // txBytes: the most bytes one transaction was given to clone (a
        // view's clone is its whole buffer), which it holds until it ends.
        self.idbWrites = { calls: 0, bytes: 0, txBytes: 0 };
        const held = new WeakMap();
        for (const op of ['put', 'add', 'delete', 'clear']) {
          const real = IDBObjectStore.prototype[op];
          IDBObjectStore.prototype[op] = function (...args) {
            self.idbWrites.calls++;
            // A Blob's clone is a handle: its bytes go from the browser's
            // blob storage to IndexedDB's, not through the transaction.
            if (args[0] instanceof Blob) self.idbWrites.bytes += args[0].size;
            if (args[0] instanceof Uint8Array) {
              self.idbWrites.bytes += args[0].byteLength;
              const tx = (held.get(this.transaction) ?? 0) + args[0].buffer.byteLength;
              held.set(this.transaction, tx);
              self.idbWrites.txBytes = Math.max(self.idbWrites.txBytes, tx);
            }
            return real.apply(this, args);
          };
        }
      });
    const writes = () => worker.evaluate(() => ({ ...self.idbWrites }));
    // One sync in the worker: its time, what it fetched and wrote.
    const sync = () =>
      peakOver(() =>
        worker.evaluate(async () => {
          await self.ready;
          const before = { ...self.idbWrites };
          const bytes = self.state.bytes;
          const t0 = performance.now();
          const s = await self.sync();
          return {
            ms: performance.now() - t0,
            error: s.error,
            format: s.formats.at(-1),
            bytes: s.bytes - bytes,
            writes: self.idbWrites.calls - before.calls,
            bytesWritten: self.idbWrites.bytes - before.bytes,
          };
        }),
      ).then(([r, peak]) => ({ ...r, peak }));
    const snapshot = async () => (await w.request('GET', `/v1/filters/${name}/snapshot`)).bytes;
    const same = async () => {
      const [mine, theirs] = [await worker.evaluate(() => self.bytes()), await snapshot()];
      return Object.values(mine).length === theirs.length && Object.values(mine).every((b, i) => b === theirs[i]);
    };

    // The first sync, as the worker of a new installation makes it: held
    // at its first request, which it sends once its engine is loaded.
    for (let i = 0; gate.held === 0; i++) {
      if (i > 600) throw new Error('the extension sent no request in 60 s');
      await new Promise((r) => setTimeout(r, 100));
    }
    await countWrites();
    const out = { keys, shards, filterBytes: (await snapshot()).length, increments: [] };
    const pid = extensionProcess();
    out.rssBefore = pid ? rss(pid) : null;
    out.first = await peakOver(async () => {
      const t0 = Date.now();
      gate.release();
      const s = await worker.evaluate(() =>
        self.state.syncs || self.state.error
          ? self.state
          : new Promise((r) => self.addEventListener('synced', () => r(self.state), { once: true })),
      );
      const w1 = await writes();
      return {
        ms: Date.now() - t0,
        error: s.error,
        format: s.formats.at(-1),
        bytes: s.bytes,
        writes: w1.calls,
        bytesWritten: w1.bytes,
        txBytes: w1.txBytes,
      };
    }).then(([r, peak]) => ({ ...r, peak }));
    out.first.same = await same();
    log(`first sync: ${JSON.stringify(out.first)}, the process at ${out.rssBefore} B before`);
    out.idle = await sync();
    log(`nothing new: ${JSON.stringify(out.idle)}`);
    for (const count of increments) {
      await add(count);
      await settled(w, name);
      const r = await sync();
      out.increments.push({ keys: count, ...r, same: await same() });
      log(`${count} new keys: ${JSON.stringify(out.increments.at(-1))}`);
    }
    out.storage = await worker.evaluate(() => navigator.storage.estimate().then((e) => e.usage));

    // Stopped as Chrome stops an idle worker, woken by a page load: the
    // time its start takes (engine, IndexedDB, deltas kept), in the worker.
    await stopAndWake(context, worker);
    worker = context.serviceWorkers().find((sw) => sw.url() === worker.url()) ?? worker;
    out.wake = await worker.evaluate(() =>
      self.ready.then(() => ({ ms: self.state.readyMs, fromStorage: self.state.fromStorage })),
    );
    out.wake.same = await same();
    log(`wake-up: ${JSON.stringify(out.wake)}`);
    browser.assertClean();
    return out;
  } finally {
    await w.dispose();
  }
}
