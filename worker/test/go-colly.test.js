// The Colly storage on the service (colly/bloomstorage, NewService) against
// the Worker in workerd: the Worker built as the tests build it, served on
// 127.0.0.1 by a Miniflare of its own (testkit's serveProcess), and the Go
// tests of colly/bloomstorage/service_test.go (build tag workerd) run
// against it: crawls with Colly's queue and with Run, two collectors on one
// filter, an add whose answer was lost, a shard made unreachable, and the
// resume tests (MaxRequests, Close, a child crawl killed with SIGKILL) on
// the service storage.
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
  dir = mkdtempSync(join(tmpdir(), 'edgebloom-go-colly-'));
  buildWorker(join(dir, 'bundle'));
  w = await serveProcess(join(dir, 'bundle'), join(dir, 'state'));
});

after(async () => {
  await w?.kill();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('the Colly storage on the Worker in workerd (go test -tags workerd ./bloomstorage/)', async () => {
  const { code, out } = await goTestAgainst(w, join(repoRoot, 'colly'), [
    '-run',
    'TestService|TestResume(MaxRequests|Close|Killed)$/service',
    './bloomstorage/',
  ]);
  assert.equal(code, 0, `go test failed:\n${out.slice(-4000)}`);
  // The service's tests ran, not only the unit tests.
  for (const t of ['TestServiceShardUnavailable', 'TestServiceLostAnswer', 'TestResumeKilled/service'])
    assert.match(out, new RegExp(`--- PASS: ${t}`));
});
