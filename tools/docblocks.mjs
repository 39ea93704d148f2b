// The docs' code blocks, run: every fenced block of README.md, docs/,
// worker/, bench/ and examples/ that a reader would run or paste is taken
// from the Markdown and run (or checked), so a block that stops working
// fails npm test. Usage: node tools/docblocks.mjs [FILE.md ...] (from
// build.sh test-docs; every doc by default).
//
// What happens to a block depends on its language and on an HTML comment
// on the line just before its fence, which the rendered page does not show:
//
//   sh, bash  run by bash -euo pipefail, in the repository's root. The edgebloom
//             command is on PATH, built from this checkout. A comment line
//             right after a command ("# expected output") is a line its
//             output must hold.
//   js        run by node as an ES module that imports 'edgebloom' from
//             this checkout. A line "expr; // VALUE" or "expr; // VALUE:
//             why", VALUE a literal (true, false, a number, a 'string'),
//             checks that expr is VALUE, and "expr; // throws TypeError:
//             message" that it throws so.
//   json, jsonc  parsed (a fragment "key": value as the object it goes in).
//   html      an import map in it must map to files the package ships.
//   go        in README.md and docs/: each paragraph must stand in an
//             Example function, which go test compiles and runs
//             (bloom/readme_test.go); elsewhere it needs a comment.
//   text      not code: a layout, a diagram, output.
//
//   <!-- not-run: REASON -->   not run, for the reason given (say it)
//   <!-- run-by: FILE -->      FILE, a test of this repository, takes the
//                              block from this doc and runs it
//   <!-- run: OPTIONS -->      run, with options:
//     serve URL    the block starts a server that keeps running: it runs
//                  in the background, with PORT set to a free port that
//                  replaces URL's port in the doc's later blocks, until it
//                  answers at URL; it is stopped after the doc's last block
//     cwd=tmp      in a new empty directory
//     cwd=here     in the doc's own directory
//     cwd=beside-clone  in a new directory beside a link to this checkout
//                  at ../edgebloom, as the install steps have it
//     files=A,B    ... holding these files: URLs one a line (https://example.com/
//                  among them), gzipped when the name ends in .gz
//
// A block that mentions 127.0.0.1:6379 gets a redis-server of its own on a
// free port in its place. Servers bind 127.0.0.1 only; nothing else is
// reached. After every doc has run, git status must be what it was.
import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { endGroup, freePort } from '../testkit/process.js';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The docs whose blocks are run, relative to the repository's root. */
export function docs() {
  const md = (dir) =>
    existsSync(path.join(root, dir))
      ? readdirSync(path.join(root, dir))
          .filter((f) => f.endsWith('.md'))
          .map((f) => path.posix.join(dir, f))
      : [];
  const examples = readdirSync(path.join(root, 'examples'), { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(path.join(root, 'examples', d.name, 'README.md')))
    .map((d) => `examples/${d.name}/README.md`);
  return [
    'README.md',
    ...md('docs'),
    ...md('worker'),
    ...md('worker/bench'),
    'bench/README.md',
    'examples/README.md',
    ...examples,
  ].sort();
}

const NOTE = /^<!-- (not-run|run-by|run): ?(.*?) -->$/;

/**
 * blocks returns the fenced code blocks of a Markdown text: the language,
 * the code, the line of the opening fence (1-based) and the note before it
 * ({kind: 'not-run' | 'run-by' | 'run', text}), if any.
 */
export function blocks(text) {
  const lines = text.split('\n');
  const out = [];
  for (let i = 0; i < lines.length; i++) {
    // A fence may be indented, inside a list item: its block is too.
    const open = lines[i].match(/^( *)(`{3,})(\S*)\s*$/);
    if (!open) continue;
    const [, indent, fence, lang] = open;
    let j = i + 1;
    while (j < lines.length && lines[j] !== indent + fence) j++;
    if (j === lines.length) throw new Error(`line ${i + 1}: a code fence that is never closed`);
    const prev = i > 0 ? lines[i - 1].match(NOTE) : null;
    out.push({
      lang,
      code:
        lines
          .slice(i + 1, j)
          .map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l))
          .join('\n') + '\n',
      line: i + 1,
      note: prev ? { kind: prev[1], text: prev[2].trim() } : undefined,
    });
    i = j;
  }
  return out;
}

/** options parses the text of a run note: serve URL, cwd=tmp, cwd=here, cwd=beside-clone, files=A,B. */
export function options(text) {
  const opts = { files: [] };
  const words = text.split(/\s+/).filter(Boolean);
  for (let i = 0; i < words.length; i++) {
    const w = words[i];
    if (w === 'serve') opts.serve = new URL(words[++i]);
    else if (w === 'cwd=tmp') opts.tmp = true;
    else if (w === 'cwd=here') opts.here = true;
    else if (w === 'cwd=beside-clone') opts.beside = true;
    else if (w.startsWith('files=')) opts.files = w.slice(6).split(',');
    else
      throw new Error(
        `run note: unknown option ${JSON.stringify(w)} (serve URL, cwd=tmp, cwd=here, cwd=beside-clone, files=A,B)`,
      );
  }
  if (opts.files.length) opts.tmp = true;
  return opts;
}

// The span of code before a line comment, as long as every bracket it opens
// it closes and no string crosses it: a whole statement on one line.
function balanced(code) {
  let depth = 0;
  for (let i = 0; i < code.length; i++) {
    const c = code[i];
    if (c === "'" || c === '"' || c === '`') {
      const end = code.indexOf(c, i + 1);
      if (end < 0) return false;
      i = end;
    } else if ('([{'.includes(c)) depth++;
    else if (')]}'.includes(c) && --depth < 0) return false;
  }
  return depth === 0;
}

const LITERAL = String.raw`true|false|null|-?\d[\d_]*(?:\.\d+)?|'(?:[^'\\]|\\.)*'`;
const EXPECT = new RegExp(
  String.raw`^(\s*)(?!(?:const|let|var|if|else|return|for|while|import|export)\b)(.+?);\s*//\s*(?:(${LITERAL})(?=$|:)|throws (\w*Error): (.+))`,
);

/**
 * checkedJS rewrites the lines of a JS block that state their value in a
 * comment into checks of it, and adds the checks' functions.
 */
export function checkedJS(code, where) {
  const lines = code.split('\n').map((line, i) => {
    const m = line.match(EXPECT);
    if (!m || !balanced(m[2])) return line;
    const at = JSON.stringify(`${where.doc}:${where.line + 1 + i}`);
    if (m[4]) return `${m[1]}__throws(() => (${m[2]}), ${m[4]}, ${JSON.stringify(m[5].trim())}, ${at});`;
    return `${m[1]}__expect((${m[2]}), ${m[3]}, ${at});`;
  });
  return `${lines.join('\n')}
function __expect(got, want, at) {
  if (!Object.is(got, want)) {
    console.error(\`\${at}: the doc says \${JSON.stringify(want)}, the code gives \${JSON.stringify(got)}\`);
    process.exit(1);
  }
}
function __throws(fn, Kind, message, at) {
  try {
    fn();
  } catch (err) {
    if (err instanceof Kind && err.message === message) return;
    console.error(\`\${at}: the doc says it throws \${Kind.name}: \${message}; it threw \${err}\`);
    process.exit(1);
  }
  console.error(\`\${at}: the doc says it throws \${Kind.name}: \${message}; it did not throw\`);
  process.exit(1);
}
`;
}

/**
 * expectedOutput gives the lines a shell block's output must hold: the
 * comment lines ("# text") that follow a command line.
 */
export function expectedOutput(code) {
  const want = [];
  let afterCommand = false;
  for (const line of code.split('\n')) {
    if (/^# /.test(line) && afterCommand) want.push(line.slice(2));
    else afterCommand = line.trim() !== '' && !line.startsWith('#');
  }
  return want;
}

/** The files of the package's tarball, as package.json's "files" lists them. */
function packaged(file) {
  const { files } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
  const rel = path.posix.normalize(file);
  return files.some((p) =>
    p.includes('*') ? new RegExp(`^${p.replace(/\./g, '\\.').replace(/\*/g, '[^/]*')}$`).test(rel) : p === rel,
  );
}

/** What is wrong with an HTML block's import map, or '' when it maps to shipped files. */
export function importMapProblem(html) {
  const m = html.match(/<script type="importmap">([\s\S]*?)<\/script>/);
  if (!m) return 'an html block without an import map (give it a not-run note)';
  const { imports } = JSON.parse(m[1]);
  for (const [name, target] of Object.entries(imports ?? {})) {
    const inPackage = target.match(/node_modules\/edgebloom\/(.+)$/);
    if (!inPackage) return `${name} maps to ${target}, not a file of node_modules/edgebloom/`;
    if (!packaged(inPackage[1]) || !existsSync(path.join(root, inPackage[1])))
      return `${name} maps to ${inPackage[1]}, which the package does not ship`;
  }
  return '';
}

/** A JSON or JSONC block, or the "key": value fragment of one, parses. */
export function jsonProblem(text) {
  const plain = text.replace(/^\s*\/\/.*$/gm, '').replace(/,(\s*[}\]])/g, '$1');
  for (const t of [plain, `{${plain}}`]) {
    try {
      JSON.parse(t);
      return '';
    } catch {}
  }
  try {
    JSON.parse(`{${plain}}`);
  } catch (err) {
    return err.message;
  }
  return '';
}

// Some URLs, one a line, for the blocks that read a file of them.
function urls(name) {
  const list = ['https://example.com/'];
  for (let i = 0; i < 1000; i++) list.push(`https://${name.split('.')[0]}.example/${i}`);
  const text = list.join('\n') + '\n';
  return name.endsWith('.gz') ? gzipSync(text) : text;
}

// A process group running bash -c code, its output collected.
function start(code, { cwd, env }) {
  const child = spawn('bash', ['-euo', 'pipefail', '-c', code], {
    cwd,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const done = new Promise((resolve) =>
    child.on('close', (status, signal) => resolve({ status: status ?? signal, out, err })),
  );
  return { child, done, stop: () => endGroup(child, done), output: () => out + err };
}

async function answers(url) {
  try {
    const res = await fetch(url);
    await res.arrayBuffer();
    return true;
  } catch {
    return false;
  }
}

// A block's deadline: long enough for a first go run of the Parquet
// example, which compiles arrow-go.
const BLOCK_MS = 900_000;
const SERVE_MS = 600_000;

/**
 * runDoc runs the blocks of one doc in order; it returns a list of
 * failures, each a string naming the doc and line.
 */
export async function runDoc(doc, { bin, log = () => {} } = {}) {
  const text = readFileSync(path.join(root, doc), 'utf8');
  const failures = [];
  const fail = (b, why) => failures.push(`${doc}:${b.line}: ${why}`);
  const servers = [];
  const ports = new Map(); // a port the doc names -> the port it runs on
  const rewrite = (code) => {
    for (const [from, to] of ports) code = code.replaceAll(`127.0.0.1:${from}`, `127.0.0.1:${to}`);
    return code;
  };
  const scratch = mkdtempSync(path.join(tmpdir(), 'edgebloom-docblocks-'));
  const jsDir = path.join(root, '.cache/docblocks');
  mkdirSync(jsDir, { recursive: true });
  try {
    for (const b of blocks(text)) {
      const { lang, note } = b;
      if (note?.kind === 'not-run') {
        if (note.text.length < 10) fail(b, `a not-run note says why: ${JSON.stringify(note.text)}`);
        continue;
      }
      if (note?.kind === 'run-by') {
        const file = note.text.split(/\s+/)[0];
        if (!existsSync(path.join(root, file))) fail(b, `run-by ${file}: no such file`);
        else if (!readFileSync(path.join(root, file), 'utf8').includes(path.basename(doc)))
          fail(b, `run-by ${file}: it does not read ${doc}`);
        continue;
      }
      if (lang === 'text') continue;
      if (lang === '') {
        fail(b, 'a block without a language: give it one (text for a layout or output)');
        continue;
      }
      if (lang === 'json' || lang === 'jsonc') {
        const why = jsonProblem(b.code);
        if (why) fail(b, `does not parse: ${why}`);
        continue;
      }
      if (lang === 'html') {
        const why = importMapProblem(b.code);
        if (why) fail(b, why);
        continue;
      }
      if (lang === 'go' && (doc === 'README.md' || doc.startsWith('docs/'))) continue; // bloom/readme_test.go
      if (!['sh', 'bash', 'js'].includes(lang)) {
        fail(b, `a ${lang || 'plain'} block this runner does not run: give it a run-by or not-run note`);
        continue;
      }
      let opts;
      try {
        opts = options(note?.kind === 'run' ? note.text : '');
      } catch (err) {
        fail(b, err.message);
        continue;
      }
      let cwd = path.join(root, opts.here ? path.dirname(doc) : '.');
      if (opts.tmp) cwd = mkdtempSync(path.join(scratch, 'cwd-'));
      if (opts.beside) {
        const dir = mkdtempSync(path.join(scratch, 'clone-'));
        symlinkSync(root, path.join(dir, 'edgebloom'));
        cwd = path.join(dir, 'app');
        mkdirSync(cwd);
      }
      for (const f of opts.files) writeFileSync(path.join(cwd, f), urls(f));
      const env = {
        ...process.env,
        PATH: `${bin}:${process.env.PATH}`,
        WRANGLER_SEND_METRICS: 'false',
        NO_COLOR: '1',
      };
      let code = b.code;
      if (code.includes('127.0.0.1:6379') && !ports.has(6379)) {
        const port = await freePort();
        const redis = start(`exec redis-server --bind 127.0.0.1 --port ${port} --save '' --appendonly no`, {
          cwd: scratch,
          env,
        });
        servers.push(redis);
        ports.set(6379, port);
        const deadline = Date.now() + 20_000;
        while (
          spawnSync('redis-cli', ['-p', String(port), 'ping'])
            .stdout?.toString()
            .trim() !== 'PONG'
        ) {
          if (Date.now() > deadline) {
            fail(b, `redis-server did not start:\n${redis.output()}`);
            break;
          }
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      if (opts.serve) {
        const port = await freePort();
        ports.set(Number(opts.serve.port), port);
        const url = rewrite(opts.serve.href);
        log(`${doc}:${b.line}: serving ${url}`);
        const server = start(code, {
          cwd,
          env: { ...env, PORT: String(port), EDGEBLOOM_STATE: path.join(scratch, 'state') },
        });
        servers.push(server);
        const deadline = Date.now() + SERVE_MS;
        while (!(await answers(url))) {
          if (server.child.exitCode !== null || Date.now() > deadline) {
            fail(b, `the server does not answer at ${url}:\n${server.output()}`);
            return failures;
          }
          await new Promise((r) => setTimeout(r, 500));
        }
        continue;
      }
      code = rewrite(code);
      log(`${doc}:${b.line}: ${lang}`);
      let run;
      if (lang === 'js') {
        const file = path.join(jsDir, `${doc.replace(/[/.]/g, '-')}-${b.line}.mjs`);
        writeFileSync(file, checkedJS(code, { doc, line: b.line }));
        run = start(`exec ${JSON.stringify(process.execPath)} ${JSON.stringify(file)}`, { cwd, env });
      } else {
        run = start(code, { cwd, env });
      }
      const timer = setTimeout(() => run.stop(), BLOCK_MS);
      const { status, out } = await run.done;
      clearTimeout(timer);
      if (status !== 0) {
        fail(b, `exited with ${status}:\n${code}\n${run.output()}`);
        continue;
      }
      if (lang !== 'js') {
        const got = out.split('\n');
        let at = 0;
        for (const want of expectedOutput(code)) {
          const i = got.indexOf(want, at);
          if (i < 0) {
            fail(b, `the output lacks the line the doc shows: ${want}\n${out}`);
            break;
          }
          at = i + 1;
        }
      }
    }
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    rmSync(scratch, { recursive: true, force: true });
  }
  return failures;
}

function gitStatus() {
  return spawnSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: root, encoding: 'utf8' }).stdout;
}

/**
 * main runs the blocks of files (every doc by default), at most two docs
 * at a time, and fails when a block failed or git status changed.
 */
export async function main(files = docs()) {
  const before = gitStatus();
  const bin = path.join(root, '.cache/docblocks/bin');
  mkdirSync(bin, { recursive: true });
  const built = spawnSync('go', ['build', '-o', path.join(bin, 'edgebloom'), './cmd/edgebloom'], {
    cwd: root,
    stdio: 'inherit',
  });
  if (built.status !== 0) throw new Error('go build ./cmd/edgebloom failed');
  const queue = [...files];
  const failures = [];
  const worker = async () => {
    for (let doc; (doc = queue.shift());) {
      const started = Date.now();
      const got = await runDoc(doc, { bin, log: (l) => console.log(`    ${l}`) });
      console.log(`${got.length ? 'FAIL' : 'ok  '} ${doc} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
      failures.push(...got);
    }
  };
  await Promise.all([worker(), worker()]);
  const after = gitStatus();
  if (after !== before) failures.push(`git status changed while the docs ran:\nbefore:\n${before}\nafter:\n${after}`);
  for (const f of failures) console.error(`\n${f}`);
  return failures.length === 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const files = process.argv.slice(2);
  main(files.length ? files : undefined).then(
    (ok) => (process.exitCode = ok ? 0 : 1),
    (err) => {
      console.error(err);
      process.exitCode = 1;
    },
  );
}
