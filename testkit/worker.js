// The edge service (worker/) for its tests, its benches and the e2e tests: build the Worker the way a deploy
// does, run it in Miniflare (workerd) or under wrangler dev, and call its API.
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Miniflare } from 'miniflare';
import { endGroup, freePort, repoRoot } from './process.js';
import { bundleOptions } from './workerd.js';

export const WORKER_DIR = join(repoRoot, 'worker');
export const WRANGLER = join(repoRoot, 'node_modules', '.bin', 'wrangler');
// A child process serving the Worker (serve-worker.js) gets its parent's.
export const TOKEN = process.env.EDGEBLOOM_TEST_TOKEN || randomBytes(16).toString('hex');
const COMPATIBILITY_DATE = '2026-04-01'; // as in wrangler.jsonc
const COMPATIBILITY_FLAGS = ['enable_request_signal']; // as in wrangler.jsonc

const quietEnv = () => ({ ...process.env, WRANGLER_SEND_METRICS: 'false', NO_COLOR: '1' });

// The tests' entry: the production one with the Durable Object's test hooks.
const TEST_ENTRY = fileURLToPath(new URL('./worker-entry.mjs', import.meta.url));

/**
 * Builds and bundles the Worker into outdir with wrangler deploy --dry-run:
 * from the tests' entry (worker-entry.mjs), or with production, from
 * wrangler.jsonc's "main" alone, as a deploy does. Returns the source files
 * the bundle holds, relative to the repository's root.
 */
export function buildWorker(outdir, { production = false } = {}) {
  const entry = production ? [] : ['--config', 'wrangler.jsonc', TEST_ENTRY];
  const meta = join(outdir, 'bundle-meta.json');
  execFileSync(WRANGLER, ['deploy', '--dry-run', '--outdir', outdir, '--metafile', meta, ...entry], {
    cwd: WORKER_DIR,
    env: quietEnv(),
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const { outputs } = JSON.parse(readFileSync(meta, 'utf8'));
  const inputs = Object.values(outputs).flatMap((o) => Object.keys(o.inputs));
  return [...new Set(inputs)].map((f) => relative(repoRoot, resolve(WORKER_DIR, f)));
}

/**
 * Reads a Response to its end, as a client that sees a body cut short
 * would: the status, the bytes that came, the length the headers give
 * (NaN without one), and the error that ended the body, or null.
 */
export async function readToEnd(res) {
  const parts = [];
  let error = null;
  try {
    const reader = res.body.getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      parts.push(value);
    }
  } catch (err) {
    error = err;
  }
  const bytes = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) (bytes.set(p, at), (at += p.length));
  return { status: res.status, headers: res.headers, bytes, length: Number(res.headers.get('Content-Length')), error };
}

/** An API client over a fetch function. */
export function client(fetchFn, base = 'http://edgebloom.test') {
  return async function request(method, path, body, { token = TOKEN, raw, headers: extra } = {}) {
    const headers = {};
    if (token !== null) headers.Authorization = `Bearer ${token}`;
    Object.assign(headers, extra);
    let payload;
    if (raw !== undefined) payload = raw;
    else if (body !== undefined) payload = JSON.stringify(body);
    if (payload !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetchFn(base + path, { method, headers, body: payload });
    const bytes = new Uint8Array(await res.arrayBuffer());
    let json;
    if ((res.headers.get('Content-Type') ?? '').startsWith('application/json'))
      json = JSON.parse(new TextDecoder().decode(bytes));
    return { status: res.status, json, bytes, headers: res.headers };
  };
}

/**
 * Runs the bundle in outdir in Miniflare with Durable Object state under
 * stateDir; with port, it also listens on 127.0.0.1:port (0: any free one).
 * With fronts > 1, the bundle also runs as that many more Workers whose
 * SHARDS binding reaches the first one's Durable Objects: fronts of their
 * own (an isolate and a Go instance each, with its own meta cache) on one
 * set of objects, as Cloudflare runs a Worker in many isolates. bindings
 * are set in every Worker's environment besides (or instead of)
 * EDGEBLOOM_TOKEN and EDGEBLOOM_TEST_HOOKS. With cache false, the Cache API
 * keeps nothing (a put stores nothing, a lookup finds nothing), as on
 * *.workers.dev.
 */
export async function startWorker(outdir, stateDir, { port, fronts = 1, bindings, cache = true } = {}) {
  // What the Worker logs (console.*, and Go's stdout and stderr, which
  // syumai/workers sends to console.log): passed on, as Miniflare does by
  // default, and kept for the tests to read.
  let log = '';
  const worker = (name, shards) => ({
    name,
    ...bundleOptions(outdir, existsSync(join(outdir, 'worker-entry.js')) ? 'worker-entry.js' : 'worker.js'),
    compatibilityDate: COMPATIBILITY_DATE,
    compatibilityFlags: COMPATIBILITY_FLAGS,
    durableObjects: { SHARDS: shards },
    bindings: { EDGEBLOOM_TOKEN: TOKEN, EDGEBLOOM_TEST_HOOKS: '1', ...bindings },
    cache,
  });
  const mf = new Miniflare({
    ...(port === undefined ? {} : { host: '127.0.0.1', port }),
    handleRuntimeStdio(stdout, stderr) {
      stdout.on('data', (d) => {
        log += d;
        process.stdout.write(d);
      });
      stderr.on('data', (d) => {
        log += d;
        process.stderr.write(d);
      });
    },
    durableObjectsPersist: stateDir,
    cf: false,
    workers: [
      worker('edgebloom', { className: 'Shard', useSQLite: true }),
      ...Array.from({ length: fronts - 1 }, (_, i) =>
        worker(`front-${i + 1}`, { className: 'Shard', scriptName: 'edgebloom', useSQLite: true }),
      ),
    ],
  });
  const url = await mf.ready;
  const shards = await mf.getDurableObjectNamespace('SHARDS');
  const others = await Promise.all(Array.from({ length: fronts - 1 }, (_, i) => mf.getWorker(`front-${i + 1}`)));
  return {
    url,
    request: client((url, init) => mf.dispatchFetch(url, init)),
    /** A raw fetch to the first front, for a test that reads the body as it comes. */
    fetch: (url, init) => mf.dispatchFetch(url, init),
    /** API clients of each front: fronts[0] is request's. */
    fronts: [
      client((url, init) => mf.dispatchFetch(url, init)),
      ...others.map((f) => client((url, init) => f.fetch(url, init))),
    ],
    /** Calls a shard's test hook directly (see worker/shard/test-hooks.js). */
    async hook(object, path, body) {
      const stub = shards.get(shards.idFromName(object));
      const res = await stub.fetch(`http://shard${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, json: res.status === 200 ? await res.json() : await res.text() };
    },
    /** Sends a request to a Durable Object directly, past the Go front. */
    async shardFetch(object, path, body, headers = {}) {
      const stub = shards.get(shards.idFromName(object));
      const res = await stub.fetch(`http://shard${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
      await res.arrayBuffer();
      return { status: res.status };
    },
    /** Sends a request of the internal protocol to an object and returns its Response unread. */
    objectResponse(object, method, path, { headers, body } = {}) {
      const stub = shards.get(shards.idFromName(object));
      return stub.fetch(`http://shard${path}`, { method, headers, body });
    },
    /** Sends a request of the internal protocol (objects.go) to an object. */
    async object(object, method, path, { headers, body } = {}) {
      const stub = shards.get(shards.idFromName(object));
      const res = await stub.fetch(`http://shard${path}`, { method, headers, body });
      const bytes = new Uint8Array(await res.arrayBuffer());
      const text = new TextDecoder().decode(bytes);
      return {
        status: res.status,
        headers: res.headers,
        text,
        bytes,
        json: (res.headers.get('Content-Type') ?? '').startsWith('application/json') ? JSON.parse(text) : undefined,
      };
    },
    /** Everything the Worker has logged so far. */
    log: () => log,
    dispose: () => mf.dispose(),
  };
}

/**
 * Starts "wrangler dev" (through dev.sh) on a free port in its own process
 * group, with env added to its environment; stop() ends the whole group.
 * Extra args go to wrangler dev.
 */
export async function startDev(stateDir, { timeoutMs = 180_000, dir = WORKER_DIR, args = [], env } = {}) {
  const port = await freePort();
  return startServer({
    command: ['bash', join(dir, 'dev.sh'), ...args],
    cwd: dir,
    env: { EDGEBLOOM_TOKEN: TOKEN, EDGEBLOOM_STATE: stateDir, PORT: String(port), ...env },
    port,
    timeoutMs,
    // The front answers, and so does the shard behind it.
    probe: { path: '/v1/filters/-', init: { headers: { Authorization: `Bearer ${TOKEN}` } }, status: 404 },
  });
}

/**
 * Starts "wrangler dev" for the Worker of the wrangler config in cwd, on a
 * free port in its own process group, with its state under stateDir.
 */
export async function startWranglerDev(cwd, stateDir, { timeoutMs = 180_000 } = {}) {
  const port = await freePort();
  const args = ['dev', '--ip', '127.0.0.1', '--port', String(port), '--inspector-port', '0', '--persist-to', stateDir];
  return startServer({ command: [WRANGLER, ...args], cwd, env: {}, port, timeoutMs, probe: { path: '/' } });
}

// startServer runs command in a process group of its own and waits until
// a request to probe.path answers (with probe.status, when given).
async function startServer({ command, cwd, env, port, timeoutMs, probe }) {
  const child = spawn(command[0], command.slice(1), {
    cwd,
    env: { ...quietEnv(), ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout.on('data', (d) => (log += d));
  child.stderr.on('data', (d) => (log += d));
  const exited = once(child, 'exit');
  const stop = () => endGroup(child, exited);
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited with ${child.exitCode}:\n${log}`);
    try {
      const res = await fetch(base + probe.path, probe.init);
      await res.arrayBuffer();
      if (probe.status === undefined || res.status === probe.status) break;
    } catch {}
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`wrangler dev did not answer on ${base} in ${timeoutMs} ms:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  return { base, port, pid: child.pid, request: client(fetch, base), stop, log: () => log };
}

/**
 * Starts "wrangler dev" on a plain JS Worker, a benchmark's comparison:
 * source is its worker.mjs, written with its wrangler.json into dir/js,
 * its state in dir/js-state.
 */
export async function startJsWorker(dir, source) {
  const js = join(dir, 'js');
  mkdirSync(js);
  writeFileSync(join(js, 'worker.mjs'), source);
  writeFileSync(
    join(js, 'wrangler.json'),
    JSON.stringify({ name: 'bench', main: 'worker.mjs', compatibility_date: '2026-04-01' }) + '\n',
  );
  return startWranglerDev(js, join(dir, 'js-state'));
}

/**
 * Starts serve-worker.js on the bundle in out and state, in a process group of its
 * own, with bindings added to the Worker's environment (startWorker's); kill() sends
 * SIGKILL to the group, as a crash would. url is the Worker's, control the server that
 * forwards POST /hook/<object><path> to a Durable Object's test hook, for a program
 * of another language driving the Worker.
 */
export async function serveProcess(out, state, { bindings = {} } = {}) {
  const script = fileURLToPath(new URL('./serve-worker.js', import.meta.url));
  const child = spawn(process.execPath, [script, out, state, JSON.stringify(bindings)], {
    cwd: WORKER_DIR,
    env: { ...process.env, EDGEBLOOM_TEST_TOKEN: TOKEN },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  const waiters = [];
  const onData = (d) => {
    log += d;
    for (const w of waiters.splice(0)) w();
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exited = once(child, 'exit');
  // waitFor resolves once the output matches re.
  const waitFor = async (re) => {
    while (!re.test(log)) {
      if (child.exitCode !== null) throw new Error(`serve-worker.js exited:\n${log}`);
      await new Promise((r) => waiters.push(r));
    }
    return log.match(re);
  };
  const [, url, control] = await waitFor(/^ready (\S+) (\S+)$/m);
  const request = client(fetch, url.replace(/\/$/, ''));
  return {
    url: url.replace(/\/$/, ''),
    control,
    request,
    waitFor,
    log: () => log,
    hook: (object, path, body) =>
      fetch(`${control}/hook/${encodeURIComponent(object)}${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        body: body === undefined ? undefined : JSON.stringify(body),
      }).then(async (r) => ({ status: r.status, json: await r.json().catch(() => null) })),
    async kill() {
      process.kill(-child.pid, 'SIGKILL');
      await exited;
      // Every process of the group, workerd included, is gone.
      await waitGone(child.pid);
    },
  };
}

async function waitGone(pgid) {
  for (;;) {
    try {
      process.kill(-pgid, 0);
    } catch (err) {
      if (err.code === 'ESRCH') return;
      throw err;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

// The fields of /proc/PID/stat after the command name.
const stat = (pid) => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
const TICK_MS = 10; // USER_HZ is 100 on Linux
const PAGE = 4096;

/** The workerd processes among the descendants of process root. */
export function workerdProcesses(root = process.pid) {
  const procs = new Map();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const comm = readFileSync(`/proc/${d}/comm`, 'utf8').trim();
      procs.set(Number(d), { ppid: Number(stat(d)[1]), comm });
    } catch {}
  }
  const mine = new Set([root]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, p] of procs) if (mine.has(p.ppid) && !mine.has(pid)) (mine.add(pid), (grew = true));
  }
  const found = [...mine].filter((p) => procs.get(p)?.comm === 'workerd');
  if (found.length === 0) throw new Error('no workerd process found');
  return found;
}

/** The CPU time (user + system) the processes have taken, in ms. */
export const cpuMs = (pids) => pids.reduce((t, p) => t + (Number(stat(p)[11]) + Number(stat(p)[12])) * TICK_MS, 0);

/** The resident size of the processes, in bytes. */
export const rss = (pids) => pids.reduce((t, p) => t + Number(stat(p)[21]) * PAGE, 0);

/**
 * Runs `go test -tags workerd -count=1 -timeout 10m -v ARGS` in cwd against
 * the service w (a serveProcess): its URL, the secret and the control
 * server of the Durable Objects' test hooks in EDGEBLOOM_SERVICE_URL,
 * EDGEBLOOM_SERVICE_TOKEN and EDGEBLOOM_SERVICE_CONTROL. It passes the
 * output on and returns the exit code and the output.
 */
export async function goTestAgainst(w, cwd, args) {
  const child = spawn('go', ['test', '-tags', 'workerd', '-count=1', '-timeout', '10m', '-v', ...args], {
    cwd,
    env: {
      ...process.env,
      EDGEBLOOM_SERVICE_URL: w.url,
      EDGEBLOOM_SERVICE_TOKEN: TOKEN,
      EDGEBLOOM_SERVICE_CONTROL: w.control,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => ((out += d), process.stdout.write(d)));
  child.stderr.on('data', (d) => ((out += d), process.stderr.write(d)));
  const [code] = await once(child, 'exit');
  return { code, out };
}
