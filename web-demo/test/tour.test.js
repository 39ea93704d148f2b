// The tour (tour.js) against the page it walks through (index.html) and the
// examples it ends at (examples/), without a browser.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { STEPS, USES } from '../tour.js';

const demo = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const html = readFileSync(path.join(demo, 'index.html'), 'utf8');

test('the tour has 6 to 8 steps, a sentence each, each at a control of the page', () => {
  assert.ok(STEPS.length >= 6 && STEPS.length <= 8, `${STEPS.length} steps`);
  for (const step of STEPS) {
    assert.match(step.text, /^[A-Z].*[.:]$/, step.text);
    const id = step.target.match(/^#([\w-]+)$/)?.[1];
    const radio = step.target.match(/^input\[name="(\w+)"\]\[value="(\w+)"\]$/);
    if (id) assert.match(html, new RegExp(`id="${id}"`), step.target);
    else assert.ok(radio && html.includes(`name="${radio[1]}" value="${radio[2]}"`), step.target);
  }
  assert.equal(new Set(STEPS.map((s) => s.target)).size, STEPS.length, 'a different control each step');
  assert.ok(STEPS.at(-1).links, 'the last step links the examples');
});

test('the tour ends at examples that exist, which the page links and serve.js serves', () => {
  const serve = readFileSync(path.join(demo, 'serve.js'), 'utf8');
  for (const u of USES) {
    assert.ok(existsSync(path.join(demo, '..', 'examples', u.name, 'README.md')), u.name);
    assert.ok(html.includes(`href="/examples/${u.name}/README.md"`), `index.html links ${u.name}`);
    assert.ok(serve.includes(`'${u.name}'`), `serve.js serves ${u.name}`);
  }
  assert.deepEqual(
    USES.map((u) => u.name),
    ['colly-crawler', 'sync-extension', 'parquet'],
  );
});

test('every step but the last has a title and a button that sets it up, which lessons.js defines', () => {
  const lessons = readFileSync(path.join(demo, 'lessons.js'), 'utf8');
  STEPS.forEach((step, i) => {
    assert.match(step.title, /^[A-Z]/, `step ${i + 1} has a title`);
    if (i === STEPS.length - 1) return;
    assert.match(step.button, /^[A-Z].{10,}[^.]$/, `step ${i + 1}: ${step.button}`);
    assert.match(lessons, new RegExp(`^  ${i + 1}: (async )?\\(\\) => \\{`, 'm'), `lessons.js sets up step ${i + 1}`);
  });
});
