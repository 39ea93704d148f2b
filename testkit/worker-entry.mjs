// The Worker as the tests build it: the production entry's fetch
// (worker/front/worker.mjs) with the Durable Object class that has the test
// hooks (worker/shard/test-hooks.js), which answer only when the Worker runs
// with EDGEBLOOM_TEST_HOOKS=1. buildWorker (worker.js) bundles it in place of
// wrangler.jsonc's "main".
//
// Miniflare does not abort request.signal when its client goes away (its
// entry Worker reaches this one through a binding; workerd 1.20260426 run
// alone does not either), where Cloudflare does: a request with
// X-Edgebloom-Test-Abort-After: MS gets a signal that aborts MS ms after
// it arrives, as a client that leaves then would make it.
import production from '../worker/front/worker.mjs';

export { Shard } from '../worker/shard/test-hooks.js';

export default {
  fetch(request, env, ctx) {
    const after = request.headers.get('X-Edgebloom-Test-Abort-After');
    if (after === null || env.EDGEBLOOM_TEST_HOOKS !== '1') return production.fetch(request, env, ctx);
    const leaving = new AbortController();
    setTimeout(() => leaving.abort(new Error('the client went away')), Number(after));
    return production.fetch(new Request(request, { signal: leaving.signal }), env, ctx);
  },
};
