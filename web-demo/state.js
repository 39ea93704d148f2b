// What every part of the page shares: its limits, the state of the filter on
// show, and a shorthand for elements by id.

export const $ = (id) => document.getElementById(id);

// Up to CELL_LIMIT bits the grid draws one cell per bit; above it, each of
// DENSITY_CELLS cells stands for a run of bits, shaded by how many are set.
export const CELL_LIMIT = 2048;
export const DENSITY_CELLS = 1024;
// The largest filter the page makes or opens: 2^26 bits is 8 MiB as bits
// and 32 MiB as counters, which a phone still handles.
export const MAX_BITS = 2 ** 26;
export const HEADER = 64;
export const PROBES = 1000;
// A split-block filter's block: 8 words of 32 bits.
export const BLOCK = 256;
export const WORD = 32;

export const state = {
  filter: null,
  kind: 'classic',
  m: 0,
  k: 0,
  fromFile: '', // the file name when the filter was opened from a file
  form: null, // the form's choices and fields that made the filter on show (params.js readForm)
  added: 0, // keys added (from a file: its count, then the page's adds and removals)
  keyCounts: new Map(), // key → times added on this page
  typedKeys: [], // keys typed into the page, in order, for the list
  bulkKeys: 0,
  bulkRepeats: 0,
  forced: 0, // removals of keys never added (counting filters: "Remove anyway")
  removedKeys: new Set(), // keys added on this page and then removed (Remove), not added since
  forcedKeys: new Set(), // keys never added that were removed anyway
  bitKeys: new Map(), // position → keys added on this page whose positions include it
  history: [], // chart points: { n, fill, est, measured }
  cells: [],
  density: false,
  block: -1, // split-block filters above CELL_LIMIT bits: the one block the grid shows
  highlight: new Map(), // cell index → class
  busy: false,
  ready: false, // the engine is loaded
};

// Classic, counting and split-block filters are drawn bit by bit; scalable filters
// (layers) and sharded containers (a Worker's snapshot) only answer queries.
export function isDrawable(kind) {
  return kind === 'classic' || kind === 'counting' || kind === 'blocked';
}

export function bitWord() {
  return state.kind === 'counting' ? 'counter' : 'bit';
}
