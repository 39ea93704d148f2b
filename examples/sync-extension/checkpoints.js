// A checkpoint reader's side of the wire, with no browser API beyond
// fetch: which of the service's checkpoint URLs a sync fetches, the retries
// of a busy service, the body read, and a failure said in words
// that name what to change. The extension's service worker (background.js)
// and the page of examples/sync import it; worker/bench/fleet.js runs it
// as many readers at once.
//
// Every URL fetched is one of a checkpoint (worker/README.md, "Snapshots
// and local copies"): `latest`, then the delta from the copy's checkpoint
// or the snapshot. Deltas and snapshots of a checkpoint never change, and
// the edge cache serves them to every reader of the filter.

// The largest answer read into a buffer of its stated length (a 1 G-key filter at 1 % is 1.2 GB).
const MAX_ANSWER_BYTES = 2 ** 31;

/**
 * How a busy service (503, 429) is retried: after its Retry-After (1 s when
 * it gives none), or the back-off when that is longer, doubled at each try
 * from firstMs up to maxMs, plus a random part of up to half of it, so that
 * readers refused together do not come back together. After `tries` tries
 * the sync fails with the service's error and `retryAfterMs` set: the
 * caller tries again then, not at its next timer.
 */
export const RETRY = { tries: 5, firstMs: 1000, maxMs: 16_000 };

/** A failed sync: code is the service's error code (or the reader's own). */
export class SyncError extends Error {
  constructor(message, { code, status = null, retryAfterMs = null, cause } = {}) {
    super(message, { cause });
    this.name = 'SyncError';
    this.code = code;
    this.status = status;
    this.retryAfterMs = retryAfterMs;
  }
}

// What to do about a refused token, by the service's code (worker/README.md, "Errors").
const TOKEN_FIXES = {
  unauthorized: 'the service got no token, or one that is neither its secret nor a token: give a read token',
  token_malformed: 'the token is not a whole edgebloom token (they start with "eb1."): copy all of it',
  token_bad_signature:
    'the token was changed, or signed with a secret the service no longer accepts (EDGEBLOOM_TOKEN rotated): make a new read token',
  token_expired: 'the read token has expired: make a new one',
  token_other_filter: 'the token is for another filter: make a read token for this one',
  token_not_allowed: 'the token may not read this filter: make one with the scope "read"',
};

/** The sentence for a failed answer: what failed and, for a token, what to do. */
export function explain(status, code, message, filter) {
  const fix = TOKEN_FIXES[code];
  if (fix)
    return `${status} ${code}: ${fix} (POST /v1/tokens with {"scope": "read", "filter": "${filter}"}); the service said: ${message}`;
  return `${status} ${code}: ${message}`;
}

// A fetch that never got an answer: an unreachable service, or one that
// answered without letting this code read it (CORS for a page; a host
// permission missing for an extension). A no-cors request reaches a
// service that is up whatever its CORS rules, so it tells the two apart.
async function unreadable(url, err, fetchFn) {
  let up = false;
  try {
    await fetchFn(url, { mode: 'no-cors' });
    up = true;
  } catch {
    // down, or no route to it
  }
  const origin = new URL(url).origin;
  // A service that is down (or restarting) is asked again after the
  // longest back-off, as a busy one is after its last try.
  if (!up)
    return new SyncError(`cannot reach the service at ${origin}: ${err.message}`, {
      code: 'unreachable',
      retryAfterMs: RETRY.maxMs,
      cause: err,
    });
  const where = globalThis.location;
  if (where?.protocol === 'chrome-extension:')
    return new SyncError(
      `the service at ${origin} answered, but the extension may not read it: manifest.json's host_permissions must list "${origin}/*"`,
      { code: 'host_permission', cause: err },
    );
  return new SyncError(
    `the service at ${origin} refused this page's origin, ${where?.origin} (CORS): list ${where?.origin} in the service's EDGEBLOOM_ALLOWED_ORIGINS`,
    { code: 'cors_refused', cause: err },
  );
}

// Retry-After in milliseconds: seconds, or an HTTP date; 1 s when absent.
function retryAfter(res) {
  const h = res.headers.get('Retry-After');
  if (h === null) return 1000;
  if (/^\d+$/.test(h.trim())) return 1000 * Number(h);
  const at = Date.parse(h);
  return Number.isNaN(at) ? 1000 : Math.max(0, at - Date.now());
}

/**
 * GETs url with the token; retries 503 and 429 as RETRY says, calling
 * onWait({ms, status, code, attempt}) before each wait. Resolves with an ok
 * answer (or a 410 when `gone` is allowed); rejects with a SyncError.
 */
export async function get(url, { token, filter, gone = false, onWait = () => {}, fetchFn = fetch, retry = RETRY }) {
  for (let attempt = 1; ; attempt++) {
    let res;
    try {
      res = await fetchFn(url, { headers: { Authorization: `Bearer ${token}` } });
    } catch (err) {
      throw await unreadable(url, err, fetchFn);
    }
    if (res.ok || (gone && res.status === 410)) return res;
    const { error } = await res.json().catch(() => ({ error: { code: 'unknown', message: res.statusText } }));
    const busy = res.status === 503 || res.status === 429;
    const wait = Math.max(retryAfter(res), Math.min(retry.maxMs, retry.firstMs * 2 ** (attempt - 1)));
    const ms = Math.round(wait * (1 + Math.random() / 2));
    if (!busy || attempt >= retry.tries)
      throw new SyncError(explain(res.status, error.code, error.message, filter), {
        code: error.code,
        status: res.status,
        retryAfterMs: busy ? ms : null,
      });
    onWait({ ms, status: res.status, code: error.code, attempt });
    await new Promise((resolve) => setTimeout(resolve, ms));
  }
}

/**
 * What brings a copy at `at` ({generation, checkpoint, cursor}, or null)
 * up to the latest checkpoint: {latest, kind: 'none' | 'delta' |
 * 'snapshot', res}, res being the answer to read (none for 'none').
 */
export async function nextSync({ service, filter, token }, at, opts = {}) {
  const base = `${service.replace(/\/$/, '')}/v1/filters/${encodeURIComponent(filter)}/checkpoints`;
  const o = { ...opts, token, filter };
  const latest = await (await get(`${base}/latest`, o)).json();
  const same = at?.generation === latest.generation;
  if (same && at.checkpoint === latest.checkpoint) return { latest, kind: 'none', res: null };
  const here = `${base}/${latest.generation}/${latest.checkpoint}`;
  if (same && at.checkpoint >= latest.oldest) {
    const res = await get(`${here}/delta?from=${at.checkpoint}`, { ...o, gone: true });
    if (res.ok) return { latest, kind: 'delta', res };
    await res.body?.cancel(); // 410 checkpoint_gone: the snapshot
  }
  return { latest, kind: 'snapshot', res: await get(`${here}/snapshot`, o) };
}

// lengthOf: an answer's Content-Length when its body is that many bytes
// (none when it is coded, absent or no number), refused past MAX_ANSWER_BYTES.
function lengthOf(res) {
  const length = res.headers.get('Content-Length');
  const n = Number(length);
  if (length === null || res.headers.has('Content-Encoding') || !Number.isSafeInteger(n)) return null;
  if (n > MAX_ANSWER_BYTES)
    throw new SyncError(`the answer is ${n} bytes, more than ${MAX_ANSWER_BYTES}`, { code: 'too_large' });
  return n;
}

const badLength = (got, n) =>
  new SyncError(`the answer is ${got} bytes, not its Content-Length, ${n}`, { code: 'bad_length' });

/**
 * Reads an answer into one buffer of its Content-Length, straight from the
 * stream where it allows (a BYOB reader), else chunk by chunk;
 * res.arrayBuffer() would hold the chunks and the buffer it copies them
 * into at once. An answer with no length (or a coded one) is read with
 * res.arrayBuffer().
 */
export async function readBody(res) {
  const n = lengthOf(res);
  if (n === null) return new Uint8Array(await res.arrayBuffer());
  let out = new Uint8Array(n);
  let at = 0;
  let byob = null;
  try {
    byob = res.body.getReader({ mode: 'byob' });
  } catch {
    // not a byte stream: chunks of the stream's own
  }
  if (byob) {
    // Each read fills part of out's buffer, which the stream takes and
    // gives back (as value.buffer) with the bytes in place.
    while (at < n) {
      const { done, value } = await byob.read(new Uint8Array(out.buffer, at, n - at));
      if (done) break;
      out = new Uint8Array(value.buffer);
      at += value.length;
    }
    // One byte more asked for: an answer longer than it said.
    if (at === n && !(await byob.read(new Uint8Array(1))).done) {
      await byob.cancel();
      throw badLength(`more than ${n}`, n);
    }
  } else {
    for (const reader = res.body.getReader(); ;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (value.length > n - at) {
        await reader.cancel();
        throw badLength(`more than ${n}`, n);
      }
      out.set(value, at);
      at += value.length;
    }
  }
  if (at !== n) throw badLength(at, n);
  return out;
}

/**
 * Reads an answer as a Blob: the browser keeps its bytes in its own
 * storage, out of this worker's memory, from the network to IndexedDB.
 */
export async function readBlob(res) {
  const n = lengthOf(res);
  const blob = await res.blob();
  if (n !== null && blob.size !== n) throw badLength(blob.size, n);
  if (blob.size > MAX_ANSWER_BYTES)
    throw new SyncError(`the answer is ${blob.size} bytes, more than ${MAX_ANSWER_BYTES}`, { code: 'too_large' });
  return blob;
}
