// The demo's modules import one another without a circle: each can be read,
// and loaded, after the modules it imports, and a module's top-level code
// never meets another's binding before that module ran.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const demo = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

// imports returns the demo's own modules that file imports (its relative
// specifiers), resolved against the demo's directory.
function imports(file) {
  const src = readFileSync(path.join(demo, file), 'utf8');
  const found = [];
  for (const [, spec] of src.matchAll(/^\s*(?:import|export)\b[^'"]*?\bfrom\s*['"]([^'"]+)['"]/gm)) {
    if (spec.startsWith('./')) found.push(path.posix.normalize(spec));
  }
  for (const [, spec] of src.matchAll(/^\s*import\s*['"](\.\/[^'"]+)['"]/gm)) found.push(path.posix.normalize(spec));
  return found;
}

// cycle returns a circle of imports among the modules of graph, as a list
// of files that starts and ends with the same one, or null.
function cycle(graph) {
  const state = new Map(); // file -> 'open' while on the path, 'done' after
  const stack = [];
  const visit = (file) => {
    if (state.get(file) === 'done') return null;
    if (state.get(file) === 'open') return [...stack.slice(stack.indexOf(file)), file];
    state.set(file, 'open');
    stack.push(file);
    for (const dep of graph.get(file) ?? []) {
      const found = visit(dep);
      if (found) return found;
    }
    stack.pop();
    state.set(file, 'done');
    return null;
  };
  for (const file of graph.keys()) {
    const found = visit(file);
    if (found) return found;
  }
  return null;
}

test('cycle finds a circle of imports, and only one', () => {
  assert.deepEqual(
    cycle(
      new Map([
        ['main.js', ['a.js']],
        ['a.js', ['b.js']],
        ['b.js', ['a.js']],
      ]),
    ),
    ['a.js', 'b.js', 'a.js'],
  );
  assert.equal(
    cycle(
      new Map([
        ['main.js', ['a.js', 'b.js']],
        ['a.js', ['b.js']],
        ['b.js', []],
      ]),
    ),
    null,
  );
});

test("the demo's modules import one another without a circle", () => {
  const files = readdirSync(demo).filter((f) => f.endsWith('.js') && f !== 'serve.js');
  assert.ok(files.includes('main.js') && files.includes('actions.js') && files.includes('charts.js'), files.join(' '));
  const graph = new Map(files.map((f) => [f, imports(f)]));
  assert.ok(graph.get('actions.js').includes('charts.js'), 'the parser reads the imports');
  const found = cycle(graph);
  assert.equal(found, null, `a circle of imports: ${found?.join(' -> ')}`);
});
