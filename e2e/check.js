// The golden-vector check, run inside every runtime the e2e tests drive: a
// page, an MV3 service worker, workerd, an esbuild bundle. Plain ESM with no
// imports: each test ships this file next to its entry and calls
// checkVectors(edgebloom, vectors) after init().
//
// vectors is bloom/testdata/vectors.json, written by Go. The result lists
// every mismatch, so one run reports all of them.

export function fromBase64(s) {
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

export function toBase64(bytes) {
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    bin += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  }
  return btoa(bin);
}

function same(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

function classFor(edgebloom, kind) {
  const classes = {
    classic: edgebloom.BloomFilter,
    counting: edgebloom.CountingBloomFilter,
    scalable: edgebloom.ScalableBloomFilter,
    window: edgebloom.WindowBloomFilter,
    blocked: edgebloom.BlockedBloomFilter,
  };
  const C = classes[kind];
  if (!C) throw new Error(`unknown filter kind ${kind}`);
  return C;
}

/**
 * Checks edgebloom (the module namespace, already initialized) against the
 * golden vectors.
 * @returns {{checked: number, failures: string[]}}
 */
export function checkVectors(edgebloom, vectors) {
  const failures = [];
  let checked = 0;
  const expect = (what, got, want) => {
    checked++;
    if (!same(got, want)) failures.push(`${what}: got ${JSON.stringify(got)}; want ${JSON.stringify(want)}`);
  };
  // One line per key that differs: "has("k"): got false; want true".
  const expectEach = (what, inputs, got, want) => {
    if (got.length !== want.length) return expect(`${what}: length`, got.length, want.length);
    inputs.forEach((input, i) => expect(`${what}(${JSON.stringify(input)})`, got[i], want[i]));
  };
  const keys = vectors.keys;

  for (const loc of vectors.locations) {
    if (loc.m > edgebloom.MAX_BITS) continue;
    const f = new edgebloom.BloomFilter({ bits: loc.m, hashes: loc.k });
    const got = keys.map((key) => f.positions(key));
    expectEach(`m=${loc.m}, k=${loc.k}: positions`, keys, got, loc.positions);
    f.free();
  }

  // The split-block kind: 256·block + 32·word + bit for each key.
  for (const loc of vectors.blockedLocations) {
    if (256 * loc.blocks > edgebloom.MAX_BITS) continue;
    const f = new edgebloom.BlockedBloomFilter({ blocks: loc.blocks });
    const got = keys.map((key) => f.positions(key));
    expectEach(`blocks=${loc.blocks}: positions`, keys, got, loc.positions);
    f.free();
  }

  for (const v of [...vectors.filters, ...vectors.blocked]) {
    const C = classFor(edgebloom, v.kind);
    const addKeys = v.added.map((i) => keys[i]);
    const removeKeys = (v.removed ?? []).map((i) => keys[i]);
    const stats = (f) => ({ kind: f.kind, bits: f.bits, hashes: f.hashes, count: f.count, setBits: f.setBits });
    const want = { kind: v.kind, bits: v.bits, hashes: v.hashes, count: v.count, setBits: v.setBits };

    // Loaded from Go's bytes: same answers, same bytes back.
    const loaded = edgebloom.fromBytes(fromBase64(v.base64));
    expect(`${v.name}: fromBytes, stats`, stats(loaded), want);
    expectEach(
      `${v.name}: fromBytes, has`,
      v.probes,
      v.probes.map((p) => loaded.has(p)),
      v.has,
    );
    expectEach(`${v.name}: fromBytes, hasMany`, v.probes, loaded.hasMany(v.probes), v.has);
    expect(`${v.name}: fromBytes, toBytes`, toBase64(loaded.toBytes()), v.base64);
    loaded.free();

    // Built here, one key at a time and in batches: Go's bytes. A window
    // rotates after as many adds as each number of v.rotations says.
    for (const variant of ['add', 'addMany']) {
      const f = new C(v.params);
      const added = [];
      let start = 0;
      const addUpTo = (end) => {
        const part = addKeys.slice(start, end);
        added.push(...(variant === 'add' ? part.map((k) => f.add(k)) : f.addMany(part)));
        start = end;
      };
      for (const r of v.rotations ?? []) {
        addUpTo(r);
        f.rotate();
      }
      addUpTo(addKeys.length);
      expectEach(`${v.name}: ${variant}`, addKeys, added, v.addResults);
      if (v.removed)
        expectEach(
          `${v.name}: remove`,
          removeKeys,
          removeKeys.map((k) => f.remove(k)),
          v.removeResults,
        );
      expect(`${v.name}: built with ${variant}, stats`, stats(f), want);
      expectEach(
        `${v.name}: built with ${variant}, has`,
        v.probes,
        v.probes.map((p) => f.has(p)),
        v.has,
      );
      expect(`${v.name}: built with ${variant}, toBytes`, toBase64(f.toBytes()), v.base64);
      f.free();
    }
  }
  // A split-block filter's payload is Parquet's bitset (docs/format.md):
  // fromParquet reads it, parquetBitset gives it back.
  for (const v of vectors.blocked) {
    const bytes = fromBase64(v.base64);
    const bitset = bytes.slice(64, bytes.length - 8);
    const f = edgebloom.BlockedBloomFilter.fromParquet(bitset);
    expect(`${v.name}: fromParquet, parquetBitset`, toBase64(f.parquetBitset()), toBase64(bitset));
    expectEach(`${v.name}: fromParquet, hasMany`, v.probes, f.hasMany(v.probes), v.has);
    f.free();
  }

  if (vectors.malformed) {
    const m = checkMalformed(edgebloom, vectors.malformed);
    checked += m.checked;
    failures.push(...m.failures);
  }

  // canonicalURL on the runtime's own URL parser, against Go's urlkey table.
  for (const c of vectors.urlCases ?? []) {
    let got;
    try {
      got = edgebloom.canonicalURL(c.in, c.opts);
    } catch (err) {
      got = err instanceof TypeError && err.message.startsWith('urlkey: ') ? 'error' : String(err);
    }
    expect(`canonicalURL(${JSON.stringify(c.in)})`, got, c.error ? 'error' : c.out);
  }
  return { checked, failures };
}

/**
 * Checks that fromBytes refuses every input of the malformed corpus
 * (bloom/testdata/malformed.json, written by Go, which refuses them with the
 * same codes), and that the module keeps working after each refusal. A case
 * with a room is refused under the bound the memory budget sets (in Go:
 * loadBudgeted in bloom/malformed_test.go).
 * @returns {{checked: number, failures: string[]}}
 */
export function checkMalformed(edgebloom, corpus) {
  const failures = [];
  let checked = 0;
  for (const c of corpus.cases) {
    checked++;
    let got;
    try {
      const f = edgebloom.fromBytes(fromBase64(c.base64), { maxBits: c.maxBits });
      f.free();
      got = 'no error';
    } catch (err) {
      got = err?.code ?? `${err?.name}: ${err?.message}`;
    }
    if (got !== c.code) failures.push(`malformed "${c.name}" (${c.about}): got ${got}; want ${c.code}`);
  }
  checked++;
  try {
    const f = new edgebloom.BloomFilter({ capacity: 100, errorRate: 0.01 });
    const ok = f.add('after the corpus') && f.has('after the corpus');
    f.free();
    if (!ok) failures.push('after the malformed corpus: a new filter does not hold its key');
  } catch (err) {
    failures.push(`after the malformed corpus: ${err?.code ?? err}`);
  }
  return { checked, failures };
}

const GLOBALS = ['fs', 'process', 'path', 'Go'];

/** typeof and identity of the globals Go's wasm_exec.js would install. */
export function snapshotGlobals() {
  return Object.fromEntries(GLOBALS.map((name) => [name, globalThis[name]]));
}

function describe(value) {
  return value === undefined ? 'undefined' : `${typeof value} ${value?.name ?? ''}`.trim();
}

/**
 * Everything a runtime checks: init() (twice at once: idempotent), the
 * golden vectors, and that no global changed. before is the snapshot of the
 * globals taken before the package was imported (by a classic script in a
 * page); without it, the one taken here, before init().
 */
export async function runChecks(edgebloom, vectors, before = snapshotGlobals()) {
  try {
    await Promise.all([edgebloom.init(), edgebloom.init()]);
    const result = checkVectors(edgebloom, vectors);
    const after = snapshotGlobals();
    for (const name of GLOBALS) {
      result.checked++;
      if (after[name] !== before[name]) {
        result.failures.push(
          `globalThis.${name}: ${describe(after[name])} after init(), ${describe(before[name])} before`,
        );
      }
    }
    return result;
  } catch (err) {
    return { checked: 0, failures: [`threw: ${err?.stack ?? err}`] };
  }
}
