// The corpora of the JavaScript benchmark: made by the Go benchmarks' own
// generator (../urls.go and ../intl.go, through ../cmd/corpus), so that both
// measure the very same URLs in the same order: crawl, crawler-like ASCII
// URLs, and intl, where about three quarters hold non-ASCII characters.
//
// Each URL is sliced out of the generator's output as its own flat string
// (one-byte for crawl, UTF-8 decoded for intl), never a rope of
// concatenations, so no library pays for flattening inside a timed loop.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const benchDir = fileURLToPath(new URL('..', import.meta.url));

/**
 * The corpus kind ('crawl' or 'intl') for filters of n keys: the n present
 * URLs, the never-added ones that measure the false-positive rate, the probe
 * mix of the has benchmarks (each one of present, the same string, or the
 * absent URL of its position) and how many of the mix are present, and the
 * bytes of the present URLs.
 */
export function loadCorpus(kind, n) {
  const out = execFileSync('go', ['run', './cmd/corpus', '-kind', kind, '-n', String(n)], {
    cwd: benchDir,
    maxBuffer: 2 ** 32,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let at = out.indexOf(10);
  const [count, absentCount] = out.latin1Slice(0, at).split(' ').map(Number);
  const slice = kind === 'intl' ? (s, e) => out.utf8Slice(s, e) : (s, e) => out.latin1Slice(s, e);
  const lines = (k) => {
    const a = new Array(k);
    for (let j = 0; j < k; j++) {
      const s = at + 1;
      at = out.indexOf(10, s);
      a[j] = slice(s, at);
    }
    return a;
  };
  const start = at + 1;
  const present = lines(count);
  const bytes = at + 1 - start - count;
  const absent = lines(absentCount);
  let inMix = 0;
  const mix = lines(absentCount).map((line, j) => {
    if (line === 'a') return absent[j];
    inMix++;
    return present[Number(line)];
  });
  return { present, absent, mix, inMix, bytes };
}
