// The engine survives what workerd does to it: performance.now() and
// Date.now() stand still outside I/O, and inside FinalizationRegistry
// callbacks performance.now() reads 0. A Worker keeps one filter across
// requests and drops another without free(); garbage collection runs the
// dropped one's finalizer, whose free() runs Go. Go's runtime aborts
// ("fatal error: stopTheWorld: broken CPU time accounting") when the time
// its glue hands it reads 0, which killed the engine and the kept filter.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import {
  assertWorkerdBundle,
  cleanup,
  compatibilityDate,
  linkPackage,
  repoRoot,
  startMiniflare,
  tempDir,
  timeout,
  writeFiles,
} from './helpers.js';

after(cleanup);

// GET /setup makes the kept filter and drops a 1.2 MB one unfreed (free()
// of a filter of 64 KiB or more collects garbage in Go, which stops the
// world). GET /churn allocates and drops JS garbage so that V8 collects,
// and answers how many dropped filters the Worker's own registry saw go.
// GET /kept asks the kept filter for every key it holds.
const workerSource = `
import { init, BloomFilter } from 'edgebloom';

const keys = Array.from({ length: 2000 }, (_, i) => 'https://example.com/kept/' + i);
const seen = new FinalizationRegistry(() => { gone++; });
let kept;
let gone = 0;
let sink;

export default {
  async fetch(request) {
    const { pathname } = new URL(request.url);
    try {
      if (pathname === '/setup') {
        await init();
        kept = new BloomFilter({ capacity: 10000, errorRate: 0.01 });
        kept.addMany(keys);
        (() => {
          const dropped = new BloomFilter({ capacity: 1000000, errorRate: 0.01 });
          dropped.add('dropped');
          seen.register(dropped, 0);
        })();
        return Response.json({ ok: true });
      }
      if (pathname === '/churn') {
        for (let round = 0; round < 20; round++) {
          sink = Array.from({ length: 50000 }, (_, i) => ({ i, s: 'garbage ' + i }));
        }
        sink = null;
        return Response.json({ gone });
      }
      if (pathname === '/kept') {
        const answers = kept.hasMany(keys);
        return Response.json({ present: answers.filter(Boolean).length, of: keys.length, added: kept.add('https://example.com/new') });
      }
    } catch (err) {
      return Response.json({ error: err.code ?? String(err) });
    }
    return new Response('not found', { status: 404 });
  },
};
`;

test('workerd: a kept filter still answers after a dropped one was finalized, with the clock workerd gives', { timeout }, async () => {
  const dir = await tempDir('workerd-idle');
  const config = { name: 'edgebloom-e2e-idle', main: 'src/index.js', compatibility_date: compatibilityDate, compatibility_flags: [] };
  await writeFiles(dir, {
    'package.json': { name: 'edgebloom-e2e-idle', private: true, type: 'module' },
    'wrangler.jsonc': config,
    'src/index.js': workerSource,
  });
  await linkPackage(dir);
  const bundle = await assertWorkerdBundle(dir, repoRoot);
  const mf = await startMiniflare(bundle, config);
  const get = async (path) => (await mf.dispatchFetch(`http://worker${path}`)).json();
  assert.deepEqual(await get('/setup'), { ok: true });
  let rounds = 0;
  for (; rounds < 200 && (await get('/churn')).gone === 0; rounds++);
  assert.ok(rounds < 200, 'the dropped filter was never collected');
  // The package's registry may run its callback after the Worker's.
  for (let i = 0; i < 5; i++) await get('/churn');
  assert.deepEqual(await get('/kept'), { present: 2000, of: 2000, added: true });
  // Then idle, as a Worker between requests: Go's runtime has timers of its
  // own (its background scavenger) that fire meanwhile and read the clock.
  await new Promise((resolve) => setTimeout(resolve, 3000));
  await get('/churn');
  assert.deepEqual(await get('/kept'), { present: 2000, of: 2000, added: false });
});
