// The words of a test's verdict: what the filter answers, and what the page
// knows of the key's history, so that every sentence is true. Pure: no page,
// no engine (web-demo/test runs every history against both answers).

/**
 * The histories a key can have on the page:
 * - added: added on this page (and not removed since as often as added);
 * - removed: added on this page, then removed (Remove);
 * - forced: never added, removed anyway ("Remove anyway" on a counting filter);
 * - file: not added on this page, and the filter was opened from a file,
 *   so the page cannot tell what the file's filter held;
 * - never: never added to this filter.
 */
export const HISTORIES = ['added', 'removed', 'forced', 'file', 'never'];

/** historyOf tells the history of key from what the page recorded (state.js's fields). */
export function historyOf(key, { keyCounts, removedKeys, forcedKeys, fromFile }) {
  if (keyCounts.has(key)) return 'added';
  if (removedKeys.has(key)) return 'removed';
  if (forcedKeys.has(key)) return 'forced';
  if (fromFile) return 'file';
  return 'never';
}

const listOf = (items) =>
  items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;

/**
 * verdict returns the words of a test of key: { head, tone, body, fp }.
 * tone is 'yes', 'no' or 'maybe' (the heading's colour); fp is true when
 * the answer is a false positive the page can explain by the keys that set
 * each position. has is the filter's answer; positions the key's positions;
 * zeros those of them at 0 (when has is false); word 'bit' or 'counter';
 * lostTo the keys removed anyway whose removal lowered one of zeros, when
 * the key was added and now answers "certainly not".
 */
export function verdict({ key, history, has, positions, zeros = [], word = 'bit', lostTo = [], prefix = '' }) {
  const q = `"${key}"`;
  const at = `It looks at ${word}s ${positions.join(', ')}`;
  const named = zeros.length === 1 ? `${word} ${zeros[0]} is 0` : `${word}s ${listOf(zeros.map(String))} are 0`;
  const them = zeros.length === 1 ? 'it' : 'them';
  if (!has) {
    const head = `${prefix}${q}: certainly not in the set.`;
    const bodies = {
      added: `${at}, and ${named} (red). Yet ${q} was added on this page: this is a false negative, the one mistake a Bloom filter is built never to make. ${
        lostTo.length
          ? `Removing ${listOf(lostTo.map((k) => `"${k}"`))} anyway, though never added, took ${them} to 0.`
          : 'A removal of a key never added took ' + them + ' to 0.'
      } That is why a counting filter removes only keys that were added.`,
      removed: `${at}, and ${named} (red). ${q} was added and then removed: its removal took one off each of its ${word}s, and the filter now answers as if it had never been added.`,
      forced: `${at}, and ${named} (red). ${q} was never added; "Remove anyway" took one off each of its ${word}s, so the filter now says no to it.`,
      file: `${at}, and ${named} (red). Adding ${q} would have set ${them}, so ${
        word === 'counter'
          ? "it is not in the file's filter: never added, or removed before the file was saved."
          : 'it was never added to this filter.'
      }`,
      never: `${at}, and ${named} (red). Adding ${q} would have set ${them}, so it was never added.`,
    };
    return { head, tone: 'no', body: bodies[history], fp: false };
  }
  const head = `${prefix}${q}: probably in the set.`;
  const repeats = new Set(positions).size < positions.length ? ' (a position can come up twice)' : '';
  const all = `All of its ${word}s (${positions.join(', ')})${repeats} are set.`;
  switch (history) {
    case 'added':
      return { head, tone: 'yes', body: `${all} And it really is: it was added on this page.`, fp: false };
    case 'removed':
      return {
        head,
        tone: 'maybe',
        body: `${all} But ${q} was removed: other keys still hold each of its ${word}s above 0, so the filter says "probably", a false positive now, as for a key never added.`,
        fp: true,
      };
    case 'forced':
      return {
        head,
        tone: 'maybe',
        body: `${all} But ${q} was never added, and is still a false positive after "Remove anyway": other keys hold each of its ${word}s above 0.`,
        fp: true,
      };
    case 'file':
      return {
        head,
        tone: 'yes',
        body: `${all} This filter was opened from a file, so the page cannot tell whether ${q} was added or is a false positive.`,
        fp: false,
      };
    default:
      return { head, tone: 'maybe', body: `${all} But ${q} was never added: this is a false positive.`, fp: true };
  }
}
