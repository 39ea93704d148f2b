// Browsers of the tests: Debian's Chromium through playwright-core, which
// may only talk to 127.0.0.1, and a static server with explicit MIME types.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { onCleanup, tempDir } from './process.js';

// ---- static server ------------------------------------------------------------

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.map': 'application/json',
};

/**
 * A static server on 127.0.0.1 and an ephemeral port.
 * - pages: {'/path': html or {type, body}} served as given;
 * - dirs: {'/prefix/': directory} served from disk (no listings, no '..');
 * - wasmType: the Content-Type of .wasm files ('application/wasm', or
 *   'application/octet-stream' to make the loader take its arrayBuffer path).
 * Records every request as `${method} ${url} ${status}`. Closed by cleanup().
 */
export async function serve({ pages = {}, dirs = {}, wasmType = 'application/wasm' } = {}) {
  const log = [];
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    const reply = (status, type, body) => {
      log.push(`${req.method} ${url.pathname} ${status}`);
      res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store' });
      res.end(body);
    };
    const page = pages[url.pathname];
    if (page !== undefined) {
      return typeof page === 'string' ? reply(200, MIME['.html'], page) : reply(200, page.type, page.body);
    }
    for (const [prefix, dir] of Object.entries(dirs)) {
      if (!url.pathname.startsWith(prefix)) continue;
      const file = path.join(dir, decodeURIComponent(url.pathname.slice(prefix.length)));
      const ext = path.extname(file);
      if (!file.startsWith(dir + path.sep) || !(ext in MIME)) break;
      try {
        return reply(200, ext === '.wasm' ? wasmType : MIME[ext], await readFile(file));
      } catch {
        break;
      }
    }
    reply(404, 'text/plain', 'not found');
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  onCleanup(
    () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { origin: `http://127.0.0.1:${server.address().port}`, log };
}

// ---- Chromium -----------------------------------------------------------------

export const chromiumFlags = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  // Belt and braces for "nothing beyond 127.0.0.1": no name resolves.
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
];

// Schemes that never leave the browser.
const localSchemes = new Set(['data:', 'blob:', 'about:', 'chrome-extension:', 'chrome:', 'devtools:']);

/**
 * Launches Debian's Chromium with a fresh profile (closed and removed by
 * cleanup()). With extensionDir, loads that unpacked extension.
 * Every request any page makes is recorded in `requests`; one to a host
 * other than 127.0.0.1 is aborted and recorded in `blocked`. Console errors
 * (of pages and workers) and uncaught errors are recorded in `errors`.
 * assertClean() fails on either.
 */
export async function launchChromium({ extensionDir } = {}) {
  const userDataDir = await tempDir('profile');
  const args = [...chromiumFlags];
  if (extensionDir) args.push(`--disable-extensions-except=${extensionDir}`, `--load-extension=${extensionDir}`);
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args,
    // playwright-core turns extensions off by default.
    ignoreDefaultArgs: extensionDir ? ['--disable-extensions'] : [],
    timeout: 60_000,
  });
  onCleanup(() => context.close());
  // Generous: the machine may be busy. Waits are on events, not on time.
  context.setDefaultTimeout(60_000);

  const requests = [];
  const blocked = [];
  const errors = [];
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    requests.push(url.href);
    if (localSchemes.has(url.protocol) || url.hostname === '127.0.0.1') return route.continue();
    blocked.push(url.href);
    return route.abort('blockedbyclient');
  });
  // The context's console has the pages', their workers' and the service
  // workers' messages.
  context.on('console', (msg) => {
    const where = msg.worker?.()?.url() ?? msg.page()?.url();
    if (msg.type() === 'error') errors.push(`console error in ${where}: ${msg.text()}`);
  });
  context.on('weberror', (err) => errors.push(`uncaught in ${err.page()?.url()}: ${err.error().stack}`));

  return {
    context,
    requests,
    blocked,
    errors,
    /** Fails if any request left 127.0.0.1 or any page logged an error. */
    assertClean() {
      assert.deepEqual(blocked, [], 'requests to hosts other than 127.0.0.1');
      assert.deepEqual(errors, [], 'console errors or page errors');
    },
  };
}
