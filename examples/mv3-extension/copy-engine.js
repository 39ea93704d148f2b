// Copies the installed package's browser files (js/*.js and edgebloom.wasm)
// into extension/edgebloom/, where background.js imports them from: an
// extension can load only its own files, and a service worker only static
// imports.
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const from = path.join(here, 'node_modules/edgebloom/js');
const to = path.join(here, 'extension/edgebloom');
if (!existsSync(path.join(from, 'edgebloom.wasm'))) {
  console.error(`copy-engine.js: ${from}/edgebloom.wasm is missing: run "npm install" in ${here} first`);
  process.exit(1);
}
rmSync(to, { recursive: true, force: true });
mkdirSync(to, { recursive: true });
for (const name of readdirSync(from).filter((f) => /\.(js|wasm)$/.test(f))) {
  cpSync(path.join(from, name), path.join(to, name));
}
console.log(
  `copied edgebloom into ${path.relative(here, to)}/: load ${path.relative(here, path.dirname(to))}/ as an unpacked extension`,
);
