// A proxy on 127.0.0.1 in front of the Worker that answers the first
// `refuse` requests whose path matches `match` as a front out of budget
// does (503 `busy` with Retry-After, or a 429), and passes every other
// request through as it is: a reader's retries, tested without loading a
// front until it refuses. A refusal carries the page's Origin in
// Access-Control-Allow-Origin, as the front's answers to a listed origin do.
import assert from 'node:assert/strict';
import http from 'node:http';
import { onCleanup } from './process.js';

/**
 * Starts the proxy; resolves with {url, refused, held, release, close}:
 * refused lists the time (ms since the epoch) and path of each refusal;
 * with `hold`, requests wait until release() (held counts them), so that
 * a measurement can start once a browser has sent its first.
 */
export async function busyProxy(target, { match = /^$/, refuse = 0, status = 503, retryAfter = '1', hold = false }) {
  const refused = [];
  const to = new URL(target);
  // With hold, every request waits until release(): held counts them.
  let release;
  const gate = hold ? new Promise((resolve) => (release = resolve)) : null;
  const proxy = { refused, held: 0, release: () => release?.() };
  const server = http.createServer(async (req, res) => {
    if (gate) {
      proxy.held++;
      await gate;
    }
    if (req.method === 'GET' && match.test(req.url) && refused.length < refuse) {
      refused.push({ at: Date.now(), path: req.url });
      const headers = { 'Content-Type': 'application/json', 'Retry-After': retryAfter };
      if (req.headers.origin)
        Object.assign(headers, { 'Access-Control-Allow-Origin': req.headers.origin, Vary: 'Origin' });
      const code = status === 429 ? 'rate_limited' : 'busy';
      res
        .writeHead(status, headers)
        .end(JSON.stringify({ error: { code, message: 'the front is busy; send it again' } }));
      return;
    }
    const out = http.request(
      {
        host: to.hostname,
        port: to.port,
        path: req.url,
        method: req.method,
        headers: { ...req.headers, host: to.host },
      },
      (answer) => {
        res.writeHead(answer.statusCode, answer.headers);
        answer.pipe(res);
      },
    );
    out.on('error', (err) => res.destroy(err));
    req.pipe(out);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = () => new Promise((resolve) => server.close(resolve).closeAllConnections());
  onCleanup(close);
  return Object.assign(proxy, { url: `http://127.0.0.1:${server.address().port}`, close });
}

/**
 * Asserts what a reader did with the proxy's refusals: a retry after each
 * of them (its `retries`, as the examples record them), each waiting at
 * least the Retry-After (1 s) and the back-off (1, 2, 4 s...), and at most
 * half as much again (the jitter).
 */
export function assertRetried(retries, proxy) {
  assert.deepEqual(
    retries.map((r) => `${r.status} ${r.code}`),
    proxy.refused.map(() => '503 busy'),
  );
  retries.forEach((r, i) => assert.ok(r.ms >= 1000 * 2 ** i && r.ms <= 1500 * 2 ** i, `wait ${i}: ${r.ms} ms`));
}
