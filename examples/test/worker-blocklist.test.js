// examples/worker-blocklist: the packed package installed into a copy of
// the example, the filter built by its npm script (and the same bytes by the
// CLI), the Worker bundled as "wrangler deploy" bundles it and run in
// workerd (Miniflare), answering /seen?url= for every listed URL and none
// of a thousand others.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { cleanup, repoRoot, run, startMiniflare, tempDir, timeout, wranglerBundle } from '../../e2e/helpers.js';
import { installExample } from './helpers.js';

let dir;
let mf;
let listed;

before(
  async () => {
    dir = await installExample('worker-blocklist');
    await run('npm', ['run', 'build'], { cwd: dir });
    const config = JSON.parse((await readFile(path.join(dir, 'wrangler.jsonc'), 'utf8')).replace(/^\s*\/\/.*$/gm, ''));
    const bundle = await wranglerBundle(dir);
    assert.ok(
      bundle.files.some((f) => f.endsWith('blocklist.bloom')),
      `the filter ships with the Worker: ${bundle.files}`,
    );
    mf = await startMiniflare(bundle, config, {
      modulesRules: [
        { type: 'CompiledWasm', include: ['**/*.wasm'] },
        { type: 'Data', include: ['**/*.bloom'] },
      ],
    });
    listed = (await readFile(path.join(dir, 'blocklist.txt'), 'utf8')).split('\n').filter(Boolean);
  },
  { timeout },
);
after(cleanup);

const seen = async (url) => {
  const res = await mf.dispatchFetch(`http://worker/seen?url=${encodeURIComponent(url)}`);
  assert.equal(res.status, 200, url);
  return (await res.json()).seen;
};

test('the CLI builds the same filter, byte for byte', { timeout }, async () => {
  const out = path.join(await tempDir('cli'), 'blocklist.bloom');
  const script = await readFile(path.join(dir, 'build-filter.js'), 'utf8');
  const args = script.match(/edgebloom (build .*) -o \S+ blocklist\.txt/)[1].split(' ');
  await run('go', ['run', './cmd/edgebloom', ...args, '-o', out, path.join(dir, 'blocklist.txt')], { cwd: repoRoot });
  assert.ok((await readFile(out)).equals(await readFile(path.join(dir, 'src/blocklist.bloom'))));
});

test('every listed URL is seen, in any spelling', { timeout }, async () => {
  for (const url of listed) assert.equal(await seen(url), true, url);
  assert.equal(await seen('HTTPS://ADS.example.com:443/banner.js#x'), true);
  assert.equal(await seen('https://bücher.example/'), true);
});

test('a thousand other URLs are not', { timeout }, async () => {
  const others = Array.from({ length: 1000 }, (_, i) => `https://example.com/page/${i}`);
  const answers = await Promise.all(others.map(seen));
  assert.deepEqual(
    others.filter((_, i) => answers[i]),
    [],
  );
});

test('errors say what to do', { timeout }, async () => {
  const answer = async (pathAndQuery, init) => {
    const res = await mf.dispatchFetch(`http://worker${pathAndQuery}`, init);
    return [res.status, (await res.json()).error];
  };
  assert.deepEqual(await answer('/seen'), [400, 'missing ?url=: pass the absolute URL to look up, URL-encoded']);
  const [status, message] = await answer('/seen?url=ftp%3A%2F%2Fx');
  assert.equal(status, 400);
  assert.match(message, /^urlkey: .*: pass an absolute http or https URL$/);
  assert.deepEqual(await answer('/'), [404, 'not found: ask GET /seen?url=<absolute http(s) URL>']);
  assert.deepEqual(await answer('/seen?url=https%3A%2F%2Fx', { method: 'POST' }), [405, 'use GET']);
});
