// Cold start of the edgebloom npm module: import + init() + the first
// filter (1 M keys at 1 %) and one add, in fresh processes, and where the
// time goes:
//
//   cd bench && npm install && node js/cold.mjs [--runs 5] [--browser 5]
//
// Node: each run is a fresh `node` process that imports 'edgebloom' by name
// (through node_modules and the exports map), as a user's program does. The
// breakdown runs repeat init()'s steps one by one in other fresh processes
// (importing wasm_exec.js, reading and compiling the wasm, instantiating it,
// and Go's start up to main blocking), so they add up to about init().
// Chromium: each run is a new browser context (no HTTP or code cache from
// the runs before) loading a page that imports the module's browser entry
// from a local server, with the wasm served as application/wasm. Medians.

import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = Number(process.argv[i + 1]);
const RUNS = args.runs ?? 5;
const BROWSER_RUNS = args.browser ?? 5;
const benchDir = fileURLToPath(new URL('..', import.meta.url));
const moduleDir = dirname(fileURLToPath(import.meta.resolve('edgebloom')));

// The cold-start script of a fresh process, also used by bench.mjs.
export const packageScript = `
  const t0 = performance.now();
  const { init, BloomFilter } = await import('edgebloom');
  const t1 = performance.now();
  await init();
  const t2 = performance.now();
  const f = new BloomFilter({ capacity: 1_000_000, errorRate: 0.01 });
  f.add('https://www.example.com/');
  const t3 = performance.now();
  console.log(JSON.stringify({ import: t1 - t0, init: t2 - t1, first: t3 - t2, total: t3 - t0, sinceStart: t3 }));`;

// The steps of init() (js/core.js and js/node.js), timed one by one.
const stepsScript = `
  import { readFileSync } from 'node:fs';
  const dir = ${JSON.stringify(moduleDir)};
  const t0 = performance.now();
  const { makeGo } = await import(dir + '/wasm_exec.js');
  const t1 = performance.now();
  const bytes = readFileSync(dir + '/edgebloom.wasm');
  const t2 = performance.now();
  const module = await WebAssembly.compile(bytes);
  const t3 = performance.now();
  const go = new (makeGo(globalThis))();
  const instance = await WebAssembly.instantiate(module, go.importObject);
  const t4 = performance.now();
  go.run(instance);
  const t5 = performance.now();
  console.log(JSON.stringify({ wasmExec: t1 - t0, read: t2 - t1, compile: t3 - t2, instantiate: t4 - t3, goStart: t5 - t4 }));`;

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

function medians(samples) {
  const out = {};
  for (const key of Object.keys(samples[0])) out[key] = median(samples.map((s) => s[key]));
  return out;
}

function fresh(script) {
  const t0 = performance.now();
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: benchDir, encoding: 'utf8' });
  const wall = performance.now() - t0;
  if (child.status !== 0) throw new Error(`cold: child failed: ${child.stderr}`);
  return { ...JSON.parse(child.stdout), wall };
}

const fmt = (v) => v.toFixed(1);

function node() {
  const pkg = [];
  const steps = [];
  // Interleaved, so that load from elsewhere falls on both alike.
  for (let r = 0; r < RUNS; r++) {
    pkg.push(fresh(packageScript));
    steps.push(fresh(stepsScript));
  }
  const p = medians(pkg);
  const s = medians(steps);
  console.log(`## Node ${process.version}: median of ${RUNS} fresh processes, ms\n`);
  console.log('| import | init() | first filter | total | since process start | spawn to exit | all totals |');
  console.log('|--:|--:|--:|--:|--:|--:|---|');
  console.log(
    `| ${fmt(p.import)} | ${fmt(p.init)} | ${fmt(p.first)} | **${fmt(p.total)}** | ${fmt(p.sinceStart)} | ${fmt(p.wall)} | ${pkg.map((x) => fmt(x.total)).join(', ')} |`,
  );
  console.log(`\ninit() step by step (other fresh processes), ms:\n`);
  console.log('| import wasm_exec.js | read the wasm | compile | instantiate | Go start (runtime init, main) |');
  console.log('|--:|--:|--:|--:|--:|');
  console.log(
    `| ${fmt(s.wasmExec)} | ${fmt(s.read)} | ${fmt(s.compile)} | ${fmt(s.instantiate)} | ${fmt(s.goStart)} |`,
  );
  return p.total;
}

const pageHTML = `<!doctype html><meta charset="utf-8"><title>cold</title>
<script type="module" src="/cold-page.js"></script>`;
const pageJS = `
const t0 = performance.now();
import('/js/index.js').then(async ({ init, BloomFilter }) => {
  const t1 = performance.now();
  await init();
  const t2 = performance.now();
  const f = new BloomFilter({ capacity: 1_000_000, errorRate: 0.01 });
  f.add('https://www.example.com/');
  const t3 = performance.now();
  window.coldResult = { import: t1 - t0, init: t2 - t1, first: t3 - t2, total: t3 - t0, sinceNavigation: t3 };
});`;

const types = { '.js': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html' };

async function browser() {
  let chromium;
  try {
    ({ chromium } = await import('playwright-core'));
  } catch {
    console.log('\n(Chromium skipped: playwright-core is not installed; npm ci in the repository root installs it.)');
    return;
  }
  const server = http.createServer((req, res) => {
    const path = new URL(req.url, 'http://x').pathname;
    let body;
    if (path === '/') body = pageHTML;
    else if (path === '/cold-page.js') body = pageJS;
    else if (path.startsWith('/js/')) {
      const file = normalize(join(moduleDir, path.slice(4)));
      if (!file.startsWith(moduleDir)) return res.writeHead(403).end();
      try {
        body = readFileSync(file);
      } catch {
        return res.writeHead(404).end();
      }
    } else return res.writeHead(404).end();
    const ext = path === '/' ? '.html' : path.slice(path.lastIndexOf('.'));
    res.writeHead(200, { 'Content-Type': types[ext] ?? 'application/octet-stream', 'Cache-Control': 'no-store' });
    res.end(body);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}/`;
  const b = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const version = b.version();
  const samples = [];
  try {
    for (let r = 0; r < BROWSER_RUNS; r++) {
      const context = await b.newContext();
      const page = await context.newPage();
      await page.goto(url);
      await page.waitForFunction(() => window.coldResult, null, { timeout: 60_000 });
      samples.push(await page.evaluate(() => window.coldResult));
      await context.close();
    }
  } finally {
    await b.close();
    server.close();
  }
  const m = medians(samples);
  console.log(`\n## Chromium ${version} (headless): median of ${BROWSER_RUNS} fresh browser contexts, ms\n`);
  console.log('| import | init() | first filter | total | since navigation start | all totals |');
  console.log('|--:|--:|--:|--:|--:|---|');
  console.log(
    `| ${fmt(m.import)} | ${fmt(m.init)} | ${fmt(m.first)} | **${fmt(m.total)}** | ${fmt(m.sinceNavigation)} | ${samples.map((x) => fmt(x.total)).join(', ')} |`,
  );
}

async function main() {
  console.log(
    `# edgebloom cold start (${os.cpus().length} CPUs, load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')})\n`,
  );
  const total = node();
  if (BROWSER_RUNS > 0) await browser();
  console.log(`\nTarget: Node cold start ≤ 50 ms (median): ${total <= 50 ? 'PASS' : 'MISS'} (${fmt(total)} ms)`);
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) await main();
