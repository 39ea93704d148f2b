// examples/worker-blocklist: the packed package installed into a copy of
// the example, the filter built by its npm script (and the same bytes by the
// CLI), the Worker bundled as "wrangler deploy" bundles it and run in
// workerd (Miniflare), answering /seen?url= for every listed URL and none
// of a thousand others.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { cleanup, repoRoot, run, tempDir, timeout } from '../../testkit/process.js';
import { startMiniflare, wranglerBundle } from '../../testkit/workerd.js';
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
  assert.deepEqual(await answer('/'), [404, 'not found: ask GET /seen?url=<absolute http(s) URL>']);
  assert.deepEqual(await answer('/seen?url=https%3A%2F%2Fx', { method: 'POST' }), [405, 'use GET']);
});

// What the README says is refused, each with a message that says why and
// asks for what is looked up: absolute http and https URLs only.
const want = 'pass an absolute http or https URL, such as https://example.com/page';
const refused = [
  ['ads.example.com/banner.js', `no scheme: ${want}`],
  ['//ads.example.com/banner.js', `no scheme: ${want}`],
  ['wss://ads.example.com/banner.js', `scheme "wss" is not http or https: ${want}`],
  ['WS://ads.example.com/banner.js', `scheme "ws" is not http or https: ${want}`],
  ['ftp://ads.example.com/banner.js', `scheme "ftp" is not http or https: ${want}`],
  ['javascript:alert(1)', `scheme "javascript" is not http or https: ${want}`],
  ['data:text/html,hi', `scheme "data" is not http or https: ${want}`],
  ['https:///banner.js', `urlkey: want https:// and a host: ${want}`],
  ['https:ads.example.com', `urlkey: want https:// and a host: ${want}`],
  [
    'https://ads example.com/',
    /^urlkey: .*: pass an absolute http or https URL, such as https:\/\/example\.com\/page$/,
  ],
  ['https://ads.example.com/a\u0001b', `urlkey: control character: ${want}`],
];

test(
  'a url that is not an absolute http or https URL is refused with a 400 that says so, as the README lists',
  { timeout },
  async () => {
    const readme = await readFile(path.join(dir, 'README.md'), 'utf8');
    for (const [url, message] of refused) {
      const res = await mf.dispatchFetch(`http://worker/seen?url=${encodeURIComponent(url)}`);
      assert.equal(res.status, 400, url);
      const { error } = await res.json();
      if (typeof message === 'string') assert.equal(error, message, url);
      else assert.match(error, message, url);
      assert.doesNotMatch(error, /ws or wss/, `${url}: the message offers no scheme the Worker refuses`);
    }
    // The README names every kind of refusal the test sends.
    for (const shown of [
      'ads.example.com/banner.js',
      '//ads.example.com/',
      'wss://',
      'ws://',
      'ftp://',
      'javascript:',
      'data:',
      'https:///banner.js',
      'https:ads.example.com',
    ])
      assert.ok(readme.includes(`\`${shown}\``), `the README lists ${shown}`);
    assert.ok(readme.includes(want), 'the README quotes the message');
    // http and https, of any case, are looked up.
    for (const url of ['http://ads.example.com/x', 'HTTP://ads.example.com/x', 'hTtPs://ads.example.com/x'])
      assert.equal((await mf.dispatchFetch(`http://worker/seen?url=${encodeURIComponent(url)}`)).status, 200, url);
  },
);

test('npm run build refuses a list line the Worker would refuse, naming the line', { timeout }, async () => {
  const list = path.join(await tempDir('list'), 'list.txt');
  await writeFile(list, 'https://ads.example.com/banner.js\nwss://ads.example.com/socket\n');
  const out = path.join(path.dirname(list), 'out.bloom');
  const r = spawnSync(process.execPath, ['build-filter.js', list, out], { cwd: dir, encoding: 'utf8' });
  assert.equal(r.status, 1, r.stderr);
  assert.equal(r.stderr.trim(), `${list}:2: scheme "wss" is not http or https: ${want}: fix or remove the line`);
});
