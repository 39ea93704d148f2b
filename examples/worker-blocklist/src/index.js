// A blocklist Worker on the npm module alone: the filter is built ahead of
// time (npm run build) and shipped inside the Worker as a Data module, so a
// lookup is one request and no storage read.
//
//   GET /seen?url=https://ads.example.com/banner.js
//   -> {"url": "...", "key": "<canonical form>", "seen": true}
//
// "seen": false is certain; "seen": true is wrong at the filter's rate (one
// in 10,000 here): check a source of truth where a false positive costs more
// than a lookup.
import { init, BloomFilter } from 'edgebloom';
import { blocklistKey } from './key.js';
import blocklist from './blocklist.bloom'; // an ArrayBuffer (wrangler.jsonc's "Data" rule)

// The engine starts inside the first request, never at global scope (Go's
// runtime reads random bytes when it starts, which workerd forbids there),
// and is kept for the isolate's life.
let loading;
function filter() {
  loading ??= init()
    .then(() => BloomFilter.fromBytes(blocklist))
    .catch((err) => {
      loading = undefined; // the next request tries again
      throw err;
    });
  return loading;
}

const json = (body, status = 200) =>
  Response.json(body, { status, headers: { 'Cache-Control': status === 200 ? 'public, max-age=300' : 'no-store' } });

export default {
  async fetch(request) {
    const { pathname, searchParams } = new URL(request.url);
    if (pathname !== '/seen') return json({ error: 'not found: ask GET /seen?url=<absolute http(s) URL>' }, 404);
    if (request.method !== 'GET' && request.method !== 'HEAD') return json({ error: 'use GET' }, 405);
    const url = searchParams.get('url');
    if (!url) return json({ error: 'missing ?url=: pass the absolute URL to look up, URL-encoded' }, 400);
    let key;
    try {
      key = blocklistKey(url);
    } catch (err) {
      return json({ error: err.message }, 400);
    }
    return json({ url, key, seen: (await filter()).has(key) });
  },
};
