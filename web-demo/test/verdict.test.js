// The words of a test's verdict (verdict.js) for every history a key can
// have on the page against both answers of the filter: each sentence true.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HISTORIES, historyOf, verdict } from '../verdict.js';

const positions = [3, 17, 17, 29];
const say = (history, has, extra = {}) =>
  verdict({ key: 'apple', history, has, positions, zeros: has ? [] : [17], word: 'counter', ...extra });

test('historyOf reads the page record: added, removed, removed anyway, from a file, never', () => {
  const record = (over = {}) => ({
    keyCounts: new Map(),
    removedKeys: new Set(),
    forcedKeys: new Set(),
    fromFile: '',
    ...over,
  });
  assert.equal(historyOf('apple', record({ keyCounts: new Map([['apple', 1]]) })), 'added');
  assert.equal(historyOf('apple', record({ removedKeys: new Set(['apple']) })), 'removed');
  assert.equal(historyOf('apple', record({ forcedKeys: new Set(['apple']) })), 'forced');
  assert.equal(historyOf('apple', record({ fromFile: 'x.bloom' })), 'file');
  assert.equal(historyOf('apple', record()), 'never');
  // Added on the page after the file was opened: the page knows.
  assert.equal(historyOf('apple', record({ fromFile: 'x.bloom', keyCounts: new Map([['apple', 2]]) })), 'added');
});

test('every history against both answers: the heading is the answer, and no sentence contradicts the history', () => {
  for (const history of HISTORIES) {
    for (const has of [true, false]) {
      const v = say(history, has, { lostTo: ['never-7'] });
      const where = `${history} × ${has ? 'yes' : 'no'}`;
      assert.equal(v.head, `"apple": ${has ? 'probably' : 'certainly not'} in the set.`, where);
      assert.equal(v.tone === 'no', !has, where);
      assert.match(
        v.body,
        has ? /All of its counters \(3, 17, 17, 29\) \(a position can come up twice\) are set/ : /counter 17 is 0/,
        where,
      );
      // Only a key the page never saw added may be called never added.
      if (history === 'added' || history === 'removed')
        assert.doesNotMatch(v.body, /"apple" was never added|so it was never added|would have set/, where);
      // A false positive is only ever claimed of a key not in the set now.
      if (/this is a false positive|a false positive now|still a false positive/.test(v.body))
        assert.ok(has && history !== 'added' && history !== 'file', where);
      assert.equal(v.fp, has && ['removed', 'forced', 'never'].includes(history), where);
    }
  }
});

test('an added key that answers "certainly not" is a false negative, named with the removal that caused it', () => {
  const v = say('added', false, { lostTo: ['never-7'] });
  assert.match(v.body, /was added on this page: this is a false negative/);
  assert.match(v.body, /Removing "never-7" anyway, though never added, took it to 0\./);
  const two = verdict({
    key: 'apple',
    history: 'added',
    has: false,
    positions,
    zeros: [3, 29],
    word: 'counter',
    lostTo: ['a', 'b'],
  });
  assert.match(two.body, /counters 3 and 29 are 0 \(red\)/);
  assert.match(two.body, /Removing "a" and "b" anyway, though never added, took them to 0\./);
});

test('a key removed after it was added: "no" says it was removed, "yes" is a false positive now', () => {
  assert.match(say('removed', false).body, /"apple" was added and then removed: its removal took one off each/);
  const yes = say('removed', true);
  assert.equal(yes.tone, 'maybe');
  assert.match(yes.body, /But "apple" was removed: other keys still hold each of its counters above 0/);
});

test('a key never added: "no" because adding it would have set the zero, "yes" a false positive', () => {
  assert.match(say('never', false).body, /Adding "apple" would have set it, so it was never added\./);
  assert.match(say('never', true).body, /But "apple" was never added: this is a false positive\./);
  assert.match(say('forced', false).body, /was never added; "Remove anyway" took one off each of its counters/);
  assert.match(say('forced', true).body, /still a false positive after "Remove anyway"/);
});

test('a filter opened from a file: the page cannot tell a key in it from a false positive', () => {
  assert.match(say('file', true).body, /opened from a file, so the page cannot tell whether "apple" was added/);
  assert.match(say('file', false).body, /never added, or removed before the file was saved/);
  const bits = verdict({ key: 'apple', history: 'file', has: false, positions, zeros: [17], word: 'bit' });
  assert.match(
    bits.body,
    /bit 17 is 0 \(red\)\. Adding "apple" would have set it, so it was never added to this filter\./,
  );
});

test('a prefix (the finder\'s "Found after n tries: ") leads the heading', () => {
  assert.equal(
    say('never', true, { prefix: 'Found after 3 tries: ' }).head,
    'Found after 3 tries: "apple": probably in the set.',
  );
});
