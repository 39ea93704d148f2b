// The Go client (client/) against the Worker in workerd: the Worker built
// as the tests build it, served on 127.0.0.1 by a Miniflare of its own
// (testkit's serveProcess) with a checkpoint a second, and the Go tests of
// client/service_test.go (build tag workerd) run against it, with the
// service's URL, its secret and the control server that reaches the Durable
// Objects' test hooks (a shard made unreachable) in their environment.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../../testkit/process.js';
import { buildWorker, goTestAgainst, serveProcess } from '../../testkit/worker.js';

let dir;
let w;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edgebloom-go-client-'));
  buildWorker(join(dir, 'bundle'));
  w = await serveProcess(join(dir, 'bundle'), join(dir, 'state'), {
    bindings: { EDGEBLOOM_CHECKPOINT_SECONDS: '1' },
  });
});

after(async () => {
  await w?.kill();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('the Go client against the Worker in workerd (go test -tags workerd ./client/)', async () => {
  const { code, out } = await goTestAgainst(w, repoRoot, ['./client/']);
  assert.equal(code, 0, `go test failed:\n${out.slice(-4000)}`);
  // The service's tests ran, not only the unit tests.
  assert.match(out, /--- PASS: TestServiceCopyDeletePut/);
});
