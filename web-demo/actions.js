// Making and replacing the filter on show: a new one from the form, one
// opened (files.js), Reset and Undo; and the page's busy state. The keys'
// buttons are keys.js's, the made-up keys finder.js's, files files.js's.
import { BloomFilter, CountingBloomFilter, BlockedBloomFilter, fromBytes } from '/js/index.js';
import { $, BLOCK, MAX_BITS, isDrawable, state } from './state.js';
import { el, fmtSI, setError } from './format.js';
import { chosenKind, readForm, showDerived, sizing, writeForm } from './params.js';
import { buildGrid } from './grid.js';
import { refresh } from './charts.js';
import { showHashMath } from './hashmath.js';
import { syncTradeoff } from './tradeoff.js';
import { popUndo, pushUndo, restoreRecord, undoSteps } from './history.js';
import { say } from './keys.js';

// ---------- making and replacing the filter ----------

// forgetKeys empties what the page knows of the keys added (which set each
// bit, what was typed, the log): a new filter, or one reset, starts bare.
function forgetKeys() {
  state.keyCounts = new Map();
  state.typedKeys = [];
  state.bulkKeys = 0;
  state.forced = 0;
  state.removedKeys = new Set();
  state.forcedKeys = new Set();
  state.bitKeys = new Map();
  state.highlight = new Map();
  state.history = [];
}

export function useFilter(filter, fromFile = '', plannedN = 0) {
  state.filter?.free();
  state.filter = filter;
  const s = filter.stats();
  state.kind = s.kind;
  state.m = s.bits;
  state.k = s.hashes;
  state.fromFile = fromFile;
  state.added = s.count;
  forgetKeys();
  buildGrid();
  refresh();
  $('verdict').replaceChildren();
  $('explain').replaceChildren();
  showHashMath(null);
  $('bulk-status').textContent = '';
  $('findfp').disabled = !isDrawable(s.kind);
  syncTradeoff(plannedN || s.capacity);
  if (fromFile) state.form = { kind: s.kind, sizing: 'mk', m: String(s.bits), k: String(s.hashes) };
  // main.js: Enter's action, and the address.
  document.dispatchEvent(new CustomEvent('filterchange'));
}

export function createFilter() {
  const params = showDerived();
  if (!params) return false;
  const { m, k, n, p } = params;
  if (m > MAX_BITS) {
    const msg = `That needs ${fmtSI(m, 'bits')}; this page makes filters up to ${fmtSI(MAX_BITS, 'bits')}.`;
    setError(sizing() === 'np' ? 'n' : 'm', `${msg} ${sizing() === 'np' ? 'Lower n or raise p.' : 'Lower m.'}`);
    return false;
  }
  const kind = chosenKind();
  const Class = { counting: CountingBloomFilter, blocked: BlockedBloomFilter }[kind] ?? BloomFilter;
  let opts = sizing() === 'np' ? { capacity: n, errorRate: p } : { bits: m, hashes: k };
  if (kind === 'blocked' && sizing() === 'mk') opts = { blocks: m / BLOCK };
  pushUndo();
  state.form = readForm();
  useFilter(new Class(opts), '', n);
  return true;
}

// ---------- reset and undo ----------

/** resetFilter empties the filter on show, keeping its size (undoable). */
export function resetFilter() {
  pushUndo();
  state.filter.clear();
  state.fromFile = '';
  state.added = 0;
  forgetKeys();
  refresh();
  say(
    el('p', {
      class: 'verdict-head',
      text: 'Reset: the filter is empty again, with the same size. Undo brings the keys back.',
    }),
  );
  $('explain').replaceChildren();
  showHashMath(null);
}

/** undo puts back the filter and the page's record of its keys as they were before the last change. */
export function undo() {
  const s = popUndo();
  if (!s) return;
  const filter = fromBytes(s.bytes, { maxBits: MAX_BITS });
  useFilter(filter, s.fromFile, filter.capacity || s.added);
  restoreRecord(s);
  if (state.form) writeForm(state.form);
  refresh({ recordPoint: false });
  say(
    el('p', {
      class: 'verdict-head',
      text: `Undone: the filter is as it was before the last change${undoSteps() ? ` (${undoSteps()} more ${undoSteps() === 1 ? 'step' : 'steps'} to undo)` : ''}.`,
    }),
  );
}

export function setBusy(busy) {
  state.busy = busy;
  for (const id of [
    'create',
    'bulk',
    'bulksize',
    'findfp',
    'add',
    'test',
    'remove',
    'file',
    'download',
    'small-setup',
    'patterns-run',
  ])
    $(id).disabled = busy;
  if (busy) document.body.setAttribute('aria-busy', 'true');
  else document.body.removeAttribute('aria-busy');
  if (!busy) $('findfp').disabled = !isDrawable(state.kind);
  $('undo').disabled = busy || undoSteps() === 0;
}
