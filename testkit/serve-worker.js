// For the crash tests (worker/test/crash.test.js) and the Go client's (worker/test/go-client.test.js): serves the
// Worker bundle in argv[2] with its state in argv[3], and the bindings of the JSON object argv[4] (optional) in its
// environment, in a Miniflare (workerd) of its own, so that a test can kill the whole process
// group with SIGKILL as a crash would. It prints "ready <worker URL>
// <control URL>"; the control server forwards POST /hook/<object><path> to
// that Durable Object's test hook. Needs EDGEBLOOM_TEST_TOKEN.
import { createServer } from 'node:http';
import { once } from 'node:events';
import { startWorker } from './worker.js';

const w = await startWorker(process.argv[2], process.argv[3], {
  port: 0,
  bindings: JSON.parse(process.argv[4] ?? '{}'),
});
const control = createServer(async (req, res) => {
  const [, object, ...rest] = new URL(req.url, 'http://x').pathname.slice(1).split('/');
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
  try {
    const out = await w.hook(decodeURIComponent(object), '/' + rest.join('/'), body);
    res.writeHead(out.status, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(out.json ?? null));
  } catch (err) {
    res.writeHead(502);
    res.end(String(err));
  }
}).listen(0, '127.0.0.1');
await once(control, 'listening');
console.log(`ready ${w.url} http://127.0.0.1:${control.address().port}`);
