// tools/wasm.mjs: the size budget, and that docs/size.md, where its reasons
// are, gives the same numbers and settings as the build uses.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { budget, goExperiment, overBudget, wasmOptFlags } from '../wasm.mjs';

const doc = readFileSync(new URL('../../docs/size.md', import.meta.url), 'utf8');

test('overBudget names what is over, and nothing at or under the budget', () => {
  assert.equal(overBudget({ raw: budget.raw, gzip: budget.gzip }), null);
  assert.equal(overBudget({ raw: 1, gzip: 1 }), null);
  assert.equal(overBudget({ raw: budget.raw + 1, gzip: 1 }), `${budget.raw + 1} bytes raw > ${budget.raw}`);
  assert.equal(overBudget({ raw: 1, gzip: budget.gzip + 1 }), `${budget.gzip + 1} bytes gzipped > ${budget.gzip}`);
  assert.equal(overBudget({ raw: 3, gzip: 4 }, { raw: 2, gzip: 3 }), '3 bytes raw > 2, 4 bytes gzipped > 3');
});

test('docs/size.md gives the budget and the settings the build uses', () => {
  const n = (x) => x.toLocaleString('en-US');
  assert.ok(doc.includes(`**${n(budget.raw)} bytes raw and ${n(budget.gzip)} bytes \`gzip -9\`**`), 'the budget');
  assert.ok(doc.includes(`GOEXPERIMENT=${goExperiment}`), 'the collector');
  assert.ok(doc.includes('-gcflags=runtime=-B'), 'the runtime without bounds checks');
  assert.ok(doc.includes(`wasm-opt ${wasmOptFlags[0]}`), "wasm-opt's level");
});
