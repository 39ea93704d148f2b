// The Worker as the tests build it: the production entry's fetch
// (worker/front/worker.mjs) with the Durable Object class that has the test
// hooks (worker/shard/test-hooks.js), which answer only when the Worker runs
// with EDGEBLOOM_TEST_HOOKS=1. buildWorker (worker.js) bundles it in place of
// wrangler.jsonc's "main".
export { default } from '../worker/front/worker.mjs';
export { Shard } from '../worker/shard/test-hooks.js';
