// The experiment "a small filter repeats whole patterns": how many patterns
// of positions m bits allow, the filter's exact rate against the formula,
// and a fresh key found that lands on exactly an added key's positions.
import { $, state } from './state.js';
import { el, fmtInt, fmtRate, keyName, withSup } from './format.js';
import { PATTERN_LIMIT, distinctPatterns, patternKey, startPairs, theta } from './theory.js';
import { freshKeys } from './measure.js';
import { addedPatterns, exactNow } from './nowrate.js';

/** At most this many fresh keys are tried for a repeated pattern. */
export const SEARCH_LIMIT = 2_000_000;

const tick = () => new Promise((r) => setTimeout(r, 0));

function say(...parts) {
  $('patterns-result').replaceChildren(...parts);
}

/** runPatterns runs the experiment on the filter on show; setBusy guards the page meanwhile. */
export async function runPatterns(setBusy) {
  const box = $('patterns-result');
  const { kind, m, k } = state;
  const f = state.filter;
  if (!(kind === 'classic' || kind === 'counting')) {
    say(el('p', { text: 'The experiment needs a classic or counting filter: they draw positions by double hashing.' }));
    return;
  }
  const patterns = addedPatterns();
  if (!patterns.size) {
    say(
      el('p', {
        text: 'Add a few keys on this page first (three are enough), or make the 125-bit filter with 3 keys.',
      }),
    );
    return;
  }
  box.dataset.state = 'running';
  setBusy(true);
  try {
    say(el('p', { text: 'Counting patterns…' }));
    await tick();
    const pairs = startPairs(m);
    const distinct = distinctPatterns(m, k);
    const parts = [
      el('p', {
        'data-pairs': String(pairs),
        text:
          `At m = ${fmtInt(m)}: m² = ${fmtInt(pairs)} start pairs (x, y), ` +
          (distinct === null
            ? `each a pattern of k = ${k} positions (the page counts the distinct ones up to m = ${PATTERN_LIMIT}).`
            : `giving ${fmtInt(distinct)} distinct patterns of k = ${k} positions${distinct < pairs ? ' (some pairs set the same bits in another order, or repeat one)' : ''}.`),
      }),
    ];
    const n = patterns.size;
    const exact = exactNow(patterns);
    if (exact) {
      parts.push(
        el(
          'p',
          {},
          ...withSup(
            `With the ${fmtInt(n)} ${n === 1 ? 'key' : 'keys'} added here, the formula (1 − e^(−kn/m))^k says ${fmtRate(theta(m, k, n))}; exactly, ${fmtRate(exact.rate)} of the start pairs have every position set, and ${fmtRate(exact.repeats)} are the added keys' own patterns: a fresh key that draws one is a false positive however few bits are set.`,
          ),
        ),
      );
    }
    say(...parts, el('p', { text: 'Trying fresh keys…' }));
    let tried = 0;
    let fps = 0;
    let repeats = 0;
    let found = null;
    while (!found && tried < SEARCH_LIMIT) {
      const batch = freshKeys(20_000, 'fresh:');
      const hits = f.hasMany(batch);
      for (let i = 0; i < batch.length; i++) {
        if (!hits[i]) continue;
        fps++;
        const pos = f.positions(batch[i]);
        const same = patterns.get(patternKey(pos));
        if (same !== undefined) {
          repeats++;
          if (!found) found = { key: batch[i], same, pos, at: tried + i + 1 };
        }
      }
      tried += batch.length;
      if (!found) {
        say(...parts, el('p', { text: `Trying fresh keys… ${fmtInt(tried)} so far.` }));
        await tick();
      }
    }
    if (found) {
      const where = [...new Set(found.pos)].sort((a, b) => a - b).join(', ');
      parts.push(
        el(
          'p',
          { class: 'result-head', 'data-repeat': found.key, 'data-of': found.same },
          keyName(found.key),
          ' has the same pattern as ',
          keyName(found.same),
          `: bits ${where}.`,
        ),
        el('p', {
          text: `Found after ${fmtInt(found.at)} fresh keys. Of the ${fmtInt(tried)} tried, ${fmtInt(fps)} were false positives, ${fmtInt(repeats)} of them a whole pattern repeated: one added key set every bit they look at.`,
        }),
      );
    } else {
      parts.push(
        el('p', {
          text: `No fresh key of ${fmtInt(tried)} repeated an added key's pattern (${fmtInt(fps)} false positives): at m = ${fmtInt(m)} a repeat has odds of about ${fmtRate(n / pairs)} a key. Try a smaller filter.`,
        }),
      );
    }
    say(...parts);
  } finally {
    box.dataset.state = 'done';
    setBusy(false);
  }
}

/** The keys of the small-filter lesson: three news URLs, as in a crawler's seen-set. */
export const SMALL_KEYS = ['news.example/1', 'news.example/2', 'news.example/3'];
