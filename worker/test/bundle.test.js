// What a deploy bundles: the production entry (wrangler.jsonc's "main")
// holds no test code, and its Durable Objects answer no test hook even with
// EDGEBLOOM_TEST_HOOKS=1; the tests' build (testkit/worker-entry.mjs) has
// the hooks, and they answer only with that binding set.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildWorker, startWorker } from '../../testkit/worker.js';

let dir, production, tests;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'edgebloom-bundle-'));
  production = buildWorker(join(dir, 'production'), { production: true });
  tests = buildWorker(join(dir, 'tests'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

const isTestCode = (f) => /(^|\/)(test|testkit)\/|test-hooks\.js$/.test(f);

test('the production bundle holds the front and the shard, and no test code', () => {
  for (const f of ['worker/front/worker.mjs', 'worker/front/front.js', 'worker/shard/shard.js', 'js/workerd.js'])
    assert.ok(production.includes(f), `${f} in ${production.join(', ')}`);
  assert.deepEqual(production.filter(isTestCode), []);
  // The check would see test code: the tests' bundle has it.
  assert.ok(tests.includes('worker/shard/test-hooks.js'), `test-hooks.js in ${tests.join(', ')}`);
  assert.ok(tests.includes('js/test/engine.js'), `js/test/engine.js in ${tests.join(', ')}`);
});

// hookStatus starts the bundle in dir with bindings and returns the status
// of a shard's GET /_test/counters.
async function hookStatus(bundle, bindings) {
  const w = await startWorker(join(dir, bundle), join(dir, `state-${bundle}-${Object.values(bindings)}`), {
    bindings,
  });
  try {
    const { status, json } = await w.hook('shard:f:0', '/_test/counters');
    if (status === 404) assert.match(json, /"code":"not_found"/);
    return status;
  } finally {
    await w.dispose();
  }
}

test('the test hooks answer only in the tests build, with EDGEBLOOM_TEST_HOOKS=1', async () => {
  assert.equal(await hookStatus('tests', { EDGEBLOOM_TEST_HOOKS: '1' }), 200);
  assert.equal(await hookStatus('tests', { EDGEBLOOM_TEST_HOOKS: '0' }), 404);
  assert.equal(await hookStatus('production', { EDGEBLOOM_TEST_HOOKS: '1' }), 404);
});
