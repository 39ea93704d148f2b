// Every link of every Markdown file of the repository (examples included)
// leads somewhere: a relative link to a file or directory that exists, an
// anchor (#section, on the page or another one) to a heading there, and a
// reference in prose to a section of a doc (worker/README.md, "Tokens", or
// DESIGN.md's "Checkpoints") to a section that exists. Links to other sites
// are not followed: no test reaches the internet.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The Markdown files git tracks or would track, outside node_modules. */
export function markdownFiles() {
  return execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '*.md'], {
    cwd: root,
    encoding: 'utf8',
  })
    .split('\n')
    .filter((f) => f && !f.split('/').includes('node_modules') && existsSync(path.join(root, f)));
}

/** prose is a page without its fenced code blocks and code spans. */
export function prose(text) {
  return text
    .replace(/^ {0,3}(```|~~~)[^\n]*\n[\s\S]*?^ {0,3}\1[^\n]*$/gm, '')
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/(`+)[\s\S]*?\1/g, '');
}

/**
 * slug is the anchor GitHub gives a heading: its text without Markdown
 * (code marks, emphasis, links), lower-cased, every character but letters,
 * digits, spaces, hyphens and underscores removed, spaces made hyphens.
 */
export function slug(heading) {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/[`*]/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
    .replace(/ /g, '-');
}

/** anchors are a page's headings' slugs (a repeated one gets -1, -2...) and its explicit ids and names. */
export function anchors(text) {
  const out = new Set();
  const count = new Map();
  const body = text.replace(/^ {0,3}(```|~~~)[^\n]*\n[\s\S]*?^ {0,3}\1[^\n]*$/gm, '');
  for (const m of body.matchAll(/^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const s = slug(m[1]);
    const n = count.get(s) ?? 0;
    count.set(s, n + 1);
    out.add(n ? `${s}-${n}` : s);
  }
  for (const m of body.matchAll(/<[^>]+\s(?:id|name)="([^"]+)"/g)) out.add(m[1]);
  return out;
}

/** sections are a page's headings and the bold lead-ins of its paragraphs and list items, lower-cased. */
function sections(text) {
  const body = text.replace(/^ {0,3}(```|~~~)[^\n]*\n[\s\S]*?^ {0,3}\1[^\n]*$/gm, '');
  return [
    ...[...body.matchAll(/^#{1,6} (.+)$/gm)].map((m) => m[1].replace(/`/g, '')),
    ...[...body.matchAll(/^(?:- )?\*\*([^*]+?)\.?\*\*/gm)].map((m) => m[1]),
  ].map((s) => s.toLowerCase());
}

/** links are the targets of a page's links: inline, reference definitions, and HTML href and src. */
export function links(text) {
  const body = prose(text);
  return [
    ...[...body.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]),
    ...[...body.matchAll(/^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map((m) => m[1]),
    ...[...body.matchAll(/<(?:a|img|link|script)\s[^>]*?(?:href|src)="([^"]+)"/g)].map((m) => m[1]),
  ];
}

/** refs are a page's references in prose to a section of a doc: FILE.md, "Section" or FILE.md's "Section". */
export function refs(text) {
  const body = prose(text).replace(/\s*\n\s*/g, ' ');
  return [...body.matchAll(/([\w./-]*\.md)\)?(?:,|'s| in| section)? "([^"]+)"/g)].map((m) => ({
    doc: m[1].replace(/^\[/, ''),
    section: m[2],
  }));
}

const read = (file) => readFileSync(path.join(root, file), 'utf8');

// resolveDoc finds a doc named in file: relative to the file's directory or
// a directory above it, or from the repository's root.
function resolveDoc(file, named) {
  for (let dir = path.dirname(file); ; dir = path.dirname(dir)) {
    const candidate = path.normalize(path.join(dir, named));
    if (!candidate.startsWith('..') && existsSync(path.join(root, candidate))) return candidate;
    if (dir === '.' || dir === '') return undefined;
  }
}

/** problems lists what is wrong with the links and section references of the Markdown file (a path from the root). */
export function problems(file) {
  const text = read(file);
  const wrong = [];
  for (const link of links(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // https:, mailto:, chrome-extension:, ...
    const [rawPath, anchor] = link.split('#', 2);
    const target = decodeURIComponent(rawPath.split('?')[0]);
    let dest = file;
    if (target) {
      dest = path.normalize(target.startsWith('/') ? target.slice(1) : path.join(path.dirname(file), target));
      if (dest.startsWith('..') || !existsSync(path.join(root, dest))) {
        wrong.push(`${file}: (${link}): no such file or directory ${dest}`);
        continue;
      }
    }
    if (anchor === undefined || anchor === '' || /^L\d+(-L\d+)?$/.test(anchor)) continue;
    if (statSync(path.join(root, dest)).isDirectory()) {
      const readme = path.join(dest, 'README.md');
      if (!existsSync(path.join(root, readme))) {
        wrong.push(`${file}: (${link}): an anchor into ${dest}/, which has no README.md`);
        continue;
      }
      dest = readme;
    }
    if (!dest.endsWith('.md')) {
      wrong.push(`${file}: (${link}): an anchor into ${dest}, which is no Markdown page`);
      continue;
    }
    if (!anchors(read(dest)).has(decodeURIComponent(anchor))) {
      wrong.push(`${file}: (${link}): no heading of ${dest} has the anchor #${anchor}`);
    }
  }
  for (const { doc, section } of refs(text)) {
    const found = resolveDoc(file, doc);
    if (!found) {
      wrong.push(`${file}: ${doc}, "${section}": no such doc`);
      continue;
    }
    const want = section.toLowerCase().replace(/[.,]$/, '');
    if (!sections(read(found)).some((s) => s === want || s.startsWith(want))) {
      wrong.push(`${file}: ${doc}, "${section}": no such section in ${found}`);
    }
  }
  return wrong;
}

test('slug and anchors: GitHub heading anchors', () => {
  assert.equal(slug('Pages on other origins (CORS)'), 'pages-on-other-origins-cors');
  assert.equal(slug('What `npm start` and npm test need'), 'what-npm-start-and-npm-test-need');
  assert.equal(slug('From a clone, before the first release'), 'from-a-clone-before-the-first-release');
  assert.equal(slug('Go ≥ 1.25 / Node'), 'go--125--node');
  assert.deepEqual([...anchors('# A\n\n## A\n\n```\n# not a heading\n```\n<a id="x"></a>\n')], ['a', 'a-1', 'x']);
});

test('problems finds a missing file, a missing anchor and a missing section', () => {
  const text = [
    '[gone](no/such/file.md) [ok](README.md#install) [bad](README.md#no-such-heading)',
    'See docs/go.md, "No such section", and docs/go.md\'s "Usage".',
    '`[in code](nowhere.md)`',
  ].join('\n');
  const found = links(text);
  assert.deepEqual(found, ['no/such/file.md', 'README.md#install', 'README.md#no-such-heading']);
  assert.deepEqual(refs(text), [
    { doc: 'docs/go.md', section: 'No such section' },
    { doc: 'docs/go.md', section: 'Usage' },
  ]);
  const dir = mkdtempSync(path.join(root, '.links-test-'));
  try {
    writeFileSync(path.join(dir, 'page.md'), `# Page\n\n${text}\n\n[here](#page) [there](#nowhere)\n`);
    assert.deepEqual(
      problems(path.relative(root, path.join(dir, 'page.md'))).map((p) => p.replace(/^[^:]*: /, '')),
      [
        '(no/such/file.md): no such file or directory ' + path.relative(root, path.join(dir, 'no/such/file.md')),
        `(README.md#install): no such file or directory ${path.relative(root, path.join(dir, 'README.md'))}`,
        `(README.md#no-such-heading): no such file or directory ${path.relative(root, path.join(dir, 'README.md'))}`,
        '(#nowhere): no heading of ' + path.relative(root, path.join(dir, 'page.md')) + ' has the anchor #nowhere',
        'docs/go.md, "No such section": no such section in docs/go.md',
      ],
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('every link, anchor and section reference of every Markdown file leads to something that exists', () => {
  const files = markdownFiles();
  assert.ok(files.includes('README.md') && files.includes('examples/sync/README.md'), files.join(' '));
  const wrong = files.flatMap(problems);
  assert.deepEqual(wrong, []);
});
