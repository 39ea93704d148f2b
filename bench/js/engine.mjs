// The engine's own time a key: the keys already encoded in the engine's
// linear memory, one call of its keys export a group of 32, as the npm
// module's batches make them, with no JavaScript string in the loop. Builds
// of the module given by --modules run side by side in one process, their
// rounds interleaved (the order rotating), each round on a fresh filter:
//
//   cd bench && node js/engine.mjs [--n 1000000] [--capacity N] [--rounds 7] [--corpus crawl,intl] [--modules edgebloom,/path/to/other/js/node.js] [--cold 0]
//
// add fills an empty filter made for n keys at 1% with the n present URLs;
// has probes it with the probe mix of js/bench.mjs (half present). The
// table shows the median round, ns a key of process CPU time (wall clock in
// brackets), and each build's ratio to the first. --cold N also times N
// cold starts of each build (a fresh node process: import, init(), a filter
// for 1M keys at 1%, one add), the builds taking turns; the median is shown
// with the size of each build's edgebloom.wasm.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';

import { loadCorpus } from './corpus.mjs';

const args = {};
for (let i = 2; i < process.argv.length; i += 2) {
  const value = process.argv[i + 1];
  if (value === undefined) throw new Error(`engine: ${process.argv[i]} needs a value`);
  args[process.argv[i].replace(/^--/, '')] = value;
}
const N = Number(args.n ?? 1_000_000);
// --capacity makes the filter for fewer keys than are added: a small one
// stays in the first-level cache, which leaves the hashing and the calls.
const CAPACITY = Number(args.capacity ?? N);
const ROUNDS = Number(args.rounds ?? 7);
const CORPORA = (args.corpus ?? 'crawl,intl').split(',');
const MODULES = (args.modules ?? 'edgebloom').split(',');
const COLD = Number(args.cold ?? 0);
const GROUP = 32;
const KINDS = [
  ['BlockedBloomFilter', 'KIND_BLOCKED'],
  ['BloomFilter', 'KIND_CLASSIC'],
];

// load starts one build of the module and returns its engine's internals:
// core.js and abi.js beside the entry point that was imported.
async function load(spec) {
  const u = url(spec);
  const mod = await import(u);
  await mod.init(undefined, { memoryLimit: 2 ** 30 });
  const core = await import(new URL('./core.js', u));
  const abi = await import(new URL('./abi.js', u));
  return { name: spec, core, abi, e: core.live() };
}

// place encodes keys once into the engine's scratch buffer: their lengths
// (uint32), then their bytes back to back, then room for the answers.
// The caller has made the scratch buffer large enough (room).
function place(m, keys, base) {
  const { core, e } = m;
  const enc = new TextEncoder();
  const lens = base;
  const text = lens + 4 * keys.length;
  const size = base + room(keys);
  const at = e.scratch;
  const u8 = core.mem(e);
  const u32 = new Uint32Array(u8.buffer, at + lens, keys.length);
  const starts = new Uint32Array(Math.ceil(keys.length / GROUP) + 1);
  let pos = text;
  for (let i = 0; i < keys.length; i++) {
    if (i % GROUP === 0) starts[i / GROUP] = pos;
    const { written } = enc.encodeInto(keys[i], u8.subarray(at + pos, at + size));
    u32[i] = written;
    pos += written;
  }
  starts[starts.length - 1] = pos;
  return { lens, starts, end: pos, out: pos, count: keys.length };
}

// room is what place needs for keys, at most.
function room(keys) {
  let bytes = 0;
  for (const k of keys) bytes += 3 * k.length;
  return 4 * keys.length + bytes + keys.length;
}

// run calls keys over every group of a placed batch and returns how many
// answers were 1.
function run(m, add, h, p) {
  const keys = m.e.keys;
  let ones = 0;
  for (let g = 0, i = 0; i < p.count; g++, i += GROUP) {
    const c = Math.min(GROUP, p.count - i);
    const r = keys(add, h, c, p.lens + 4 * i, p.starts[g], p.end, p.out + i, 0);
    if (r !== c) throw new Error(`engine: keys returned ${r}`);
  }
  const at = m.e.scratch;
  const u8 = m.core.mem(m.e);
  for (let i = 0; i < p.count; i++) ones += u8[at + p.out + i];
  return ones;
}

function time(f) {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const r = f();
  const ms = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return { ms, cpu: (c.user + c.system) / 1000, r };
}

const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];

// url returns the file URL of a module given by name or path.
function url(spec) {
  return spec.startsWith('/') || spec.startsWith('.') ? pathToFileURL(spec).href : import.meta.resolve(spec);
}

if (COLD > 0) {
  const script = (u) =>
    `const t0 = performance.now(); const m = await import(${JSON.stringify(u)}); await m.init(); ` +
    `new m.BloomFilter({ capacity: 1e6, errorRate: 0.01 }).add('https://example.com/'); ` +
    `console.log(performance.now() - t0);`;
  const times = MODULES.map(() => []);
  for (let r = 0; r < COLD; r++) {
    for (let j = 0; j < MODULES.length; j++) {
      const i = (j + r) % MODULES.length;
      const child = spawnSync(process.execPath, ['--input-type=module', '-e', script(url(MODULES[i]))], {
        encoding: 'utf8',
      });
      if (child.status !== 0) throw new Error(`engine: cold start of ${MODULES[i]} failed: ${child.stderr}`);
      times[i].push(Number(child.stdout));
    }
  }
  console.log(`## cold start, median of ${COLD} fresh processes each (load average ${os.loadavg()[0].toFixed(2)})\n`);
  console.log('| module | cold start ms | edgebloom.wasm bytes | gzip -9 bytes |');
  console.log('|---|--:|--:|--:|');
  for (let i = 0; i < MODULES.length; i++) {
    const wasm = readFileSync(new URL('./edgebloom.wasm', url(MODULES[i])));
    const gz = gzipSync(wasm, { level: 9 }).length;
    console.log(`| ${MODULES[i]} | ${median(times[i]).toFixed(1)} | ${wasm.length} | ${gz} |`);
  }
  console.log();
}

const modules = [];
for (const spec of MODULES) modules.push(await load(spec));
console.log(`# the engine's own time a key (keys in linear memory, ${GROUP} a call)`);
console.log(
  `node ${process.version}, ${os.cpus()[0].model}, load average ${os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
);
console.log(`n = ${N} (filters for ${CAPACITY} keys), ${ROUNDS} rounds (median), modules: ${MODULES.join(', ')}\n`);

for (const corpus of CORPORA) {
  const { present, mix } = loadCorpus(corpus, N);
  const placed = modules.map((m) => {
    m.core.scratch(m.e, room(present) + room(mix) + 64);
    const a = place(m, present, 0);
    const b = place(m, mix, (a.out + a.count + 64) & ~3);
    return { add: a, has: b };
  });
  for (const [label, kind] of KINDS) {
    const res = modules.map(() => ({ add: [], has: [], addWall: [], hasWall: [] }));
    const answers = modules.map(() => null);
    for (let round = 0; round < ROUNDS; round++) {
      for (let j = 0; j < modules.length; j++) {
        const i = (j + round) % modules.length;
        const m = modules[i];
        const { core, abi, e } = m;
        const h = core.call(e, abi.OP_NEW, 0, abi[kind], 0, 0, 2 ** 20, CAPACITY, 0.01);
        const a = time(() => run(m, 1, h, placed[i].add));
        const s = time(() => run(m, 0, h, placed[i].has));
        core.call(e, abi.OP_FREE, h);
        res[i].add.push((1e6 * a.cpu) / N);
        res[i].addWall.push((1e6 * a.ms) / N);
        res[i].has.push((1e6 * s.cpu) / mix.length);
        res[i].hasWall.push((1e6 * s.ms) / mix.length);
        const got = `${a.r} new, ${s.r} present`;
        if (answers[i] !== null && answers[i] !== got)
          throw new Error(`engine: ${m.name} answered ${got}, before ${answers[i]}`);
        answers[i] = got;
      }
    }
    if (new Set(answers).size !== 1) throw new Error(`engine: the builds answer differently: ${answers.join(' / ')}`);
    console.log(`## ${corpus}, ${label} (${answers[0]}), load average now ${os.loadavg()[0].toFixed(2)}\n`);
    console.log('| module | add ns/key | has ns/key | add vs first | has vs first |');
    console.log('|---|--:|--:|--:|--:|');
    const base = res[0];
    for (let i = 0; i < modules.length; i++) {
      const r = res[i];
      console.log(
        `| ${modules[i].name} | ${median(r.add).toFixed(1)} (${median(r.addWall).toFixed(1)}) | ${median(r.has).toFixed(1)} (${median(r.hasWall).toFixed(1)}) | ` +
          `${(median(r.add) / median(base.add)).toFixed(2)} | ${(median(r.has) / median(base.has)).toFixed(2)} |`,
      );
    }
    console.log();
  }
}
