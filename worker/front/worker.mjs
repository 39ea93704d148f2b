// The Worker's entry module: the Go front (build/app.wasm, built by
// build.sh against syumai/workers) handles fetch in one Go instance kept
// per isolate (front.js), and the Durable Object class of the shards is
// exported beside it.
import '../build/wasm_exec.js';
import { connect } from 'cloudflare:sockets';
import app from '../build/app.wasm';
import { front, FrontStopped } from './front.js';

export { Shard } from '../shard/shard.js';

function jsonError(status, code, message, requestId) {
  const error = { code, message, ...(requestId ? { requestId } : {}) };
  return new Response(JSON.stringify({ error }) + '\n', { status, headers: { 'Content-Type': 'application/json' } });
}

// syumai/workers' glue (wasm_exec.js) defines Go on the global object; it
// reads its runtime context from the object go.run is given.
const goFront = front({ module: app, Go: globalThis.Go, extra: { connect } });

export default {
  // The Go front answers every request it gets to, errors included (see
  // front/handler.go). What it cannot get to is a request Go cannot parse (its
  // URL), or one during which the Go program stopped: then the call
  // throws, and workerd would answer with the exception's text and stack
  // (names of bundle files, Go's error text). That detail goes to the log
  // here; the client gets JSON, and the next request gets a new instance.
  async fetch(request, env, ctx) {
    try {
      return await goFront.fetch(request, env, ctx);
    } catch (err) {
      // Go's url.Parse refuses a path with a "%" not followed by two hex
      // digits, which WHATWG URLs (and so workerd) let through.
      if (!(err instanceof FrontStopped) && /%(?![0-9A-Fa-f]{2})/.test(new URL(request.url).pathname)) {
        return jsonError(400, 'invalid_path', 'the path has a "%" that is not followed by two hex digits');
      }
      const requestId = request.headers.get('Cf-Ray') || crypto.randomUUID().replaceAll('-', '').slice(0, 16);
      console.error(`edgebloom: request ${requestId}: the Go front failed:`, err);
      return jsonError(500, 'internal', 'the service failed to serve the request', requestId);
    }
  },
};
