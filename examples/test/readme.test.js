// Each example's README names the versions the example runs on and the
// command that runs it: the versions must be those its go.mod or
// package.json pins, and the command must be there. An example with
// neither (a page served from the service's origin) names the test that
// runs it, which must exist.

import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { examplesDir } from './helpers.js';

const examples = readdirSync(examplesDir, { withFileTypes: true })
  .filter((d) => d.isDirectory() && d.name !== 'test')
  .map((d) => d.name);

for (const name of examples) {
  test(`examples/${name}/README.md names what runs`, () => {
    const dir = path.join(examplesDir, name);
    const readme = readFileSync(path.join(dir, 'README.md'), 'utf8');
    const index = readFileSync(path.join(examplesDir, 'README.md'), 'utf8');
    assert.ok(index.includes(`[${name}](${name}/)`), `examples/README.md lists ${name}`);
    if (existsSync(path.join(dir, 'package.json'))) {
      const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
      assert.ok(readme.includes(`bash build.sh example ${name}`), 'the command that runs it');
      for (const [dep, version] of Object.entries(pkg.devDependencies ?? {})) {
        for (const named of readme.matchAll(new RegExp(`\\b${dep}\\s+(\\d+\\.\\d+\\.\\d+)`, 'g'))) {
          assert.equal(named[1], version, `${dep} in README.md and package.json`);
        }
      }
    } else if (!existsSync(path.join(dir, 'go.mod'))) {
      const run = readme.match(/node --test (e2e\/[\w.-]+\.test\.js)/);
      assert.ok(run, 'the command that runs it: node --test of its test');
      assert.ok(existsSync(path.join(examplesDir, '..', run[1])), `${run[1]} exists`);
    } else {
      // "[name](https://github.com/owner/repo) vX.Y.Z" against go.mod's require.
      const gomod = readFileSync(path.join(dir, 'go.mod'), 'utf8');
      const named = [...readme.matchAll(/\]\(https:\/\/(github\.com\/[\w.-]+\/[\w.-]+)\)\s+(v\d+\.\d+\.\d+)/g)];
      assert.ok(named.length > 0, 'README.md names the versions of the libraries it shows');
      for (const [, repo, version] of named) {
        const required = gomod.match(new RegExp(`^\\s*${repo.replaceAll('.', '\\.')}(?:/v\\d+)?\\s+(v\\S+)`, 'm'));
        assert.equal(required?.[1], version, `${repo} in README.md and go.mod`);
      }
      assert.match(readme, /go run \./, 'the command that runs it');
    }
  });
}
