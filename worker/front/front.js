// The Go front's host: one Go instance per isolate, kept across requests.
//
// syumai/workers' own entry module (the worker.mjs its workers-assets-gen
// generates, which build.sh leaves out) makes a new Go instance for every
// request, and its program exits once the response is read: every request
// paid Go's start and the init of every package the front links, about 7 ms
// of CPU in workerd before any work. From v0.33.0 its handler can serve many
// requests in one instance (it closes its done channel once), so main.go
// registers the handler with workers.ServeNonBlock, signals workers.Ready and
// blocks, and this module starts that program once and hands it every request
// through the binding syumai/workers sets (binding.handleRequest): its
// request and response conversion, bindings and cloudflare.Getenv stay
// syumai/workers' own.
//
// The runtime context: syumai/workers reads `env` (cloudflare.Getenv, the
// Durable Object binding) from the context object at call time, so env is
// set on it before each request reaches Go. workerd hands every request of
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
 * compiled WebAssembly.Module built against syumai/workers) in one kept
 * instance. Go is the Go class of syumai/workers' wasm_exec.js; extra holds
 * what the runtime context carries besides env and binding (connect).
 */
export function front({ module, Go, extra = {} }) {
  let current = null; // the running instance (see start)
  let starting = null; // the promise of the instance being started

  async function start(env) {
    const go = new Go();
    const context = { ...extra, env, binding: {} };
    // pending holds the reject function of every request in flight, so that
    // those a stopped program will never answer fail at once.
    const inst = { go, context, stopped: false, pending: new Set(), onStop: null };
    // Go calls exit synchronously as its program ends (os.Exit, a panic no
    // recover caught), inside the request that made it end. That is where
    // the instance is marked stopped: workerd cancels a continuation that a
    // promise of one request (go.run's) would run in another.
    const exit = go.exit;
    go.exit = (code) => {
      exit.call(go, code);
      stopped(inst, `the Go program exited with code ${code}`);
    };
    let ready;
    const readyPromise = new Promise((resolve) => (ready = resolve));
    const instance = new WebAssembly.Instance(module, { ...go.importObject, workers: { ready: () => ready() } });
    const startFailed = new Promise((_, reject) => (inst.onStop = reject));
    go.run(instance, context).catch((err) => stopped(inst, `the Go program trapped: ${err?.message ?? err}`, err));
    // The program stops before it is ready only if its start failed.
    await Promise.race([readyPromise, startFailed]);
    inst.onStop = null;
    return inst;
  }

  // stopped marks inst as stopped and fails the requests it still had.
  function stopped(inst, reason, cause) {
    if (current === inst) current = null;
    if (inst.stopped) return inst.stopError;
    inst.stopped = true;
    const err = new FrontStopped(`the Go front stopped: ${reason}`, cause ? { cause } : undefined);
    inst.stopError = err;
    inst.onStop?.(err);
    for (const reject of inst.pending) reject(err);
    inst.pending.clear();
    return err;
  }

  async function instanceFor(env) {
    if (current && !current.stopped && !current.go.exited) return current;
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
      inst.context.env = env;
      let reject;
      const failed = new Promise((_, r) => (reject = r));
      inst.pending.add(reject);
      try {
        // The program settles handleRequest's promise; if it stops first,
        // stopped() rejects `failed` instead.
        return await Promise.race([inst.context.binding.handleRequest(request), failed]);
      } catch (err) {
        // A trap inside a call from JS throws here without go.run settling,
        // and a call into a program that has exited throws too: either way
        // the instance is not trusted again.
        if (err instanceof FrontStopped) throw err;
        if (err instanceof WebAssembly.RuntimeError || inst.stopped || inst.go.exited) {
          throw stopped(inst, `it trapped: ${err.message}`, err);
        }
        throw err;
      } finally {
        inst.pending.delete(reject);
      }
    },
  };
}
