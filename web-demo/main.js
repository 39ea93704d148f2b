// The demo page. Everything a filter does here is done by the npm module,
// loaded through its browser entry (/js/index.js, served by serve.js); the
// page only reads the filter's bytes to draw its bits and counters. Its
// parts: state.js (what they share), format.js (numbers, words, elements),
// params.js (the size from n and p, and its arithmetic), grid.js (the bits),
// charts.js (stats, status, key list, charts), hashmath.js (how a key
// becomes its positions) and actions.js (what the buttons do); this file
// wires them to the page and starts the engine.
import { init } from '/js/index.js';
import { $, state } from './state.js';
import { setError } from './format.js';
import { showDerived, sizing, updateFields } from './params.js';
import { showStatus } from './charts.js';
import {
  addKey,
  bulkInsert,
  createFilter,
  download,
  findFalsePositive,
  openFile,
  readKey,
  removeKey,
  setBusy,
  testKey,
} from './actions.js';

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

function wire() {
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
  $('keyform').addEventListener(
    'submit',
    guard('key', (e) => {
      e.preventDefault();
      const key = readKey();
      if (key !== null) addKey(key);
    }),
  );
  $('test').addEventListener(
    'click',
    guard('key', () => {
      const key = readKey();
      if (key !== null) testKey(key);
    }),
  );
  $('remove').addEventListener(
    'click',
    guard('key', () => {
      const key = readKey();
      if (key !== null) removeKey(key);
    }),
  );
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
  $('findfp').addEventListener('click', () => findFalsePositive().catch((err) => setError('key', err.message)));
  $('bulk').addEventListener('click', () => bulkInsert().catch((err) => ($('bulk-status').textContent = err.message)));
  $('bulksize').addEventListener('click', () => {
    document.querySelector('input[name="sizing"][value="np"]').checked = true;
    updateFields();
    $('n').value = '1000';
    $('p').value = '1%';
    if (createFilter()) $('bulk-status').textContent = 'An empty filter for 1,000 keys at 1 %: now add 1,000 URLs.';
  });
  $('download').addEventListener('click', guard('file', download));
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
  createFilter();
  showStatus();
  document.body.dataset.ready = 'true';
}

main();
