// The figures of the docs that describe the build or the code (limits,
// error codes, sizes, sizing arithmetic), each checked against where it
// comes from: a figure that goes stale fails here. Measured figures (times,
// memory) are labelled with their command, date and machine instead
// (bench/README.md, worker/bench/README.md).
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { budget } from '../wasm.mjs';
import { init, optimal, optimalBlocks, estimateBlockedFPR } from 'edgebloom';

before(() => init());

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '../..');
const read = (f) => readFileSync(path.join(root, f), 'utf8');
const sources = (dir, keep) =>
  readdirSync(path.join(root, dir))
    .filter(keep)
    .map((f) => read(path.join(dir, f)))
    .join('\n');
const goSources = (dir) => sources(dir, (f) => f.endsWith('.go') && !f.endsWith('_test.go'));

// A Go constant's value: an integer literal with _ separators, a shift, or
// a product of those, as the front writes its limits.
function goConst(text, name) {
  const m = text.match(new RegExp(`\\b${name}\\s*=\\s*([^\\n/]+)`));
  assert.ok(m, `const ${name}`);
  const expr = m[1].trim().replace(/_/g, '');
  assert.match(expr, /^[\d\s<*]+$/, `${name} = ${expr}: an arithmetic this test reads`);
  return Function(`return ${expr}`)();
}

// The rows of the Markdown table whose header row starts with first.
function table(page, first) {
  const at = page.indexOf(`\n| ${first} |`);
  assert.ok(at >= 0, `a table starting with "| ${first} |"`);
  const rows = [];
  for (const line of page
    .slice(at + 1)
    .split('\n')
    .slice(2)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((c) => c.trim()),
    );
  }
  return rows;
}

const worker = read('worker/README.md');
const front = goSources('worker/front');

test("worker/README.md's Limits are the front's", () => {
  const limits = Object.fromEntries(table(worker, 'what').map(([what, limit]) => [what, limit]));
  const handler = read('worker/front/handler.go');
  const num = (s) => Number(s.replace(/[\s,]/g, ''));
  assert.equal(num(limits['keys in one add or check']), goConst(handler, 'maxKeys'));
  assert.equal(limits['a request body'], `${goConst(handler, 'maxBodyBytes') / 2 ** 20} MiB`);
  assert.equal(num(limits['positions in one merge']), goConst(read('worker/front/merge.go'), 'maxMergePositions'));
  assert.equal(limits['a key'], `${goConst(handler, 'maxKeyBytes') / 2 ** 10} KiB of UTF-8`);
  assert.equal(num(limits['shards of a filter']), goConst(handler, 'maxShards'));
  const shardBits = goConst(read('internal/abi/service.go'), 'MaxShardBits');
  assert.match(
    limits["a shard's bitset"],
    new RegExp(`^2\\^${Math.log2(shardBits)} bits \\(${shardBits / 8 / 2 ** 20} MiB\\)`),
  );
  assert.match(limits['a filter name'], new RegExp(`^1–${goConst(handler, 'maxNameBytes')} characters`));
  const lifetime = read('token/token.go').match(/MaxLifetime = (\d+) \* 24 \* time.Hour/);
  assert.equal(limits["a token's lifetime"], `1 second to ${lifetime[1]} days`);
  assert.equal(
    limits['checkpoints kept'],
    `the last ${goConst(read('internal/abi/service.go'), 'KeptCheckpoints')} of a generation`,
  );
  const bounds = read('worker/front/bounds.go');
  assert.match(read('worker/front/bridge_js.go'), /const requestDeadline = 5 \* time.Minute/);
  assert.equal(limits['a request'], '5 minutes (503 `deadline`)');
  assert.match(bounds, /heavyWait = 10 \* time.Second/);
  assert.equal(
    limits['snapshots, `/changes`, checkpoint deltas and snapshots'],
    `a ${goConst(bounds, 'heavyBudget') / 2 ** 20} MiB budget a front, each request's share weighed from its filter's parameters; up to ${goConst(bounds, 'maxHeavyWaiting')} wait, 10 s at most, then 503 \`busy\`. A checkpoint delta or snapshot the edge cache holds takes no share: only the request that makes one does`,
  );
  assert.match(worker, new RegExp(`Retry-After: ${goConst(bounds, 'heavyRetrySeconds')}`));
  // The same figures where the API table and the errors repeat them.
  assert.match(worker, new RegExp(`at most ${goConst(handler, 'maxShards')};`));
  assert.match(worker, /\| 413 \| `too_many_keys` \| more than 10 000 keys \|/);
});

test("worker/README.md's shard capacity table is the sizing rule at the shard cap", () => {
  const shardBits = goConst(read('internal/abi/service.go'), 'MaxShardBits');
  const maxShards = goConst(read('worker/front/handler.go'), 'maxShards');
  const rows = table(worker, 'error rate');
  assert.equal(rows.length, 3);
  for (const [rate, bitsAKey, keysAShard, keysAtMax] of rows) {
    const p = Number(rate.replace('%', '')) / 100;
    const perKey = -Math.log(p) / Math.LN2 ** 2;
    assert.equal(bitsAKey, perKey.toFixed(2), `bits a key at ${rate}`);
    const count = (s) => {
      const [n, unit] = s.split(' ');
      return Number(n) * { million: 1e6, billion: 1e9 }[unit];
    };
    const perShard = shardBits / perKey;
    const close = (got, want, what) => assert.ok(Math.abs(got - want) / want < 0.005, `${what}: ${got} vs ${want}`);
    close(count(keysAShard), perShard, `keys a shard at ${rate}`);
    close(count(keysAtMax), perShard * maxShards, `keys at ${maxShards} shards at ${rate}`);
  }
});

test("worker/README.md's checkpoint interval is the front's", () => {
  const checkpoints = read('worker/front/checkpoints.go');
  const [row] = table(worker, 'name').filter((r) => r[0] === '`EDGEBLOOM_CHECKPOINT_SECONDS`');
  assert.equal(row[2], String(goConst(checkpoints, 'defaultCheckpointSeconds')));
  assert.match(checkpoints, /v < 1 \|\| v > 86400/);
  assert.match(row[3], /1 to 86 400 seconds/);
  assert.match(worker, new RegExp(`interval plus ${goConst(checkpoints, 'maxLatestSeconds')}\\s+seconds behind`));
});

test("worker/DESIGN.md's edge-cache figures are the front's", () => {
  const design = read('worker/DESIGN.md').replace(/\s+/g, ' ');
  const maxSnapshot = goConst(read('worker/front/checkpoint_cache.go'), 'maxCachedSnapshot');
  assert.match(design, new RegExp(`Snapshots over ${maxSnapshot / 2 ** 20} MiB are not cached`));
  assert.match(read('worker/front/meta.go'), /metaMaxAge = maxLatestSeconds \* time.Second/);
  const seconds = goConst(read('worker/front/checkpoints.go'), 'maxLatestSeconds');
  assert.match(design, new RegExp(`every other front stops within ${seconds} s`));
  assert.match(design, new RegExp(`at most ${seconds} s \\(\`metaMaxAge\`\\)`));
  assert.match(
    design,
    new RegExp(`keeps the last ${goConst(read('internal/abi/service.go'), 'KeptCheckpoints')} checkpoints`),
  );
});

// Codes only the front and its shards speak between themselves, and the
// front's test endpoints' (hooks.go, with EDGEBLOOM_TEST_HOOKS=1).
const internalCodes = new Set(['bad_meta_request', 'bad_shard_request', 'changes_gone', 'gave_up']);

test("worker/README.md's Errors are the codes the service answers, with their statuses", () => {
  const rows = table(worker, 'status');
  const listed = new Map(rows.map(([status, code]) => [code.replace(/`/g, ''), Number(status)]));
  const code =
    front +
    goSources('token') +
    sources('worker/shard', (f) => f.endsWith('.js')) +
    sources('worker/front', (f) => /\.m?js$/.test(f));
  for (const [c] of listed) assert.ok(code.includes(`"${c}"`) || code.includes(`'${c}'`), `${c}: in the code`);
  const status = {
    StatusBadRequest: 400,
    StatusUnauthorized: 401,
    StatusForbidden: 403,
    StatusNotFound: 404,
    StatusMethodNotAllowed: 405,
    StatusConflict: 409,
    StatusGone: 410,
    StatusLengthRequired: 411,
    StatusRequestEntityTooLarge: 413,
    StatusInternalServerError: 500,
    StatusBadGateway: 502,
    StatusServiceUnavailable: 503,
    499: 499,
  };
  const made = [
    ...front.matchAll(/(?:errorf|internalError)\((?:http\.(\w+)|(\d+)), "([a-z_]+)"/g),
    ...front.matchAll(/\{[\w.]+, http\.(\w+), "([a-z_]+)"/g),
  ];
  assert.ok(made.length > 20, 'the front makes its errors as this test reads them');
  for (const m of made) {
    const c = m.at(-1);
    if (internalCodes.has(c)) continue;
    const s = m[2] && m.length === 4 ? Number(m[2]) : status[m[1]];
    assert.ok(listed.has(c), `${c} (answered by the front) is in the Errors table`);
    assert.equal(listed.get(c), s, `${c}'s status`);
  }
});

test("the npm module's size in docs/npm.md and docs/size.md is the build's, and the budget is tools/wasm.mjs's", () => {
  const wasm = path.join(root, 'js/edgebloom.wasm');
  assert.ok(existsSync(wasm), 'js/edgebloom.wasm built (bash build.sh build)');
  const raw = statSync(wasm).size;
  const gzip = gzipSync(readFileSync(wasm), { level: 9 }).length;
  const n = (s) => Number(s.replace(/,/g, ''));
  for (const page of ['docs/npm.md', 'docs/size.md']) {
    const text = read(page).replace(/\s+/g, ' ');
    const m = text.match(/about ([\d,]+) bytes raw and ([\d,]+) (?:gzip -9|gzipped)/);
    assert.ok(m, `${page} gives the engine's size`);
    assert.ok(Math.abs(n(m[1]) - raw) / raw < 0.01, `${page}: ${m[1]} bytes raw; the build: ${raw}`);
    assert.ok(Math.abs(n(m[2]) - gzip) / gzip < 0.01, `${page}: ${m[2]} gzipped; the build: ${gzip}`);
    const b = text.match(
      /over ([\d,]+) bytes raw or ([\d,]+) gzipped|\*\*([\d,]+) bytes raw and ([\d,]+) bytes `gzip -9`\*\*/,
    );
    assert.ok(b, `${page} gives the budget`);
    assert.deepEqual([n(b[1] ?? b[3]), n(b[2] ?? b[4])], [budget.raw, budget.gzip], `${page}'s budget`);
  }
});

test('the sizing figures of README.md and docs/npm.md are what the sizing rules give', () => {
  const readme = read('README.md');
  const m = readme.match(/1 M keys at 1 % false positives: ([\d.]+) bits a key, k = (\d+)/);
  assert.ok(m, "the README's Go quick start gives the sizing");
  const { bits, hashes } = optimal(1_000_000, 0.01);
  assert.equal(m[1], (bits / 1e6).toFixed(1));
  assert.equal(Number(m[2]), hashes);
  const npm = read('docs/npm.md').match(/\/\/ ([\d ]+) blocks, ([\d.]+) bits a key/);
  assert.ok(npm, "docs/npm.md's split-block example gives its size");
  const blocks = optimalBlocks(1_000_000, 0.01);
  assert.equal(Number(npm[1].replace(/ /g, '')), blocks);
  assert.equal(npm[2], ((blocks * 256) / 1e6).toFixed(1));
  assert.ok(estimateBlockedFPR(blocks, 1_000_000) <= 0.0101);
});
