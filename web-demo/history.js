// Undo: before each change, the filter's bytes (toBytes) and what the page
// knows of its keys, so that Undo puts both back exactly. Up to 20 steps,
// and at most 64 MiB of bytes held (at least the last step, whatever its
// size).
import { $, state } from './state.js';

const LIMIT_STEPS = 20;
const LIMIT_BYTES = 64 * 2 ** 20;
const stack = [];

/** snapshot returns the filter on show and the page's record of its keys. */
export function snapshot() {
  return {
    bytes: state.filter.toBytes(),
    fromFile: state.fromFile,
    form: state.form,
    added: state.added,
    keyCounts: new Map(state.keyCounts),
    typedKeys: [...state.typedKeys],
    bulkKeys: state.bulkKeys,
    forced: state.forced,
    removedKeys: new Set(state.removedKeys),
    forcedKeys: new Set(state.forcedKeys),
    bitKeys: new Map([...state.bitKeys].map(([p, keys]) => [p, [...keys]])),
    history: state.history.map((h) => ({ ...h })),
  };
}

/** pushUndo records the page before a change. */
export function pushUndo() {
  if (!state.filter) return;
  stack.push(snapshot());
  let bytes = stack.reduce((a, s) => a + s.bytes.length, 0);
  while (stack.length > 1 && (stack.length > LIMIT_STEPS || bytes > LIMIT_BYTES)) bytes -= stack.shift().bytes.length;
  showUndo();
}

/** popUndo returns the last snapshot, or undefined. */
export function popUndo() {
  const s = stack.pop();
  showUndo();
  return s;
}

/** restoreRecord puts the page's record of keys of snapshot s back (the filter itself is the caller's). */
export function restoreRecord(s) {
  state.fromFile = s.fromFile;
  state.form = s.form;
  state.added = s.added;
  state.keyCounts = s.keyCounts;
  state.typedKeys = s.typedKeys;
  state.bulkKeys = s.bulkKeys;
  state.forced = s.forced;
  state.removedKeys = s.removedKeys;
  state.forcedKeys = s.forcedKeys;
  state.bitKeys = s.bitKeys;
  state.history = s.history;
}

function showUndo() {
  const b = $('undo');
  b.disabled = stack.length === 0 || state.busy;
  b.textContent = stack.length ? `Undo (${stack.length})` : 'Undo';
}

export const undoSteps = () => stack.length;
