// The malformed corpus (bloom/testdata/malformed.json, written by Go): every
// input is refused with the code Go's decoders give it, and the module keeps
// working. e2e/ runs the same check (e2e/check.js) in Chromium and workerd.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as edgebloom from 'edgebloom';
import { checkMalformed } from '../../e2e/check.js';
import { liveFilters, memoryBudget } from './engine.js';
import { fromBase64 } from './vectors.js';

const corpus = JSON.parse(readFileSync(new URL('../../bloom/testdata/malformed.json', import.meta.url), 'utf8'));

before(() => edgebloom.init());

test('every input of the malformed corpus is refused with its code; nothing is left behind', () => {
  // A case with a room was given its code for an engine with that much room
  // for loads (a fresh one with the default memory budget): this one has it.
  for (const room of new Set(corpus.cases.map((c) => c.room).filter((r) => r !== undefined))) {
    assert.equal(memoryBudget().loadRoom, room, 'the corpus was written for another room for loads');
  }
  const live = liveFilters();
  const { checked, failures } = checkMalformed(edgebloom, corpus);
  assert.deepEqual(failures, []);
  // Every case and a filter made afterwards.
  assert.equal(checked, corpus.cases.length + 1);
  assert.equal(liveFilters(), live, 'a refused input left a filter in the engine');
});

test('the router-seed-0 container is refused, not loaded with keys routed to the wrong shards', () => {
  const c = corpus.cases.find((x) => x.name === 'sharded router seed 0');
  assert.throws(() => edgebloom.ShardedBloomFilter.fromBytes(fromBase64(c.base64)), {
    code: 'ERR_CORRUPT',
    message: /router/,
  });
});
