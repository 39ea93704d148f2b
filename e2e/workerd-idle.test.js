// The engine survives what workerd does to it: performance.now() and
// Date.now() stand still outside I/O, and inside FinalizationRegistry
// callbacks performance.now() reads 0. A Worker keeps one filter across
// requests and drops another without free(); garbage collection runs the
// dropped one's finalizer, whose free() runs Go. Go's runtime aborts
// ("fatal error: stopTheWorld: broken CPU time accounting") when the time
// its glue hands it reads 0, which killed the engine and the kept filter.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { cleanup, repoRoot, tempDir, timeout, writeFiles } from '../testkit/process.js';
import { startMiniflare } from '../testkit/workerd.js';
import { assertWorkerdBundle, compatibilityDate, linkPackage } from './helpers.js';

after(cleanup);

// GET /setup makes the kept filter and drops a 1.2 MB one unfreed (free()
// of a filter of 64 KiB or more collects garbage in Go, which stops the
// world). GET /churn allocates and drops JS garbage so that V8 collects,
// and answers how many dropped filters the holder's own registry saw go.
// GET /kept asks the kept filter for every key it holds. The holder is the
// Worker's global scope, or (paths under /do/) a Durable Object.
const workerSource = `
import { DurableObject } from 'cloudflare:workers';
import { init, BloomFilter } from 'edgebloom';

const keys = Array.from({ length: 2000 }, (_, i) => 'https://example.com/kept/' + i);

class Holder {
  seen = new FinalizationRegistry(() => { this.gone++; });
  gone = 0;
  kept = null;

  async handle(pathname) {
    try {
      if (pathname === '/setup') {
        await init();
        this.kept = new BloomFilter({ capacity: 10000, errorRate: 0.01 });
        this.kept.addMany(keys);
        this.drop();
        return { ok: true };
      }
      if (pathname === '/churn') {
        let sink;
        for (let round = 0; round < 20; round++) {
          sink = Array.from({ length: 50000 }, (_, i) => ({ i, s: 'garbage ' + i }));
        }
        return { gone: this.gone, sink: sink.length };
      }
      if (pathname === '/kept') {
        const present = this.kept.hasMany(keys).filter(Boolean).length;
        return { present, of: keys.length, added: this.kept.add('https://example.com/new') };
      }
    } catch (err) {
      return { error: err.code ?? String(err) };
    }
    return { error: 'not found' };
  }

  drop() {
    const dropped = new BloomFilter({ capacity: 1000000, errorRate: 0.01 });
    dropped.add('dropped');
    this.seen.register(dropped, 0);
  }
}

const global = new Holder();

export class HolderObject extends DurableObject {
  holder = new Holder();
  async fetch(request) {
    return Response.json(await this.holder.handle(new URL(request.url).pathname));
  }
}

export default {
  async fetch(request, env) {
    const { pathname } = new URL(request.url);
    if (pathname.startsWith('/do/')) {
      return env.HOLDER.get(env.HOLDER.idFromName('one')).fetch('http://do' + pathname.slice(3));
    }
    return Response.json(await global.handle(pathname));
  },
};
`;

test(
  'workerd: a kept filter still answers after a dropped one was finalized and the isolate idled, at global scope and in a Durable Object',
  { timeout },
  async () => {
    const dir = await tempDir('workerd-idle');
    const config = {
      name: 'edgebloom-e2e-idle',
      main: 'src/index.js',
      compatibility_date: compatibilityDate,
      compatibility_flags: [],
    };
    await writeFiles(dir, {
      'package.json': { name: 'edgebloom-e2e-idle', private: true, type: 'module' },
      'wrangler.jsonc': config,
      'src/index.js': workerSource,
    });
    await linkPackage(dir);
    const bundle = await assertWorkerdBundle(dir, repoRoot);
    const mf = await startMiniflare(bundle, config, { durableObjects: { HOLDER: 'HolderObject' } });
    const get = async (path) => (await mf.dispatchFetch(`http://worker${path}`)).json();
    for (const at of ['', '/do']) {
      assert.deepEqual(await get(`${at}/setup`), { ok: true }, at);
      let rounds = 0;
      for (; rounds < 200 && (await get(`${at}/churn`)).gone === 0; rounds++);
      assert.ok(rounds < 200, `${at}: the dropped filter was never collected`);
      // The package's registry may run its callback after the holder's.
      for (let i = 0; i < 5; i++) await get(`${at}/churn`);
      assert.deepEqual(await get(`${at}/kept`), { present: 2000, of: 2000, added: true }, at);
    }
    // Then idle, as an isolate between requests: Go's runtime has timers of
    // its own (its background scavenger) that fire meanwhile and read the
    // clock.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    for (const at of ['', '/do']) {
      await get(`${at}/churn`);
      assert.deepEqual(await get(`${at}/kept`), { present: 2000, of: 2000, added: false }, at);
    }
  },
);
