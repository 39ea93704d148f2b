// End to end through "wrangler dev" (dev.sh, what "npm run worker:dev"
// runs) on 127.0.0.1: the API answers, and state persisted under the named
// directory survives a restart.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDev } from '../harness.js';

const dir = mkdtempSync(join(tmpdir(), 'edgebloom-dev-'));
let dev;

after(async () => {
  await dev?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('wrangler dev serves the API and keeps state across a restart', { timeout: 300_000 }, async () => {
  const state = join(dir, 'state');
  const keys = Array.from({ length: 500 }, (_, i) => `https://dev.example/${i}`);
  dev = await startDev(state);
  assert.equal((await dev.request('GET', '/v1/filters/x', undefined, { token: 'wrong' })).status, 401);
  assert.equal((await dev.request('PUT', '/v1/filters/dev', { capacity: 10_000, errorRate: 0.01, shards: 2 })).status, 201);
  const added = await dev.request('POST', '/v1/filters/dev/add', { keys });
  assert.equal(added.status, 200, JSON.stringify(added.json));
  assert.ok(added.json.added.filter(Boolean).length >= 495);
  const stats = (await dev.request('GET', '/v1/filters/dev')).json;
  await dev.stop();

  dev = await startDev(state);
  const checked = await dev.request('POST', '/v1/filters/dev/check', { keys });
  assert.ok(checked.json.present.every(Boolean), 'every key present after the restart');
  assert.deepEqual((await dev.request('GET', '/v1/filters/dev')).json, stats);
  await dev.stop();
  dev = undefined;
});
