// workerd for the tests: wrangler from the repository's node_modules, a
// project bundled as \`wrangler deploy --dry-run\` bundles it, and Miniflare
// running such a bundle (no port unless asked, nothing fetched from the
// internet).

import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { onCleanup, repoRoot, run } from './process.js';

/** Runs wrangler from this repo's node_modules. */
export function wrangler(args, opts) {
  return run(process.execPath, [path.join(repoRoot, 'node_modules/wrangler/bin/wrangler.js'), ...args], opts);
}

/**
 * Bundles the Worker in projectDir (its wrangler.jsonc) with
 * `wrangler deploy --dry-run` and returns the outdir, the files wrangler
 * emitted there, the entry's name and text, and esbuild's metafile.
 */
export async function wranglerBundle(projectDir) {
  const outdir = path.join(projectDir, 'dist');
  const metafile = path.join(projectDir, 'bundle-meta.json');
  await wrangler(['deploy', '--dry-run', '--outdir', outdir, '--metafile', metafile], {
    cwd: projectDir,
    env: { WRANGLER_LOG_PATH: path.join(projectDir, 'wrangler-logs') },
  });
  const files = await readdir(outdir, { recursive: true });
  const entry = files.find((f) => f === 'index.js') ?? files.find((f) => f.endsWith('.js'));
  return {
    outdir,
    files,
    entry,
    text: await readFile(path.join(outdir, entry), 'utf8'),
    meta: JSON.parse(await readFile(metafile, 'utf8')),
  };
}

/** The package's entry points (index.js, node.js, workerd.js, edge-light.js) that an esbuild metafile lists as inputs. */
export function bundledEntries(meta) {
  const names = Object.keys(meta.inputs)
    .map((f) => f.match(/(?:^|\/)js\/(index|node|workerd|edge-light)\.js$/)?.[1])
    .filter(Boolean);
  return [...new Set(names)].sort();
}

/**
 * The options of a Worker in Miniflare that runs the bundle wrangler
 * emitted in outdir, entry its main module: ES modules, and every .wasm a
 * compiled module, as wrangler imports it. (Every Miniflare of the tests
 * also takes cf: false, or it would fetch request.cf from the internet.)
 */
export function bundleOptions(outdir, entry) {
  return {
    modules: true,
    modulesRoot: outdir,
    scriptPath: path.join(outdir, entry),
    modulesRules: [{ type: 'CompiledWasm', include: ['**/*.wasm'] }],
  };
}

/**
 * Runs a bundle from wranglerBundle in Miniflare (workerd) with config, the
 * project's wrangler config, and extra Miniflare options (durableObjects, …);
 * disposed by cleanup().
 */
export async function startMiniflare(bundle, config, extra = {}) {
  const { Miniflare } = await import('miniflare'); // large: loaded only by the tests that need it
  const mf = new Miniflare({
    host: '127.0.0.1',
    port: 0,
    cf: false,
    ...bundleOptions(bundle.outdir, bundle.entry),
    compatibilityDate: config.compatibility_date,
    compatibilityFlags: config.compatibility_flags,
    ...extra,
  });
  onCleanup(() => mf.dispose());
  await mf.ready;
  return mf;
}
