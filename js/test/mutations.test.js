// Go and the npm module refuse the same bytes with the same code. Go's
// TestMutations (bloom/mutations_test.go) makes 20,000 edits of valid
// encodings of every kind and of a sharded container from a seed and writes
// each with the code Go's decoders give it ("no error" when they accept it)
// under the case's maxBits and the bound a fresh engine's default memory
// budget sets; every one must get that code here too. Each run checks the
// fixed seed and a fresh one, which it prints: EDGEBLOOM_MUTATION_SEED=N
// runs seed N again in its place.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as edgebloom from 'edgebloom';
import { checkMalformed } from '../../e2e/check.js';
import { liveFilters } from './engine.js';

before(() => edgebloom.init());

const fresh = process.env.EDGEBLOOM_MUTATION_SEED ?? String(randomInt(2 ** 47));

for (const seed of ['30', fresh]) {
  test(`random edits of valid encodings get the code Go gives them (seed ${seed})`, (t) => {
    t.diagnostic(`seed ${seed}`);
    const dir = mkdtempSync(join(tmpdir(), 'edgebloom-mutations-'));
    try {
      const out = join(dir, 'mutations.json');
      execFileSync('go', ['test', '-count=1', '-run', '^TestMutations$', './bloom'], {
        cwd: new URL('../..', import.meta.url).pathname,
        env: { ...process.env, EDGEBLOOM_MUTATIONS: out, EDGEBLOOM_MUTATION_SEED: seed },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      const corpus = JSON.parse(readFileSync(out, 'utf8'));
      assert.equal(corpus.cases.length, 20000);
      // Every kind of refusal is among them, the budget's too.
      const codes = new Set(corpus.cases.map((c) => c.code));
      for (const code of ['ERR_TOO_LARGE', 'ERR_CORRUPT', 'ERR_CHECKSUM', 'ERR_TRUNCATED', 'ERR_KIND', 'no error']) {
        assert.ok(codes.has(code), `no case of ${code}`);
      }
      assert.ok(
        corpus.cases.some((c) => c.code === 'ERR_TOO_LARGE' && c.native !== undefined),
        'no case that only the budget refuses',
      );
      const live = liveFilters();
      const { failures } = checkMalformed(edgebloom, corpus);
      const byCodes = {};
      for (const f of failures) {
        const key = f.replace(/^.*: got (\S+); want (\S+)$/, '$1 where Go says $2');
        byCodes[key] = (byCodes[key] ?? 0) + 1;
      }
      assert.deepEqual(
        failures.slice(0, 20),
        [],
        `seed ${seed}: ${failures.length} differ: ${JSON.stringify(byCodes)}`,
      );
      assert.equal(liveFilters(), live, 'an input left a filter in the engine');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
