// A zero-dependency static server for the demo page: web-demo/ at / and the
// npm module's browser entry (js/*.js, js/edgebloom.wasm) at /js/, and the
// READMEs of the examples the page links to, as text. Nothing else in the
// repository is reachable. Run: node web-demo/serve.js
// (PORT, default 8080; binds 127.0.0.1 only).
import http from 'node:http';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const demoDir = path.dirname(fileURLToPath(import.meta.url));
const jsDir = path.join(demoDir, '..', 'js');

// The examples the page links to (tour.js, index.html): their READMEs only.
const EXAMPLES = new Set(['colly-crawler', 'sync-extension', 'parquet']);

const MIME = {
  '.md': 'text/plain; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.wasm': 'application/wasm',
};

// The page runs the Go engine, which needs 'wasm-unsafe-eval' to compile;
// nothing else is allowed from anywhere but this server.
export const CSP =
  "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; " +
  "img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; " +
  "form-action 'self'; frame-ancestors 'none'";

const SAFE_NAME = /^[A-Za-z0-9_-][A-Za-z0-9_.-]*$/;

// resolve maps a URL path to a file on disk, or null when it is not served.
function resolve(urlPath) {
  if (urlPath === '/') return path.join(demoDir, 'index.html');
  const example = urlPath.match(/^\/examples\/([a-z-]+)\/README\.md$/);
  if (example) return EXAMPLES.has(example[1]) ? path.join(demoDir, '..', 'examples', example[1], 'README.md') : null;
  let dir = demoDir;
  let name = urlPath.slice(1);
  if (urlPath.startsWith('/js/')) {
    dir = jsDir;
    name = urlPath.slice(4);
    if (!(name.endsWith('.js') || name.endsWith('.wasm'))) return null;
  } else if (name === 'serve.js') {
    return null;
  }
  if (!SAFE_NAME.test(name) || name.includes('..')) return null;
  if (!MIME[path.extname(name)]) return null;
  return path.join(dir, name);
}

async function handle(req, res) {
  const headers = {
    'Content-Security-Policy': CSP,
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'Cache-Control': 'no-store',
  };
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { ...headers, Allow: 'GET, HEAD', 'Content-Type': 'text/plain; charset=utf-8' });
    res.end('method not allowed\n');
    return;
  }
  let urlPath;
  try {
    urlPath = decodeURIComponent(new URL(req.url, 'http://localhost').pathname);
  } catch {
    urlPath = '';
  }
  const file = resolve(urlPath);
  let body = null;
  if (file) {
    try {
      body = await readFile(file);
    } catch {
      body = null;
    }
  }
  if (!body) {
    res.writeHead(404, { ...headers, 'Content-Type': 'text/plain; charset=utf-8' });
    res.end('not found\n');
    return;
  }
  res.writeHead(200, { ...headers, 'Content-Type': MIME[path.extname(file)], 'Content-Length': body.length });
  res.end(req.method === 'HEAD' ? undefined : body);
}

/**
 * Starts the demo server on 127.0.0.1.
 * @param {number} [port] 0 picks a free port
 * @returns {Promise<{server: http.Server, url: string, close: () => Promise<void>}>}
 */
export function startServer(port = 8080) {
  const server = http.createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  return new Promise((resolvePromise, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const url = `http://127.0.0.1:${server.address().port}/`;
      const close = () =>
        new Promise((done) => {
          server.closeAllConnections?.();
          server.close(() => done());
        });
      resolvePromise({ server, url, close });
    });
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const port = Number(process.env.PORT ?? 8080);
  startServer(port).then(
    ({ url }) => console.log(`edgebloom demo: ${url}`),
    (err) => {
      console.error(`edgebloom demo: cannot listen on 127.0.0.1:${port}: ${err.message}`);
      process.exit(1);
    },
  );
}
