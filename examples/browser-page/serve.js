// Serves this page on http://127.0.0.1:$PORT (default 8080; 0 picks a free
// port): index.html and app.js from here, /edgebloom/ from the installed
// package's js/ directory, and nothing else. The .wasm goes out as application/wasm, which
// lets the browser compile it while it downloads. Any static server does
// the same; this one needs nothing but Node.
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const packageJs = path.join(here, 'node_modules/edgebloom/js');
const types = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
};
const pageFiles = new Set(['/index.html', '/app.js']);

try {
  await readFile(path.join(packageJs, 'edgebloom.wasm'));
} catch {
  console.error(`serve.js: ${packageJs}/edgebloom.wasm is missing: run "npm install" in ${here} first`);
  process.exit(1);
}

const server = http.createServer(async (req, res) => {
  const { pathname } = new URL(req.url, 'http://127.0.0.1');
  const wanted = pathname === '/' ? '/index.html' : pathname;
  let file;
  if (pageFiles.has(wanted)) file = path.join(here, wanted);
  else if (wanted.startsWith('/edgebloom/'))
    file = path.join(packageJs, decodeURIComponent(wanted.slice('/edgebloom/'.length)));
  const type = types[path.extname(file ?? '')];
  if (type && (file.startsWith(packageJs + path.sep) || pageFiles.has(wanted))) {
    try {
      const body = await readFile(file);
      res.writeHead(200, { 'Content-Type': type });
      return res.end(body);
    } catch {}
  }
  res.writeHead(404, { 'Content-Type': 'text/plain' });
  res.end('not found\n');
});

const port = Number(process.env.PORT ?? 8080);
server.on('error', (err) => {
  console.error(`serve.js: cannot listen on 127.0.0.1:${port}: ${err.message} (set PORT to another port)`);
  process.exit(1);
});
server.listen(port, '127.0.0.1', () => {
  console.log(`http://127.0.0.1:${server.address().port}/ (Ctrl-C stops it)`);
});
