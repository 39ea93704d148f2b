// Go and the npm module refuse the same bytes with the same code. Go's
// TestMutations (bloom/mutations_test.go) makes 20,000 edits of valid
// encodings of every kind and of a sharded container from a fixed seed and
// writes each with the code Go's decoders give it ("no error" when they
// accept it); every one must get that code here too.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as edgebloom from 'edgebloom';
import { checkMalformed } from '../../e2e/check.js';
import { liveFilters } from './engine.js';

before(() => edgebloom.init());

test('random edits of valid encodings get the code Go gives them', () => {
  const dir = mkdtempSync(join(tmpdir(), 'edgebloom-mutations-'));
  try {
    const out = join(dir, 'mutations.json');
    execFileSync('go', ['test', '-count=1', '-run', '^TestMutations$', './bloom'], {
      cwd: new URL('../..', import.meta.url).pathname,
      env: { ...process.env, EDGEBLOOM_MUTATIONS: out },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const corpus = JSON.parse(readFileSync(out, 'utf8'));
    assert.equal(corpus.cases.length, 20000);
    const live = liveFilters();
    const { failures } = checkMalformed(edgebloom, corpus);
    const byCodes = {};
    for (const f of failures) {
      const key = f.replace(/^.*: got (\S+); want (\S+)$/, '$1 where Go says $2');
      byCodes[key] = (byCodes[key] ?? 0) + 1;
    }
    assert.deepEqual(failures.slice(0, 20), [], `${failures.length} differ: ${JSON.stringify(byCodes)}`);
    assert.equal(liveFilters(), live, 'an input left a filter in the engine');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
