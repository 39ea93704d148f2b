// What loading a filter costs the engine's linear memory, which never
// shrinks: fromBytes of a filter of 1 M keys at 1 % (one classic filter)
// and of 10 M keys at 1 % in 4 shards (a sharded container, as the Worker
// sends), each in a fresh process, memory.buffer.byteLength before and after.
//
//   node bench/js/load-memory.mjs [--module path/to/js/node.js ...]
//
// Each --module is an entry point of a build of the module (default: this
// checkout's js/node.js); given several, they run side by side.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const modules = [];
for (let i = 2; i < process.argv.length; i += 2) {
  if (process.argv[i] !== '--module') throw new Error(`unknown argument ${process.argv[i]}`);
  modules.push(pathToFileURL(resolve(process.argv[i + 1])).href);
}
if (modules.length === 0) modules.push(new URL('../../js/node.js', import.meta.url).href);

const cases = [
  { name: '1 M keys at 1 %, classic', make: 'new m.BloomFilter({ capacity: 1e6, errorRate: 0.01 })' },
  {
    name: '10 M keys at 1 %, 4 shards',
    make: 'new m.ShardedBloomFilter({ capacity: 1e7, errorRate: 0.01, shards: 4 })',
  },
];

function run(script) {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`exit ${r.status} ${r.signal ?? ''}: ${r.stderr}`);
  return r.stdout;
}

const dir = mkdtempSync(join(os.tmpdir(), 'edgebloom-load-'));
try {
  cases.forEach((c, i) => {
    c.file = join(dir, `${i}.bin`);
    // The bytes come from the first build; every build reads the same file.
    run(`
      import { writeFileSync } from 'node:fs';
      const m = await import(${JSON.stringify(modules[0])});
      await m.init();
      const f = ${c.make};
      for (let i = 0; i < 100000; i++) f.add('key-' + i);
      writeFileSync(${JSON.stringify(c.file)}, f.toBytes());
    `);
  });
  const MB = (n) => (n / 1e6).toFixed(2);
  for (const mod of modules) {
    console.log(mod);
    for (const c of cases) {
      const out = run(`
        import { readFileSync } from 'node:fs';
        const m = await import(${JSON.stringify(mod)});
        const { live } = await import(${JSON.stringify(new URL('core.js', mod).href)});
        await m.init();
        const bytes = new Uint8Array(readFileSync(${JSON.stringify(c.file)}));
        const before = live().memory.buffer.byteLength;
        const f = m.fromBytes(bytes);
        const after = live().memory.buffer.byteLength;
        console.log(JSON.stringify({ n: bytes.length, before, after, bits: f.bits }));
      `);
      const { n, before, after } = JSON.parse(out);
      console.log(
        `  ${c.name}: ${MB(n)} MB of bytes; linear memory ${MB(before)} -> ${MB(after)} MB, +${MB(after - before)} MB (${((after - before) / n).toFixed(2)}x the bytes)`,
      );
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
