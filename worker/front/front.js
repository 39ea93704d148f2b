// The Go front's host: one Go instance per isolate, kept across requests.
//
// syumai/workers' own entry module (the worker.mjs its workers-assets-gen
// generates, which build.sh leaves out) makes a new Go instance for every request, and its program
// exits once the response is read: every request paid Go's start and the
// init of every package the front links before any work (worker/bench/README.md,
// "CPU a request"). This module starts the program once (main.go signals
// workers.Ready and blocks) and hands it every request.
//
// A kept instance keeps whatever a request leaves behind, so requests do
// not go through syumai/workers' request and response conversion, whose
// streams and promises leave callbacks in Go that are never released.
// Bodies cross as bytes instead (front/bridge_js.go is the Go half): JS reads the
// request's body (as much of it as the front accepts, and one byte more),
// calls the program's serve callback, and does what the program posts:
// fetch a Durable Object, read more of an internal response, answer, write
// a chunk of a streamed answer, wait. Go makes three callbacks for good at
// start (serve, settle and cancel) and none per request. When the client
// goes away (request.signal's abort, which workerd delivers with the
// enable_request_signal compatibility flag), cancel tells Go, which stops
// the request's work.
//
// The runtime context: syumai/workers reads `env` (cloudflare.Getenv) from
// the context object at call time, and so does an exchange for the Durable
// Object binding, so env is set on it before each request reaches Go. workerd hands every request of
// an isolate the same env; the execution context (`ctx`), which is each
// request's own, is never put there: a kept instance serves concurrent
// requests, and one request must not see another's. The front uses nothing
// of it (no waitUntil, no passThroughOnException).
//
// If the Go program exits (os.Exit, a panic no recover caught) or traps,
// the request it was serving is answered 500 here and the next request
// starts a new instance.

/** Thrown for the request during which the Go program stopped. */
export class FrontStopped extends Error {
  constructor(message, options) {
    super(message, options);
    this.name = 'FrontStopped';
  }
}

/**
 * front returns a fetch handler running the Go program of `module` (a
 * compiled WebAssembly.Module of the Go front, built against
 * syumai/workers) in one kept instance. Go is the Go class of syumai/workers' wasm_exec.js; extra holds
 * what the runtime context carries besides env and binding (connect).
 */
export function front({ module, Go, extra = {} }) {
  let current = null; // the running instance (see start)
  let starting = null; // the promise of the instance being started

  async function start(env) {
    const go = new Go();
    const context = { ...extra, env, binding: {} };
    // pending holds the exchange of every request in flight, so that
    // those a stopped program will never answer fail at once; stopError is
    // set once the program has stopped.
    const inst = { go, context, stopError: null, pending: new Set(), onStop: null };
    // Go calls exit synchronously as its program ends (os.Exit, a panic no
    // recover caught), inside the request that made it end. That is where
    // the instance is marked stopped: workerd cancels a continuation that a
    // promise of one request (go.run's) would run in another.
    const exit = go.exit;
    go.exit = (code) => {
      exit.call(go, code);
      markStopped(inst, `the Go program exited with code ${code}`);
    };
    let ready;
    const readyPromise = new Promise((resolve) => (ready = resolve));
    const instance = new WebAssembly.Instance(module, { ...go.importObject, workers: { ready: () => ready() } });
    const startFailed = new Promise((_, reject) => (inst.onStop = reject));
    go.run(instance, context).catch((err) => markStopped(inst, `the Go program trapped: ${err?.message ?? err}`, err));
    // The program stops before it is ready only if its start failed.
    await Promise.race([readyPromise, startFailed]);
    inst.onStop = null;
    return inst;
  }

  // markStopped marks inst as stopped and fails the requests it still had.
  function markStopped(inst, reason, cause) {
    if (current === inst) current = null;
    if (inst.stopError) return inst.stopError;
    const err = new FrontStopped(`the Go front stopped: ${reason}`, cause ? { cause } : undefined);
    inst.stopError = err;
    inst.onStop?.(err);
    for (const ex of inst.pending) ex.abort(err);
    inst.pending.clear();
    return err;
  }

  async function instanceFor(env) {
    if (current && !current.stopError && !current.go.exited) return current;
    if (!starting) {
      starting = start(env).then(
        (inst) => {
          current = inst;
          starting = null;
          return inst;
        },
        (err) => {
          starting = null;
          throw err;
        },
      );
    }
    return starting;
  }

  return {
    async fetch(request, env) {
      const inst = await instanceFor(env);
      const body = await readRequestBody(request, inst.context.binding.maxRequestBytes);
      inst.context.env = env;
      const ex = new Exchange(inst, markStopped);
      inst.pending.add(ex);
      try {
        ex.number = inst.context.binding.serve(
          request.method,
          request.url,
          formatHeaders(request.headers),
          body,
          ex.post,
        );
        ex.follow(request.signal);
        return await ex.response;
      } catch (err) {
        // A trap inside a call from JS throws here without go.run settling,
        // and a call into a program that has exited throws too: either way
        // the instance is not trusted again.
        ex.finish();
        if (err instanceof FrontStopped) throw err;
        if (err instanceof WebAssembly.RuntimeError || inst.stopError || inst.go.exited) {
          throw markStopped(inst, `it trapped: ${err.message}`, err);
        }
        throw err;
      }
    },
  };
}

// The most of an internal response's body read before Go gets it: every
// answer but a shard's snapshot is far smaller, and a snapshot goes on as
// a stream.
const INLINE_BYTES = 1 << 20;

const noop = () => {};
// The messages of Go that wait for an answer (settle): their id follows.
const ASKS = new Set(['fetch', 'match', 'matchPass', 'put', 'putWrite', 'putEnd', 'read', 'write', 'sleep']);
const message = (err) => String(err?.message ?? err);

/**
 * formatHeaders writes a Headers object as Go reads it (front/headers.go):
 * "name\nvalue\n" pairs. A Headers name is a token and its value holds no
 * line break, so nothing a client sends can misalign them.
 */
function formatHeaders(headers) {
  let s = '';
  for (const [name, value] of headers) s += `${name}\n${value}\n`;
  return s;
}

/**
 * parseHeaders reads Go's "name\nvalue\n" pairs (front/headers.go writes
 * only token names and values without line breaks); anything else throws.
 */
function parseHeaders(s) {
  const parts = s.split('\n');
  if (parts.pop() !== '' || parts.length % 2 !== 0) throw new Error('the headers from Go are not name and value pairs');
  const headers = new Headers();
  for (let i = 0; i < parts.length; i += 2) headers.append(parts[i], parts[i + 1]);
  return headers;
}

/**
 * readRequestBody reads a request's body for Go: at most max + 1 bytes,
 * which is enough for Go to refuse a body over max (413), the rest
 * cancelled. A body whose Content-Length gives no length (empty, negative,
 * not one decimal number) or one over max is not read at all, but
 * cancelled: Go refuses it by its header (request.go, checkLength).
 */
export async function readRequestBody(request, max) {
  if (request.body === null) return null;
  const declared = request.headers.get('Content-Length');
  if (declared !== null && !(/^[0-9]+$/.test(declared) && Number(declared) <= max)) {
    request.body.cancel().catch(noop);
    return null;
  }
  const body = await readUpTo(request, max + 1);
  body?.rest?.cancel().catch(noop);
  return body;
}

/**
 * readUpTo reads the body of a Request or Response: all of it when it is
 * at most limit bytes, else at least limit bytes of it and the reader of
 * the rest. The body is null when there is none.
 */
async function readUpTo(r, limit) {
  if (r.body === null) return null;
  const declared = r.headers.get('Content-Length');
  if (declared !== null && Number(declared) <= limit) return new Uint8Array(await r.arrayBuffer());
  const reader = r.body.getReader();
  const chunks = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return join(chunks, total);
    chunks.push(value);
    total += value.byteLength;
    if (total >= limit) return Object.assign(join(chunks, total), { rest: reader });
  }
}

function join(chunks, total) {
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) (out.set(c, at), (at += c.byteLength));
  return out;
}

/**
 * Exchange is one request between JS and the Go program (front/bridge_js.go). Go
 * calls post with what it needs: post only queues the message and wakes
 * this request's loop, which does the work. In workerd, I/O belongs to the
 * request that started it, and Go may post for one request while JS is in
 * another's callback: the loop runs in this request's own promise chain.
 * Go learns how each thing it asked went through its settle callback.
 */
class Exchange {
  constructor(inst, markStopped) {
    this.inst = inst;
    this.markStopped = markStopped;
    this.number = 0; // what serve gave it, for cancel
    this.signal = null;
    this.onAbort = () => this.cancel();
    this.timers = new Map(); // the id of each wait Go asked for → its timer
    this.queue = [];
    this.wake = null;
    this.done = false;
    this.failure = null;
    this.readers = new Map();
    this.nextReader = 0;
    this.passes = new Map(); // the handle of each cached response Go may answer with → it
    this.writer = null;
    this.puts = new Map();
    this.nextPut = 0;
    this.post = (...msg) => {
      if (this.done) {
        // Nothing will take it: Go must not wait for it.
        if (ASKS.has(msg[0])) this.settle(msg[1], false, 'the request has ended');
        return;
      }
      this.queue.push(msg);
      if (this.wake) {
        const wake = this.wake;
        this.wake = null;
        wake();
      }
    };
    this.response = new Promise((resolve, reject) => ((this.resolve = resolve), (this.reject = reject)));
    // A message the loop cannot carry out (a header Headers refuses) fails
    // the request rather than leaving it unanswered.
    this.loop().catch((err) => {
      this.writer?.abort(err).catch(noop);
      this.reject(err);
      this.finish();
    });
  }

  settle(id, ok, ...values) {
    try {
      this.inst.context.binding.settle(id, ok, ...values);
    } catch (err) {
      this.markStopped(this.inst, `it trapped: ${message(err)}`, err);
    }
  }

  // follow tells Go when the request's client goes away, so that it stops
  // the request's work and its waits.
  follow(signal) {
    if (!signal || this.done) return;
    if (signal.aborted) return this.cancel();
    this.signal = signal;
    signal.addEventListener('abort', this.onAbort, { once: true });
  }

  cancel() {
    if (this.done || this.number === 0) return;
    try {
      this.inst.context.binding.cancel(this.number);
    } catch (err) {
      this.markStopped(this.inst, `it trapped: ${message(err)}`, err);
    }
  }

  // abort ends the exchange when the program has stopped.
  abort(err) {
    this.failure = err;
    this.reject(err);
    this.writer?.abort(err).catch(noop);
    this.post('abort');
  }

  // finish ends the exchange. Go holds post until its collector runs, and
  // post holds the exchange: what the exchange held goes now.
  finish() {
    this.done = true;
    this.signal?.removeEventListener('abort', this.onAbort);
    this.signal = null;
    for (const reader of this.readers.values()) reader.cancel().catch(noop);
    this.readers.clear();
    for (const res of this.passes.values()) res.body?.cancel().catch(noop);
    this.passes.clear();
    // An entry of the cache not ended is not whole: it is dropped.
    this.puts.clear();
    // Go may still wait (a goroutine of the request): it is told now.
    for (const [id, timer] of this.timers) (clearTimeout(timer), this.settle(id, false, 'the request has ended'));
    this.timers.clear();
    this.queue.length = 0;
    this.writer = this.response = null;
    this.resolve = this.reject = noop;
    this.inst.pending.delete(this);
  }

  async loop() {
    for (;;) {
      while (this.queue.length === 0) await new Promise((wake) => (this.wake = wake));
      const [op, ...args] = this.queue.shift();
      if (this.failure) return this.finish();
      switch (op) {
        case 'respond': {
          const [status, headers, body] = args;
          this.resolve(new Response(body, { status, headers: parseHeaders(headers) }));
          return this.finish();
        }
        case 'pass': {
          // The answer's body is a cached response's, untouched by Go.
          const [status, headers, handle] = args;
          const res = this.passes.get(handle);
          this.passes.delete(handle);
          if (res === undefined) throw new Error('an answer with a cached body that is gone');
          this.resolve(new Response(res.body, { status, headers: parseHeaders(headers) }));
          return this.finish();
        }
        case 'stream': {
          const [status, headers, length] = args;
          const { readable, writable } =
            length >= 0 && typeof globalThis.FixedLengthStream === 'function'
              ? new globalThis.FixedLengthStream(length)
              : new TransformStream();
          this.writer = writable.getWriter();
          this.resolve(new Response(readable, { status, headers: parseHeaders(headers) }));
          break;
        }
        case 'write': {
          const [id, chunk] = args;
          this.writer.write(chunk).then(
            () => this.settle(id, true),
            (err) => this.settle(id, false, message(err)),
          );
          break;
        }
        case 'close':
          if (args[0]) this.writer.close().catch(noop);
          else this.writer.abort(new Error('the response failed')).catch(noop);
          return this.finish();
        case 'error':
          this.reject(new Error(args[0]));
          return this.finish();
        case 'fetch':
          this.fetchObject(...args);
          break;
        case 'match':
          this.match(...args);
          break;
        case 'matchPass':
          this.matchPass(...args);
          break;
        case 'put':
          this.put(...args);
          break;
        case 'putWrite':
          this.putWrite(...args);
          break;
        case 'putEnd':
          this.putEnd(...args);
          break;
        case 'read':
          this.read(...args);
          break;
        case 'cancel':
          this.readers.get(args[0])?.cancel().catch(noop);
          this.readers.delete(args[0]);
          break;
        case 'sleep': {
          // A wait of Go's (pause in front/bridge_js.go), on a timer of
          // this request's own: workerd sees the request wait for it.
          const [id, ms] = args;
          this.timers.set(
            id,
            setTimeout(() => {
              this.timers.delete(id);
              this.settle(id, true);
            }, ms),
          );
          break;
        }
        // Anything else (the test hook's "nothing") is never answered: Go
        // gives up on it with the request's context.
      }
    }
  }

  async fetchObject(id, ns, object, method, url, headers, body) {
    try {
      const namespace = this.inst.context.env[ns];
      if (namespace === undefined) throw new Error(`${ns} is undefined`);
      const stub = namespace.get(namespace.idFromName(object));
      const res = await stub.fetch(url, { method, headers: parseHeaders(headers), body });
      await this.answer(id, res);
    } catch (err) {
      this.settle(id, false, message(err));
    }
  }

  // match looks key up in the colo's edge cache for Go (matchCache in
  // front/bridge_js.go): a status of 0 when it holds nothing.
  async match(id, key) {
    try {
      const res = await globalThis.caches.default.match(key);
      if (res === undefined) this.settle(id, true, 0);
      else await this.answer(id, res);
    } catch (err) {
      this.settle(id, false, message(err));
    }
  }

  // matchPass looks key up in the edge cache for Go (matchCachePass in
  // front/bridge_js.go) and keeps the response: Go gets its status, headers
  // and handle, and may answer with it (pass); its body never crosses.
  async matchPass(id, key) {
    try {
      const res = await globalThis.caches.default.match(key);
      if (res === undefined) return this.settle(id, true, 0);
      if (this.done) {
        res.body?.cancel().catch(noop);
        return this.settle(id, false, 'the request has ended');
      }
      const handle = ++this.nextReader;
      this.passes.set(handle, res);
      this.settle(id, true, res.status, formatHeaders(res.headers), handle);
    } catch (err) {
      this.settle(id, false, message(err));
    }
  }

  // put keeps an answer in the colo's edge cache for Go (putCache and
  // startCachePut in front/bridge_js.go): body, all of it, or, when body is
  // null, an entry of length bytes that Go writes (putWrite) as it streams
  // the answer to its client, and ends (putEnd). Such an entry reaches the
  // cache only once Go ends it whole: a cache may keep the part of a body
  // it was given before the put failed (Miniflare's does), so none is
  // given before then.
  async put(id, key, headers, length, body) {
    if (body === null) {
      const handle = ++this.nextPut;
      this.puts.set(handle, { key, headers, length, chunks: [], size: 0 });
      return this.settle(id, true, handle);
    }
    try {
      await globalThis.caches.default.put(key, new Response(body, { headers: parseHeaders(headers) }));
      this.settle(id, true);
    } catch (err) {
      this.settle(id, false, message(err));
    }
  }

  putWrite(id, handle, chunk) {
    const put = this.puts.get(handle);
    if (put === undefined) return this.settle(id, false, 'a write to a cache entry that has ended');
    if (put.size + chunk.byteLength > put.length) {
      this.puts.delete(handle);
      return this.settle(id, false, `a cache entry of ${put.length} bytes was given more`);
    }
    put.chunks.push(chunk);
    put.size += chunk.byteLength;
    this.settle(id, true);
  }

  // putEnd ends an entry: whole, it is put and settled once the cache has
  // it; else it is dropped.
  async putEnd(id, handle, whole) {
    const put = this.puts.get(handle);
    this.puts.delete(handle);
    try {
      if (put === undefined) throw new Error('the end of a cache entry that has ended');
      if (whole) {
        if (put.size !== put.length) throw new Error(`a cache entry of ${put.length} bytes ended at ${put.size}`);
        const body = new Blob(put.chunks);
        put.chunks = null;
        await globalThis.caches.default.put(put.key, new Response(body, { headers: parseHeaders(put.headers) }));
      }
      this.settle(id, true);
    } catch (err) {
      this.settle(id, false, message(err));
    }
  }

  // answer settles id with res: the status, the headers, the body's first
  // bytes and, when there is more, the handle of its reader.
  async answer(id, res) {
    const first = await readUpTo(res, INLINE_BYTES);
    let handle;
    if (first?.rest) {
      handle = ++this.nextReader;
      if (this.done) first.rest.cancel().catch(noop);
      else this.readers.set(handle, first.rest);
    }
    this.settle(id, true, res.status, formatHeaders(res.headers), first, handle);
  }

  async read(id, handle) {
    try {
      const reader = this.readers.get(handle);
      if (reader === undefined) throw new Error('read of a closed body');
      const { done, value } = await reader.read();
      if (done) this.readers.delete(handle);
      this.settle(id, true, done ? null : value);
    } catch (err) {
      this.settle(id, false, message(err));
    }
  }
}
