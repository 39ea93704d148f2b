// The demo page. Everything a filter does here is done by the npm module,
// loaded through its browser entry (/js/index.js, served by serve.js); the
// page only reads the filter's bytes to draw its bits and counters. Its
// parts: state.js (what they share), format.js (numbers, words, elements),
// params.js (the size from n and p, and its arithmetic), grid.js (the bits),
// charts.js (stats, status, key list, charts), tradeoff.js (the k
// trade-off, with theory.js and measure.js), hashmath.js (how a key
// becomes its positions), actions.js (making, resetting and undoing the
// filter), keys.js and verdict.js (adding, testing, removing keys, and the
// verdict's words), finder.js (made-up keys) and files.js; this file
// wires them to the page and starts the engine.
import { init } from '/js/index.js';
import { $, state } from './state.js';
import { el, setError } from './format.js';
import { SMALL_KEYS, runPatterns } from './patterns.js';
import { showDerived, sizing, updateFields } from './params.js';
import { drawCharts, showStatus } from './charts.js';
import { wireTradeoff } from './tradeoff.js';
import { wireTour } from './tour.js';
import { applyAddress, keepAddress, listLessons, setUpStep } from './lessons.js';
import { showNumbers } from './grid.js';
import { createFilter, resetFilter, setBusy, undo } from './actions.js';
import { addKey, readKey, removeKey, testKey } from './keys.js';
import { bulkInsert, findFalsePositive } from './finder.js';
import { download, openFile } from './files.js';

function guard(field, fn) {
  return (...args) => {
    try {
      return fn(...args);
    } catch (err) {
      setError(field, err.message);
      return undefined;
    }
  };
}

// The action Enter repeats in the key field.
let enter = 'add';
const ENTER_HELP = {
  add: 'Enter adds the key (Enter repeats the last of Add, Test and Remove).',
  test: 'Enter tests the key, as the last button did: it adds nothing.',
  remove: 'Enter removes the key, as the last button did.',
};
function setEnter(action) {
  enter = action;
  $('key-help').textContent = ENTER_HELP[action];
}
// Only a counting filter removes: with another, Enter adds again.
document.addEventListener('filterchange', () => {
  if (enter === 'remove' && state.kind !== 'counting') setEnter('add');
});

// kept reads a choice of the reader's kept across visits (localStorage,
// which a private window may refuse: then the choice lasts the visit).
function kept(name) {
  try {
    return localStorage.getItem(`edgebloom-demo:${name}`) === '1';
  } catch {
    return false;
  }
}
function keep(name, on) {
  try {
    localStorage.setItem(`edgebloom-demo:${name}`, on ? '1' : '0');
  } catch {
    // The choice lasts this visit.
  }
}

// showTogether, on a phone, scrolls the verdict to the top of the screen
// when it and the grid below it are not both in view (above the tour's
// panel, when it is open): the answer and the bits it is about, seen together.
function showTogether() {
  if (!matchMedia('(max-width: 40rem)').matches) return;
  const v = $('verdict').getBoundingClientRect();
  const g = $('grid').getBoundingClientRect();
  const bottom = $('tour').hidden ? window.innerHeight : $('tour').getBoundingClientRect().top;
  if (v.top >= 0 && g.bottom <= bottom) return;
  $('verdict').scrollIntoView({ block: 'start' });
}

function wire() {
  wireTradeoff();
  wireTour({
    setUp: (step) => setUpStep(step).catch((err) => setError('key', err.message)),
    onStep: () => keepAddress(true),
  });
  // The address holds the page as it is: a new filter or a step is a new
  // entry of the history, a key added or removed rewrites the entry on show.
  document.addEventListener('filterchange', () => keepAddress(true));
  document.addEventListener('pagechange', () => keepAddress(false));
  window.addEventListener('popstate', () => applyAddress().catch((err) => setError('key', err.message)));
  // The hash arithmetic is closed until the reader opens it, and stays as
  // they leave it; so do the bit numbers.
  const hm = $('hashmath-box');
  hm.open = kept('hashmath');
  hm.addEventListener('toggle', () => keep('hashmath', hm.open));
  $('numbers').checked = kept('numbers');
  $('numbers').addEventListener('change', () => {
    keep('numbers', $('numbers').checked);
    showNumbers();
  });
  const params = $('params');
  params.addEventListener('input', () => showDerived());
  params.addEventListener('change', (e) => {
    if (e.target.name === 'kind') {
      updateFields();
      showDerived();
    }
    if (e.target.name === 'sizing') {
      updateFields();
      if (sizing() === 'mk') {
        // Start m and k from the current filter, so that switching is smooth.
        if (state.m && !$('m').dataset.touched) {
          $('m').value = String(state.m);
          $('k').value = String(state.k || 1);
        }
      }
      showDerived();
    }
  });
  for (const id of ['m', 'k']) $(id).addEventListener('input', () => ($(id).dataset.touched = '1'));
  params.addEventListener(
    'submit',
    guard('n', (e) => {
      e.preventDefault();
      createFilter();
    }),
  );
  // Enter does what the last of Add, Test and Remove did (Add at first), and
  // says so under the field: after Test it never adds.
  const actions = { add: addKey, test: testKey, remove: removeKey };
  const run = (action) =>
    guard('key', () => {
      setEnter(action);
      const key = readKey();
      if (key === null) return;
      actions[action](key);
      showTogether();
    });
  $('keyform').addEventListener('submit', (e) => {
    e.preventDefault();
    run(enter)();
  });
  for (const action of Object.keys(actions)) $(action).addEventListener('click', run(action));
  // The chips of the key list (charts.js) test their key.
  $('keylist').addEventListener(
    'click',
    guard('key', (e) => {
      const chip = e.target.closest('button[data-key]');
      if (!chip) return;
      $('key').value = chip.dataset.key;
      testKey(chip.dataset.key);
    }),
  );
  $('key').addEventListener('input', () => setError('key'));
  $('findfp').addEventListener('click', () =>
    findFalsePositive()
      .then(showTogether)
      .catch((err) => setError('key', err.message)),
  );
  $('bulk').addEventListener('click', () => bulkInsert().catch((err) => ($('bulk-status').textContent = err.message)));
  $('bulksize').addEventListener('click', () => {
    document.querySelector('input[name="sizing"][value="np"]').checked = true;
    updateFields();
    $('n').value = '1000';
    $('p').value = '1%';
    if (createFilter()) $('bulk-status').textContent = 'An empty filter for 1,000 keys at 1 %: now add 1,000 URLs.';
  });
  $('download').addEventListener('click', guard('file', download));
  $('undo').addEventListener('click', guard('key', undo));
  $('reset').addEventListener('click', guard('key', resetFilter));
  $('small-setup').addEventListener(
    'click',
    guard('key', () => {
      document.querySelector('input[name="kind"][value="classic"]').checked = true;
      document.querySelector('input[name="sizing"][value="mk"]').checked = true;
      updateFields();
      $('n').value = '3';
      $('m').value = '125';
      $('k').value = '4';
      if (!createFilter()) return;
      for (const key of SMALL_KEYS) addKey(key);
      $('patterns-result').replaceChildren(
        el('p', {
          text: `A classic filter of 125 bits and 4 hashes holding ${SMALL_KEYS.join(', ')}. Now run the experiment.`,
        }),
      );
    }),
  );
  $('patterns-run').addEventListener('click', () =>
    runPatterns(setBusy).catch((err) => ($('patterns-result').textContent = err.message)),
  );
  // The charts are drawn a pixel a unit: again when the page's width changes.
  let resized = 0;
  window.addEventListener('resize', () => {
    cancelAnimationFrame(resized);
    resized = requestAnimationFrame(() => state.filter && drawCharts());
  });
  $('file').addEventListener('change', () => {
    const file = $('file').files[0];
    // Forget the choice, so that choosing the same file again reloads it.
    if (file) openFile(file).finally(() => ($('file').value = ''));
  });
}

async function main() {
  wire();
  updateFields();
  showDerived();
  setBusy(true);
  try {
    await init();
  } catch (err) {
    $('status').textContent = `The filter engine did not load: ${err.message}. Reload the page to try again.`;
    return;
  }
  state.ready = true;
  setBusy(false);
  listLessons();
  // A step's set-up may take seconds: the page is ready before it ends.
  applyAddress().catch((err) => setError('key', err.message));
  showStatus();
  document.body.dataset.ready = 'true';
}

main();
