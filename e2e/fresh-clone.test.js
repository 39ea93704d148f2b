// The README's first command on a fresh clone: a clone of this repository's
// committed HEAD, where nothing was built or installed, runs `npm start`
// exactly as a new user does; it must build and serve the demo, and the page
// must load its module and the wasm in Chromium. A build step that only
// works in a checkout where something was built before fails here.
// The Worker's dev server, without a token, must say so before it installs
// anything. Uncommitted changes are not in the clone: commit before relying
// on it.

import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { cleanup, freePort, onCleanup, repoRoot, tempDir } from '../testkit/process.js';
import { launchChromium } from '../testkit/browser.js';

after(async () => {
  await cleanup();
});

const git = (args, cwd) =>
  execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

function committedHead() {
  try {
    return git(['rev-parse', '--verify', 'HEAD'], repoRoot);
  } catch {
    return null;
  }
}

// The environment a user's shell has: none of the npm_* variables of the
// `npm test` running this, no module proxy (the Go module cache already
// holds what the build needs) and npm offline (the clone's npm ci, for
// wasm-opt, finds every package in the cache the outer npm ci filled), so
// nothing leaves the machine. That cache is npm_config_cache, which npm
// passes to the scripts it runs: kept, so that a cache set by the user's
// environment rather than at ~/.npm is the one the clone's npm ci reads.
function userEnv(port) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k) && k !== 'INIT_CWD'));
  const { npm_config_cache: cache } = process.env;
  return {
    ...env,
    ...(cache ? { npm_config_cache: cache } : {}),
    PORT: String(port),
    GOPROXY: 'off',
    npm_config_offline: 'true',
    NO_COLOR: '1',
  };
}

/** Starts `npm start` in dir in its own process group; cleanup() ends the group. */
function npmStart(dir, port) {
  const child = spawn('npm', ['start'], {
    cwd: dir,
    env: userEnv(port),
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const exited = once(child, 'exit');
  onCleanup(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const kill = (signal) => {
      try {
        process.kill(-child.pid, signal);
      } catch (err) {
        if (err.code !== 'ESRCH') throw err;
      }
    };
    kill('SIGTERM');
    const timer = setTimeout(() => kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  });
  return { child, output: () => output };
}

/** Polls url until it answers, the server exits, or the deadline passes. */
async function waitForServer(url, server, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (server.child.exitCode !== null) {
      assert.fail(`npm start exited with ${server.child.exitCode} before serving:\n${server.output()}`);
    }
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
      await res.arrayBuffer();
      return;
    } catch {}
    if (Date.now() > deadline)
      assert.fail(`npm start did not answer on ${url} in ${timeoutMs} ms:\n${server.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

const head = committedHead();

test(
  'npm start on a fresh clone builds and serves the demo',
  { timeout: 420_000, skip: head ? false : 'not a git checkout' },
  async () => {
    const dir = path.join(await tempDir('clone'), 'edgebloom');
    git(['clone', '--quiet', '--no-checkout', repoRoot, dir]);
    git(['checkout', '--quiet', '--detach', head], dir);
    assert.ok(!existsSync(path.join(dir, 'js/edgebloom.wasm')), 'the clone has no built wasm');
    assert.ok(!existsSync(path.join(dir, 'node_modules')), 'the clone has no node_modules');

    // `npm run worker:dev` without a token stops at once with one line,
    // before it installs anything.
    const env = userEnv(0);
    delete env.EDGEBLOOM_TOKEN;
    const dev = spawnSync('bash', ['worker/dev.sh'], { cwd: dir, env, encoding: 'utf8', timeout: 30_000 });
    assert.equal(dev.status, 2, dev.stderr);
    assert.match(dev.stderr, /^dev\.sh: set EDGEBLOOM_TOKEN [^\n]*\n$/);
    assert.ok(!existsSync(path.join(dir, 'node_modules')), 'dev.sh without a token installed nothing');

    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    const server = npmStart(dir, port);
    // The wasm build runs first, on a machine that may be busy.
    await waitForServer(`${origin}/`, server, 300_000);

    const page = await fetch(`${origin}/`);
    assert.equal(page.status, 200, `GET /; npm start said:\n${server.output()}`);
    assert.match(page.headers.get('content-type'), /^text\/html/);
    const html = await page.text();
    const src = html.match(/<script type="module" src="([^"]+)"/)?.[1];
    assert.ok(src, 'the page has a module script');
    const mod = await fetch(new URL(src, origin));
    assert.equal(mod.status, 200, src);
    assert.match(mod.headers.get('content-type'), /^text\/javascript/);

    const wasm = await fetch(`${origin}/js/edgebloom.wasm`);
    assert.equal(wasm.status, 200, `GET /js/edgebloom.wasm; npm start said:\n${server.output()}`);
    assert.equal(wasm.headers.get('content-type'), 'application/wasm');
    const bytes = new Uint8Array(await wasm.arrayBuffer());
    assert.deepEqual([...bytes.subarray(0, 4)], [0, 0x61, 0x73, 0x6d], 'the wasm magic');

    // The page's module imports the npm module, which compiles the wasm and
    // starts Go; body[data-ready] is set once the demo has drawn its filter.
    const browser = await launchChromium();
    const tab = await browser.context.newPage();
    await tab.goto(`${origin}/`);
    await tab.waitForSelector('body[data-ready]', { timeout: 60_000 });
    assert.ok(
      browser.requests.includes(`${origin}/js/edgebloom.wasm`),
      `the page fetched the wasm: ${browser.requests.join(' ')}`,
    );
    browser.assertClean();
  },
);
