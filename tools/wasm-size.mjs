// What each function and package costs in a Go wasm, gzipped: bash build.sh
// wasm-size runs it on js/edgebloom.wasm built with its function names
// (tools/wasm.mjs; docs/size.md). Usage: node tools/wasm-size.mjs FILE.wasm
// [BASELINE.wasm] [ROWS]
//
// The cost of a function is what the code section's gzip -9 size loses
// when that function's body alone is left out: its share of the compressed
// file, which its raw size overstates for code that repeats other code.
// Functions whose names a BASELINE wasm (an empty Go program built the same
// way) also has are the runtime's floor and are not measured one by one.
// The sums by package add the single removals, so they are close to, not
// exactly, what leaving the whole package out would save. The data section
// (Go's pclntab, type descriptors, strings) is reported as a whole: compare
// it with the baseline's to see what the program's own data costs.
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';

const [file, baseline, rows = '40'] = process.argv.slice(2);
if (!file) {
  console.error('usage: node tools/wasm-size.mjs FILE.wasm [BASELINE.wasm] [ROWS]');
  process.exit(2);
}

// parse returns the sections, the function bodies (offsets into buf) and
// the function names of a wasm module with a name section.
function parse(buf) {
  let p = 8;
  const uleb = () => {
    let r = 0;
    let s = 0;
    let b;
    do {
      b = buf[p++];
      r += (b & 0x7f) * 2 ** s;
      s += 7;
    } while (b & 0x80);
    return r;
  };
  const sections = [];
  const bodies = [];
  const names = new Map();
  let imported = 0;
  while (p < buf.length) {
    const id = buf[p++];
    const size = uleb();
    const end = p + size;
    sections.push({ id, start: p, end });
    if (id === 2) {
      for (let n = uleb(); n > 0; n--) {
        for (let i = 0; i < 2; i++) {
          const len = uleb(); // module and field names
          p += len;
        }
        const kind = buf[p++];
        if (kind === 0) {
          uleb();
          imported++;
        } else if (kind === 3) {
          p += 2;
        } else {
          if (kind === 1) p++;
          const flags = uleb();
          uleb();
          if (flags & 1) uleb();
        }
      }
    } else if (id === 10) {
      for (let n = uleb(); n > 0; n--) {
        const s = uleb();
        bodies.push([p, p + s]);
        p += s;
      }
    } else if (id === 0) {
      const len = uleb();
      const name = buf.toString('utf8', p, p + len);
      p += len;
      while (name === 'name' && p < end) {
        const sub = buf[p++];
        const subEnd = uleb() + p;
        if (sub === 1) {
          for (let n = uleb(); n > 0; n--) {
            const index = uleb();
            const l = uleb();
            names.set(index - imported, buf.toString('utf8', p, p + l));
            p += l;
          }
        }
        p = subEnd;
      }
    }
    p = end;
  }
  return { sections, bodies, names };
}

const gz = (b) => gzipSync(b, { level: 9 }).length;
const buf = readFileSync(file);
const { sections, bodies, names } = parse(buf);
if (names.size === 0) {
  console.error(`${file} has no function names: build it without -ldflags=-s (bash build.sh wasm-size does)`);
  process.exit(1);
}
const floor = baseline ? new Set(parse(readFileSync(baseline)).names.values()) : new Set();
const code = sections.find((s) => s.id === 10);
const data = sections.find((s) => s.id === 11);
const whole = gz(buf.subarray(code.start, code.end));
console.log(`${file}: ${buf.length} B, ${gz(buf)} B gzipped`);
console.log(
  `code section ${code.end - code.start} B, ${whole} B gzipped; data section ${data.end - data.start} B, ${gz(buf.subarray(data.start, data.end))} B gzipped`,
);
const fns = [];
bodies.forEach(([s, e], i) => {
  const name = names.get(i) ?? `(no name: made by wasm-opt).function ${i}`;
  if (floor.has(name)) return;
  const without = Buffer.concat([buf.subarray(code.start, s), buf.subarray(e, code.end)]);
  fns.push({ name, raw: e - s, gz: whole - gz(without) });
});
const byPackage = new Map();
for (const f of fns) {
  // github.com_edgebloom_edgebloom_bloom.__Filter_.add: the package is
  // what precedes the first dot after the host name, if any (the import
  // path's slashes are underscores in a wasm name).
  const host = /^[\w-]+\.[a-z]+_/.exec(f.name);
  const dot = f.name.indexOf('.', host ? host[0].length : 0);
  const pkg = dot > 0 ? f.name.slice(0, dot) : f.name;
  const t = byPackage.get(pkg) ?? { raw: 0, gz: 0, n: 0 };
  t.raw += f.raw;
  t.gz += f.gz;
  t.n++;
  byPackage.set(pkg, t);
}
const total = fns.reduce((t, f) => t + f.gz, 0);
console.log(
  `\n${fns.length} functions${baseline ? ' beyond the baseline' : ''}: ${total} B gzipped (sum of single removals)\n`,
);
console.log('gzip B  raw B  functions  package');
for (const [pkg, t] of [...byPackage].sort((a, b) => b[1].gz - a[1].gz)) {
  console.log(`${String(t.gz).padStart(6)} ${String(t.raw).padStart(6)} ${String(t.n).padStart(10)}  ${pkg}`);
}
console.log('\ngzip B  raw B  function');
for (const f of fns.sort((a, b) => b.gz - a.gz).slice(0, Number(rows))) {
  console.log(`${String(f.gz).padStart(6)} ${String(f.raw).padStart(6)}  ${f.name}`);
}
