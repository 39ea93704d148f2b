// Shared pieces of the examples' tests: the package as users get it (npm
// pack, once per run), an example copied to a temp dir with that tarball
// installed into it. Everything else (processes, Chromium, Miniflare, the
// static server, cleanup) comes from the test kit (../../testkit/).

import { cp, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { repoRoot, run, tempDir } from '../../testkit/process.js';

export const examplesDir = fileURLToPath(new URL('..', import.meta.url));

/**
 * The path of the packed package: $EDGEBLOOM_TARBALL when build.sh packed it
 * already for every example, else `npm pack` of the checkout (which builds
 * the wasm) into a temp dir.
 */
export async function tarball() {
  if (process.env.EDGEBLOOM_TARBALL) return process.env.EDGEBLOOM_TARBALL;
  const dir = await tempDir('pack');
  await run('npm', ['pack', '--pack-destination', dir], { cwd: repoRoot });
  return path.join(
    dir,
    (await readdir(dir)).find((f) => f.endsWith('.tgz')),
  );
}

/**
 * Copies examples/<name> to a temp dir and installs the packed package into
 * it, as `npm install` does for a user of the released one. Its
 * devDependencies (wrangler, ...) are not installed: the test runs the
 * repository's own copy, and checks first that the example pins the very
 * version the repository has, so what the README names is what ran.
 * Returns the copy's directory.
 */
export async function installExample(name) {
  const dir = await tempDir(`example-${name}`);
  await cp(path.join(examplesDir, name), dir, {
    recursive: true,
    filter: (src) => !/[/\\](node_modules|dist|\.wrangler)$/.test(src),
  });
  const pkgFile = path.join(dir, 'package.json');
  const pkg = JSON.parse(await readFile(pkgFile, 'utf8'));
  const repoPkg = JSON.parse(await readFile(path.join(repoRoot, 'package.json'), 'utf8'));
  for (const [dep, version] of Object.entries(pkg.devDependencies ?? {})) {
    const ours = repoPkg.devDependencies[dep];
    if (ours !== version) {
      throw new Error(`examples/${name}/package.json pins ${dep} ${version}, the repository ${ours}: make them agree`);
    }
  }
  if (pkg.dependencies?.edgebloom !== `^${repoPkg.version}`) {
    throw new Error(`examples/${name}/package.json: edgebloom should be "^${repoPkg.version}"`);
  }
  delete pkg.devDependencies;
  delete pkg.dependencies;
  await writeFile(pkgFile, JSON.stringify(pkg, null, 2));
  await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--no-save', await tarball()], {
    cwd: dir,
    env: { npm_config_cache: path.join(dir, '.npm-cache') },
  });
  return dir;
}
