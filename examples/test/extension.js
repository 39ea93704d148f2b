// examples/mv3-extension as its test and its benchmark load it: installed
// from the packed package (npm start copies the engine in), loaded
// unpacked into Debian's Chromium, with a way to stop its service worker
// as Chrome does after 30 idle seconds, without the 30 seconds.

import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { run } from '../../testkit/process.js';
import { launchChromium } from '../../testkit/browser.js';
import { installExample } from './helpers.js';

/**
 * Installs the example, loads it, and returns the browser, its service
 * worker and a stop(). With capacity, the filter is made for that many keys
 * instead of background.js's CAPACITY.
 */
export async function loadExtension({ capacity } = {}) {
  const dir = await installExample('mv3-extension');
  await run('npm', ['start'], { cwd: dir });
  if (capacity) {
    const file = path.join(dir, 'extension/background.js');
    const source = await readFile(file, 'utf8');
    const edited = source.replace(/^const CAPACITY = .*;$/m, `const CAPACITY = ${capacity};`);
    if (edited === source) throw new Error(`${file}: no "const CAPACITY = ...;" line to change`);
    await writeFile(file, edited);
  }
  const browser = await launchChromium({ extensionDir: path.join(dir, 'extension') });
  const { context } = browser;
  const worker = context.serviceWorkers()[0] ?? (await context.waitForEvent('serviceworker'));

  // The ServiceWorker domain of a page of its own: it reports every
  // worker's running status, and stops them.
  const cdp = await context.newCDPSession(await context.newPage());
  const status = new Map(); // versionId -> runningStatus of the extension's worker
  const waiters = new Set();
  cdp.on('ServiceWorker.workerVersionUpdated', ({ versions }) => {
    for (const v of versions) if (v.scriptURL === worker.url()) status.set(v.versionId, v.runningStatus);
    for (const w of waiters) w();
  });
  await cdp.send('ServiceWorker.enable');
  const until = (done) =>
    new Promise((resolve) => {
      const check = () => done() && (waiters.delete(check), resolve());
      waiters.add(check);
      check();
    });

  return {
    dir,
    browser,
    /**
     * The extension's worker. Playwright keeps one Worker across restarts;
     * an evaluate after a stop waits for the next start's context.
     */
    worker,
    /** Stops the service worker, as Chrome does an idle one, and resolves once it stopped. */
    async stop() {
      await cdp.send('ServiceWorker.stopAllWorkers');
      await until(() => status.size > 0 && [...status.values()].every((s) => s === 'stopped'));
    },
    /** Resolves once the service worker runs (after an event woke it). */
    running: () => until(() => [...status.values()].includes('running')),
  };
}

/** Resolves, in the service worker, once it handled n pages since it started. */
export const pagesHandled = (worker, n) =>
  worker.evaluate(
    (n) =>
      new Promise((resolve) => {
        const check = () => {
          if (self.pages.seen + self.pages.new < n) return;
          self.removeEventListener('visited', check);
          resolve(self.pages);
        };
        self.addEventListener('visited', check);
        check();
      }),
    n,
  );
