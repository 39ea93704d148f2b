// The JavaScript API list of docs/npm.md against the types (js/index.d.ts):
// every function, class, static and member it names exists there, and every
// function and class the module exports is listed. The Go lists (docs/go.md,
// docs/redis.md) are checked against go doc by internal/readme.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';

const root = new URL('../../', import.meta.url);
const page = await readFile(new URL('docs/npm.md', root), 'utf8');
const types = await readFile(new URL('js/index.d.ts', root), 'utf8');

// The code block after the line that starts with intro.
function block(text, intro) {
  const at = text.indexOf(`\n${intro}`);
  assert.ok(at >= 0, `docs/npm.md has a line starting with ${intro}`);
  const start = text.indexOf('\n', text.indexOf('```', at)) + 1;
  return text.slice(start, text.indexOf('```', start));
}

// What index.d.ts declares: exported functions and classes, each class's
// statics, and every member of its classes and interfaces.
function declared(dts) {
  const functions = new Set([...dts.matchAll(/^export function (\w+)/gm)].map((m) => m[1]));
  const classes = new Map();
  for (const m of dts.matchAll(/^export class (\w+)[^{]*\{([\s\S]*?)^\}/gm)) {
    classes.set(m[1], new Set([...m[2].matchAll(/^\s+static (\w+)/gm)].map((s) => s[1])));
  }
  const members = new Set(
    [...dts.matchAll(/^\s+(?:static\s+)?(?:readonly\s+)?(?:get\s+)?(\w+)\??\s*[(<:]/gm)].map((m) => m[1]),
  );
  return { functions, classes, members };
}

test("docs/npm.md's JavaScript API list names only what index.d.ts declares, and all it exports", () => {
  const api = block(page, 'JavaScript (`edgebloom`');
  const { functions, classes, members } = declared(types);
  assert.ok(functions.size >= 6 && classes.size >= 6, 'index.d.ts parsed');
  const listed = { functions: new Set(), classes: new Set() };
  for (let line of api.split('\n')) {
    const comment = line.indexOf('//');
    const note = comment >= 0 ? line.slice(comment) : '';
    if (comment >= 0) line = line.slice(0, comment);
    const made = line.match(/^new (\w+)\(/);
    if (made) {
      assert.ok(classes.has(made[1]), `docs/npm.md lists class ${made[1]}`);
      listed.classes.add(made[1]);
      // "// + remove(key)", "+ rotate(), generations": members of that class.
      for (const m of note.match(/\+ (.*)$/)?.[1].matchAll(/(?:^|, )(\w+)/g) ?? []) {
        assert.ok(members.has(m[1]), `docs/npm.md lists ${made[1]}.${m[1]}`);
      }
      continue;
    }
    for (const part of line
      .split(/ \/ |, /)
      .map((p) => p.trim())
      .filter(Boolean)) {
      let m;
      if ((m = part.match(/^([A-Z]\w*)\.(\w+)\(/))) {
        assert.ok(classes.get(m[1])?.has(m[2]), `docs/npm.md lists ${m[1]}.${m[2]}`);
        listed.classes.add(m[1]);
      } else if ((m = part.match(/^[a-z]\.(\w+)/))) {
        assert.ok(members.has(m[1]), `docs/npm.md lists the member ${m[1]}`);
      } else if ((m = part.match(/^([a-z]\w*)\(/))) {
        assert.ok(functions.has(m[1]), `docs/npm.md lists the function ${m[1]}`);
        listed.functions.add(m[1]);
      }
    }
  }
  for (const f of functions)
    assert.ok(listed.functions.has(f), `${f} (index.d.ts) is not in the API list of docs/npm.md`);
  for (const c of classes.keys())
    assert.ok(listed.classes.has(c), `${c} (index.d.ts) is not in the API list of docs/npm.md`);
});
