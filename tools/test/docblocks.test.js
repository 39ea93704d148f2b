// tools/docblocks.mjs: how it reads a doc's blocks and notes, and that a
// block that stops working, or says what the code does not do, fails.
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  blocks,
  checkedJS,
  docs,
  expectedOutput,
  importMapProblem,
  jsonProblem,
  options,
  runDoc,
} from '../docblocks.mjs';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '../..');

test('blocks gives each fence with its language, line and the note before it', () => {
  const md = [
    '# T',
    '',
    '<!-- not-run: needs a Cloudflare account -->',
    '```sh',
    'wrangler deploy',
    '```',
    '',
    '```js',
    "f.has('a'); // true",
    '```',
    '<!-- run: serve http://127.0.0.1:8787/ cwd=tmp -->',
    '````text',
    '```',
    '````',
    '- an item:',
    '',
    '  ```sh',
    '  echo indented',
    '  ```',
  ].join('\n');
  const got = blocks(md);
  assert.deepEqual(
    got.map((b) => [b.lang, b.line, b.note?.kind, b.note?.text]),
    [
      ['sh', 4, 'not-run', 'needs a Cloudflare account'],
      ['js', 8, undefined, undefined],
      ['text', 12, 'run', 'serve http://127.0.0.1:8787/ cwd=tmp'],
      ['sh', 17, undefined, undefined],
    ],
  );
  assert.equal(got[3].code, 'echo indented\n');
  assert.equal(got[2].code, '```\n');
  assert.throws(() => blocks('```sh\nnever closed\n'), /never closed/);
});

test('options reads serve, cwd=tmp and files, and refuses what it does not know', () => {
  const o = options('serve http://127.0.0.1:8787/ files=urls.txt.gz,a.txt');
  assert.equal(o.serve.port, '8787');
  assert.deepEqual(o.files, ['urls.txt.gz', 'a.txt']);
  assert.equal(o.tmp, true);
  assert.throws(() => options('cwd=home'), /unknown option "cwd=home"/);
});

test('checkedJS turns "expr; // VALUE" and "// throws" lines into checks, and leaves the rest', () => {
  const code = [
    "f.has('a'); // true: probably",
    "g('x;y'); // 'x;y'",
    'const n = f.count; // 3',
    'f.addMany([',
    "  'a',",
    ']); // false',
    "h(); // throws TypeError: bad 'x'",
    'f.add(k); // a comment, no value',
    'g.free(); // 410 gone: a number that starts a comment',
  ].join('\n');
  const out = checkedJS(code, { doc: 'd.md', line: 10 }).split('\n');
  assert.equal(out[0], `__expect((f.has('a')), true, "d.md:11");`);
  assert.equal(out[1], `__expect((g('x;y')), 'x;y', "d.md:12");`);
  assert.equal(out[2], 'const n = f.count; // 3', 'a declaration is left');
  assert.equal(out[5], ']); // false', 'the end of a statement over several lines is left');
  assert.equal(out[6], `__throws(() => (h()), TypeError, "bad 'x'", "d.md:17");`);
  assert.equal(out[7], 'f.add(k); // a comment, no value');
  assert.equal(out[8], 'g.free(); // 410 gone: a number that starts a comment');
});

test("expectedOutput gives the comment lines after a command, not a block's leading comments", () => {
  assert.deepEqual(expectedOutput('# a note\ncurl x\n# {"seen":true}\n# line 2\n\n# later note\n'), [
    '{"seen":true}',
    'line 2',
  ]);
});

test('json and import-map checks', () => {
  assert.equal(jsonProblem('"vars": { "A": "1" }'), '');
  assert.equal(jsonProblem('// a comment\n{ "a": [1, 2,] }'), '');
  assert.notEqual(jsonProblem('"vars": { A: 1 }'), '');
  const map = (to) => `<script type="importmap">{ "imports": { "edgebloom": "${to}" } }</script>`;
  assert.equal(importMapProblem(map('/node_modules/edgebloom/js/index.js')), '');
  assert.match(importMapProblem(map('/node_modules/edgebloom/js/nothing.js')), /does not ship/);
  assert.match(importMapProblem(map('/node_modules/edgebloom/bloom/bloom.go')), /does not ship/);
  assert.match(importMapProblem('<p>hi</p>'), /without an import map/);
});

test('docs lists the README, docs/, worker/ and the examples', () => {
  const all = docs();
  for (const d of ['README.md', 'docs/npm.md', 'worker/README.md', 'examples/sync/README.md'])
    assert.ok(all.includes(d), d);
});

test('runDoc runs the blocks, and a block that fails or states a wrong value fails it', async () => {
  const dir = path.join(root, '.cache/docblocks-test');
  mkdirSync(dir, { recursive: true });
  const doc = path.relative(root, path.join(dir, 'page.md'));
  try {
    const page = (js, sh) =>
      [
        '```js',
        "import { init, BloomFilter } from 'edgebloom';",
        'await init();',
        'const f = new BloomFilter({ capacity: 100, errorRate: 0.01 });',
        js,
        '```',
        '',
        '<!-- run: cwd=tmp files=urls.txt -->',
        '```sh',
        sh,
        '```',
        '',
        '<!-- not-run: needs a Cloudflare account -->',
        '```sh',
        'exit 1',
        '```',
        '',
        '```go',
        'package main',
        '```',
      ].join('\n');
    writeFileSync(path.join(root, doc), page("f.add('a'); // true", 'grep -c example.com urls.txt\n# 1'));
    const go = (f) => f.filter((x) => !/a go block this runner does not run/.test(x));
    assert.deepEqual(go(await runDoc(doc, { bin: dir })), []);
    assert.equal((await runDoc(doc, { bin: dir })).length, 1, 'a go block outside README.md and docs/ needs a note');
    writeFileSync(path.join(root, doc), page("f.add('a'); // false", 'true'));
    assert.match(
      go(await runDoc(doc, { bin: dir })).join('\n'),
      /page\.md:1: exited with 1[\s\S]*page\.md:5: the doc says false, the code gives true/,
    );
    writeFileSync(path.join(root, doc), page("f.add('a'); // true", 'echo something\n# other'));
    assert.match(
      go(await runDoc(doc, { bin: dir })).join('\n'),
      /page\.md:9: the output lacks the line the doc shows: other/,
    );
    writeFileSync(path.join(root, doc), page("f.add('a'); // true", 'false'));
    assert.match(go(await runDoc(doc, { bin: dir })).join('\n'), /page\.md:9: exited with 1/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
