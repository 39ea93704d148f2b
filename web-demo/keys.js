// What the key field's buttons do: add, test and remove a key, and remove
// anyway a key never added (a counting filter's false negative, named). The
// verdict's words come from verdict.js, which knows each key's history.
import { $, BLOCK, bitWord, isDrawable, state } from './state.js';
import { el, fmtInt, keyName, list, setError } from './format.js';
import { highlight, valuesAt } from './grid.js';
import { refresh } from './charts.js';
import { showHashMath } from './hashmath.js';
import { coveringKey } from './theory.js';
import { pushUndo } from './history.js';
import { historyOf, verdict } from './verdict.js';

export function readKey() {
  const key = $('key').value;
  if (key === '') {
    setError('key', 'Type a key first, for example a word or a URL.');
    $('key').focus();
    return null;
  }
  setError('key');
  return key;
}

export function remember(key, positions) {
  state.removedKeys.delete(key);
  state.keyCounts.set(key, (state.keyCounts.get(key) ?? 0) + 1);
  for (const p of new Set(positions)) {
    let keys = state.bitKeys.get(p);
    if (!keys) state.bitKeys.set(p, (keys = []));
    keys.push(key);
  }
}

function forget(key, positions) {
  const c = state.keyCounts.get(key) ?? 0;
  if (c <= 1) state.keyCounts.delete(key);
  else state.keyCounts.set(key, c - 1);
  for (const p of new Set(positions)) {
    const keys = state.bitKeys.get(p);
    const i = keys ? keys.lastIndexOf(key) : -1;
    if (i >= 0) keys.splice(i, 1);
  }
  if (!state.keyCounts.has(key)) {
    state.removedKeys.add(key);
    const i = state.typedKeys.lastIndexOf(key);
    if (i >= 0) state.typedKeys.splice(i, 1);
  }
}

/** say puts parts in the verdict, replacing what it said. */
export function say(...parts) {
  const v = $('verdict');
  v.replaceChildren(...parts);
}

// blockSentence says where a split-block key's bits are; '' for other kinds.
export function blockSentence(positions) {
  if (state.kind !== 'blocked') return '';
  const b = Math.floor(positions[0] / BLOCK);
  return ` All 8 lie in block ${fmtInt(b)} (bits ${fmtInt(BLOCK * b)}–${fmtInt(BLOCK * b + BLOCK - 1)}), one in each of its 32-bit words: one cache line to read.`;
}

export function addKey(key) {
  pushUndo();
  const f = state.filter;
  const positions = f.positions(key);
  const before = valuesAt(f, state.kind, positions);
  const isNew = f.add(key);
  state.added++;
  remember(key, positions);
  state.typedKeys.push(key);
  const seen = new Set();
  const marks = positions.map((p, j) => {
    const cls = before[j] === 0 && !seen.has(p) ? 'new' : 'old';
    seen.add(p);
    return [p, cls];
  });
  const fresh = marks.filter(([, c]) => c === 'new').length;
  refresh();
  highlight(marks);
  $('explain').replaceChildren();
  const w = bitWord();
  const where = `Its ${w}s: ${positions.join(', ')}.`;
  const counting = state.kind === 'counting';
  // A key added before on this page is a duplicate; one that was not but
  // finds all its bits set is a false positive. Either way add() answered
  // false, and a classic or split-block filter did not change.
  const again = (state.keyCounts.get(key) ?? 0) > 1;
  let head;
  let what;
  if (isNew) {
    head = `Added "${key}".`;
    what = counting
      ? `Each of its ${positions.length} counters went up by one: ${fresh} of them had been 0 (green), ${positions.length - fresh} were already above 0 (amber).`
      : `${fresh} of its ${positions.length} ${w}s were 0 and are now 1 (green); ${positions.length - fresh} were already 1 (amber).`;
  } else if (again) {
    head = `Duplicate: "${key}" was already added.`;
    what = counting
      ? `All of its counters were already above 0, so add() answered "already there"; each went up by one more (amber), so that removing "${key}" once still leaves it in.`
      : `All of its ${w}s were already 1 (amber), so add() answered "already there" and the filter did not change.`;
  } else if (state.removedKeys.has(key) || state.forcedKeys.has(key)) {
    const was = state.removedKeys.has(key) ? 'was added and removed before' : 'was never added (only removed anyway)';
    head = `Already there: "${key}" ${was}, yet all its ${w}s were set.`;
    what = `add() answered "already there": other keys hold every one of them${counting ? '; its counters went up by one anyway (amber)' : ', so the filter did not change'}.`;
  } else if (state.fromFile) {
    head = `Already there: all of "${key}"'s ${w}s were set.`;
    what = `add() answered "already there"${counting ? ', and its counters went up by one (amber)' : ', and the filter did not change'}. This filter was opened from a file, so the page cannot tell whether "${key}" was in it or this is a false positive.`;
  } else {
    head = `Already there: "${key}" was never added, yet all its ${w}s were set.`;
    what = counting
      ? `add() answered "already there": a false positive, set by other keys. Its counters went up by one anyway (amber).`
      : `add() answered "already there": a false positive. Other keys had set every one of them (amber), so the filter did not change.`;
  }
  say(
    el('p', { class: `verdict-head${isNew ? '' : ' maybe'}`, text: head }),
    el('p', { text: `${where} ${what}${blockSentence(positions)}` }),
  );
  showHashMath(key, positions);
}

// explain lists, for each probed bit, the keys added on this page that set it.
function explain(key, positions) {
  const box = $('explain');
  const ul = el('ul', { id: 'fplist' });
  for (const p of new Set(positions)) {
    const keys = [...new Set(state.bitKeys.get(p) ?? [])];
    const li = el('li', { 'data-bit': String(p) }, `${bitWord()} ${p}: set by `);
    keys.slice(0, 6).forEach((k, i) => {
      if (i) li.append(', ');
      li.append(keyName(k));
    });
    if (keys.length > 6) li.append(` and ${fmtInt(keys.length - 6)} more`);
    if (!keys.length) li.append('a key not added on this page');
    ul.append(li);
  }
  const cover = coveringKey(
    positions,
    [...state.keyCounts.keys()].map((k) => [k, state.filter.positions(k)]),
  );
  const setters = new Set([...new Set(positions)].flatMap((p) => state.bitKeys.get(p) ?? []));
  const why = cover
    ? `Why the filter says yes to "${key}": one added key, "${cover.key}", set every ${bitWord()} it looks at.`
    : `Why the filter says yes to "${key}": ${setters.size > 1 ? `${fmtInt(setters.size)} different added keys` : 'added keys'} set the ${bitWord()}s it looks at, each a few of them: an ordinary false positive.`;
  const parts = [el('p', { text: why, 'data-mixed': String(!cover) }), ul];
  if (cover) {
    parts.push(
      el(
        'p',
        { class: 'fp', 'data-cover': cover.key },
        cover.same ? 'Its pattern is the same as ' : 'One key set every one of them: ',
        keyName(cover.key),
        cover.same
          ? `'s: a whole-pattern repeat, the rarer kind of false positive, which only a small filter shows often (section 5).`
          : '.',
      ),
    );
  }
  box.replaceChildren(...parts);
}

/** The keys removed anyway whose positions include one of zeros: what took an added key's counters to 0. */
function lostTo(zeros) {
  return [...state.forcedKeys].filter((k) => state.filter.positions(k).some((p) => zeros.includes(p)));
}

export function testKey(key, prefix = '') {
  const f = state.filter;
  $('explain').replaceChildren();
  const history = historyOf(key, state);
  if (!isDrawable(state.kind)) {
    const has = f.has(key);
    say(
      el('p', {
        class: `verdict-head ${has ? 'yes' : 'no'}`,
        text: `${prefix}"${key}": ${has ? 'probably in the set' : 'certainly not in the set'}.`,
      }),
    );
    showHashMath(null);
    return has;
  }
  const positions = f.positions(key);
  showHashMath(key, positions);
  const values = valuesAt(f, state.kind, positions);
  const has = f.has(key);
  const zeros = [...new Set(positions.filter((p, j) => values[j] === 0))];
  highlight(positions.map((p, j) => [p, values[j] ? 'probe' : 'zero']));
  const v = verdict({ key, history, has, positions, zeros, word: bitWord(), lostTo: lostTo(zeros), prefix });
  say(
    el('p', { class: `verdict-head ${v.tone}`, text: v.head, 'data-history': history }),
    el('p', { class: v.fp ? 'fp' : '', text: `${v.body}${blockSentence(positions)}` }),
  );
  if (v.fp) explain(key, positions);
  return has;
}

export function removeKey(key) {
  const f = state.filter;
  $('explain').replaceChildren();
  const positions = f.positions(key);
  if (!f.has(key)) {
    testKey(key);
    $('verdict').append(el('p', { text: 'Nothing to remove.' }));
    return;
  }
  if (!state.keyCounts.has(key) && !state.fromFile) {
    testKey(key);
    const anyway = el('button', { type: 'button', id: 'remove-anyway', text: 'Remove anyway…' });
    anyway.addEventListener('click', () => confirmRemove(key));
    const why = {
      removed: 'it was removed already, as often as it was added',
      forced: 'it was never added (it was removed anyway once already)',
    };
    $('verdict').append(
      el('p', {
        text: `The page will not remove "${key}": ${why[historyOf(key, state)] ?? 'it was never added'}, and taking one off counters that other keys raised could make those keys look absent (a false negative).`,
      }),
      el('div', { class: 'buttons' }, anyway),
    );
    return;
  }
  pushUndo();
  f.remove(key);
  state.added--;
  forget(key, positions);
  refresh();
  highlight(positions.map((p) => [p, 'dec']));
  showHashMath(key, positions);
  say(
    el('p', { class: 'verdict-head', text: `Removed "${key}".` }),
    el('p', {
      text: `Counters ${positions.join(', ')} each went down by one. A classic filter cannot do this: clearing a bit could erase other keys that share it.`,
    }),
  );
}

// confirmRemove asks before removing a key that was never added.
function confirmRemove(key) {
  const yes = el('button', { type: 'button', id: 'confirm-remove', text: `Yes, remove "${key}"` });
  const no = el('button', { type: 'button', id: 'cancel-remove', text: 'Cancel' });
  const box = el(
    'div',
    { class: 'confirm', role: 'group' },
    el('p', {
      text: `Remove "${key}" though it was never added? Each of its counters goes down by one; a counter at 1 that an added key raised goes to 0, and that key will answer "certainly not".`,
    }),
    el('div', { class: 'buttons' }, yes, no),
  );
  box.setAttribute('aria-label', 'Confirm the removal');
  $('remove-anyway').closest('.buttons').replaceWith(box);
  yes.addEventListener('click', () => forceRemove(key));
  no.addEventListener('click', () => {
    box.replaceWith(el('p', { text: `"${key}" was not removed.` }));
    $('key').focus();
  });
  yes.focus();
}

// forceRemove removes a key that was never added, and names the added
// keys that now answer "certainly not", with the counters that fell.
export function forceRemove(key) {
  const f = state.filter;
  const positions = [...new Set(f.positions(key))];
  const before = valuesAt(f, 'counting', positions);
  pushUndo();
  f.remove(key);
  state.forced++;
  state.forcedKeys.add(key);
  const after = valuesAt(f, 'counting', positions);
  const zeroed = new Set(positions.filter((p, j) => before[j] > 0 && after[j] === 0));
  const lost = [...state.keyCounts.keys()].filter((k) => !f.has(k));
  refresh();
  // Purple: went down by one; outlined in red: went to 0 under an added key.
  const cost = new Set(lost.flatMap((k) => f.positions(k)).filter((p) => zeroed.has(p)));
  highlight(positions.map((p) => [p, cost.has(p) ? 'dec lost' : 'dec']));
  $('explain').replaceChildren();
  showHashMath(key, f.positions(key));
  const fell = positions.map((p, j) => `${p} (${before[j]} → ${after[j]})`).join(', ');
  const parts = [
    el('p', {
      class: `verdict-head${lost.length ? ' no' : ''}`,
      text: lost.length
        ? `Removed "${key}" anyway: ${lost.length === 1 ? 'an added key is' : `${lost.length} added keys are`} now a false negative.`
        : `Removed "${key}" anyway.`,
    }),
    el('p', { text: `Counters ${fell} each went down by one (purple).` }),
  ];
  if (lost.length) {
    const ul = el('ul', { id: 'lostlist' });
    for (const k of lost) {
      const at = f.positions(k).filter((p) => zeroed.has(p));
      ul.append(
        el(
          'li',
          { 'data-lost': k },
          keyName(k),
          ` was added, and now answers "certainly not in the set": ${at.length === 1 ? `counter ${at[0]}` : `counters ${list(at.map(String))}`}, which it had raised, fell to 0 (outlined in red).`,
        ),
      );
    }
    parts.push(
      ul,
      el('p', {
        text: 'That is why a counting filter removes only keys that were added: the counters it lowers are then its own.',
      }),
    );
  } else {
    parts.push(
      el('p', {
        text: 'No added key lost its answer this time: every counter it took one from was above 1. Another removal may not be so lucky.',
      }),
    );
  }
  say(...parts);
}
