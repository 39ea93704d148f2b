// A code comment that sends the reader to a section of a doc
// (`worker/DESIGN.md, "Checkpoints"`) names a doc and a section that exist:
// docs move, and a pointer to a section that moved elsewhere misleads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '../..');

// The sections of a Markdown page: its headings, and the bold lead-ins of
// its paragraphs and list items ("**The cursor** ...").
function sections(page) {
  const text = readFileSync(path.join(root, page), 'utf8').replace(/^```[\s\S]*?^```/gm, '');
  return [
    ...[...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => m[1]),
    ...[...text.matchAll(/^(?:- )?\*\*([^*]+?)\.?\*\*/gm)].map((m) => m[1]),
  ].map((s) => s.toLowerCase());
}

// The doc a comment in file names: a path from the repository's root, or
// one relative to the file's directory or a directory above it.
function resolveDoc(file, named) {
  if (existsSync(path.join(root, named)) && named.includes('/')) return named;
  for (let dir = path.dirname(file); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, named);
    if (existsSync(path.join(root, candidate))) return candidate;
    if (dir === '.' || dir === '') return undefined;
  }
}

test('every section a code comment points at exists in the doc it names', () => {
  const files = execFileSync('git', ['ls-files', '*.go', '*.js', '*.mjs', '*.sh', '*.jsonc'], {
    cwd: root,
    encoding: 'utf8',
  })
    .split('\n')
    .filter((f) => f && !f.includes('node_modules/') && f !== 'tools/test/doc-refs.test.js');
  const wrong = [];
  let seen = 0;
  for (const file of files) {
    // Comments wrap: join each line to the next without its comment marker.
    const text = readFileSync(path.join(root, file), 'utf8').replace(/\n\s*(?:\/\/|#|\*)\s*/g, ' ');
    for (const m of text.matchAll(/([\w./-]*(?:README|DESIGN)\.md),? "([^"]+)"/g)) {
      seen++;
      const doc = resolveDoc(file, m[1]);
      if (!doc) {
        wrong.push(`${file}: ${m[1]}: no such doc`);
        continue;
      }
      const want = m[2].toLowerCase().replace(/[.,]$/, '');
      if (!sections(doc).some((s) => s === want || s.startsWith(want)))
        wrong.push(`${file}: ${m[1]}, "${m[2]}": no such section in ${doc}`);
    }
  }
  assert.ok(seen > 10, `the comments that point at docs were found (${seen})`);
  assert.deepEqual(wrong, []);
});
