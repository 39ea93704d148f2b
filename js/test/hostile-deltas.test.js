// The hostile deltas (snapshot/testdata/hostile-deltas/, written by Go's
// snapshot tests): applyDelta refuses each with the code Go's ApplyDelta
// gives it (the manifest's), leaves the copy and its cursor as they were,
// leaves no filter behind in the engine, and the module keeps working.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init, applyDelta, fromBytes } from 'edgebloom';
import { liveFilters } from './engine.js';

const dir = new URL('../../snapshot/testdata/hostile-deltas/', import.meta.url);
const manifest = JSON.parse(readFileSync(new URL('manifest.json', dir), 'utf8'));
const read = (file) => new Uint8Array(readFileSync(new URL(file, dir)));

before(() => init());

test('every hostile delta is refused with the code Go gives it, changing nothing', () => {
  const copyBytes = read(manifest.copy);
  const live = liveFilters();
  const failures = [];
  for (const c of manifest.cases) {
    const copy = fromBytes(copyBytes);
    try {
      let code = 'no error';
      try {
        applyDelta(copy, read(c.file), c.cursor ?? manifest.cursor);
      } catch (err) {
        code = err?.code ?? `${err?.name}: ${err?.message}`;
      }
      if (code !== c.code) failures.push(`${c.name} (${c.about}): ${code}, Go says ${c.code}`);
      if (!Buffer.from(copy.toBytes()).equals(copyBytes)) failures.push(`${c.name}: the copy changed`);
    } finally {
      copy.free();
    }
  }
  assert.deepEqual(failures, []);
  assert.ok(manifest.cases.length >= 60, `${manifest.cases.length} cases`);
  assert.equal(liveFilters(), live, 'a refused delta left a filter in the engine');
});

test('the corpus holds every kind of refusal, and the copy takes a good delta afterwards', () => {
  const codes = new Set(manifest.cases.map((c) => c.code));
  for (const code of [
    'ERR_TRUNCATED',
    'ERR_NOT_FILTER',
    'ERR_VERSION',
    'ERR_KIND',
    'ERR_CORRUPT',
    'ERR_CHECKSUM',
    'ERR_INCOMPATIBLE',
    'ERR_GENERATION',
    'ERR_GAP',
    'ERR_ARG',
  ])
    assert.ok(codes.has(code), code);
  // The cursor-of-another-shard-count case carries a good delta: with the
  // copy's own cursor it applies.
  const c = manifest.cases.find((x) => x.name === 'cursor of 2 shards');
  const copy = fromBytes(read(manifest.copy));
  try {
    const before = copy.stats().count;
    const next = applyDelta(copy, read(c.file), manifest.cursor);
    assert.notEqual(next, manifest.cursor);
    assert.ok(copy.stats().count > before);
  } finally {
    copy.free();
  }
});
