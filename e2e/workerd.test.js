// The package in workerd: a Worker imports 'edgebloom' by name; wrangler
// bundles it with the workerd condition (js/workerd.js, the wasm as a
// compiled module); Miniflare runs it and answers as Go does.

import { after, before, test } from 'node:test';
import { cleanup, repoRoot, tempDir, timeout } from '../testkit/process.js';
import { startMiniflare } from '../testkit/workerd.js';
import { assertWorker, assertWorkerdBundle, linkPackage, loadVectors, writeWorkerProject } from './helpers.js';

let vectors;
before(
  async () => {
    vectors = await loadVectors();
  },
  { timeout },
);
after(cleanup);

for (const flags of [[], ['nodejs_compat']]) {
  test(`Worker bundled by wrangler, run in Miniflare, compatibility flags [${flags}]`, { timeout }, async () => {
    const dir = await tempDir('workerd');
    const config = await writeWorkerProject(dir, { flags });
    await linkPackage(dir);
    const bundle = await assertWorkerdBundle(dir, repoRoot);
    const mf = await startMiniflare(bundle, config);
    await assertWorker(mf, vectors);
  });
}
