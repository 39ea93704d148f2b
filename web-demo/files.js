// Files: download the filter on show, and open one written anywhere (a
// filter or a Worker's sharded snapshot), its bytes checked first.
import { fromBytes } from '/js/index.js';
import { $, MAX_BITS, state } from './state.js';
import { FILE_ERRORS, el, fmtBytes, fmtInt, fmtRate, setError } from './format.js';
import { pushUndo } from './history.js';
import { useFilter } from './actions.js';

export function download() {
  const s = state.filter.stats();
  const blob = new Blob([state.filter.toBytes()], { type: 'application/octet-stream' });
  const a = el('a', {
    href: URL.createObjectURL(blob),
    download: `edgebloom-${s.kind}-m${s.bits}-k${s.hashes}-n${s.count}.bloom`,
  });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
}

// startsLikeFilter tells whether bytes start as a filter ("EBLM") or a
// sharded snapshot ("EBSC") does, or are too short to tell: an empty file,
// or one that starts otherwise, is no filter, however long.
export function startsLikeFilter(bytes) {
  const head = String.fromCharCode(...bytes.subarray(0, 4));
  return bytes.length > 0 && ['EBLM', 'EBSC'].some((magic) => magic.startsWith(head));
}

export async function openFile(file) {
  setError('file');
  const info = $('fileinfo');
  info.replaceChildren();
  let filter;
  try {
    const bytes = new Uint8Array(await file.arrayBuffer());
    if (!startsLikeFilter(bytes)) throw Object.assign(new Error('not a filter'), { code: 'ERR_NOT_FILTER' });
    filter = fromBytes(bytes, { maxBits: MAX_BITS });
  } catch (err) {
    setError('file', FILE_ERRORS[err.code] ?? `This file cannot be opened: ${err.message}`);
    info.replaceChildren();
    return;
  }
  pushUndo();
  useFilter(filter, file.name);
  const s = filter.stats();
  info.replaceChildren();
  const rows = [
    ['File', `${file.name} (${fmtBytes(file.size)})`],
    ['Kind', s.kind],
    ['Bits m', fmtInt(s.bits)],
    ['Hashes k', s.kind === 'scalable' ? `per layer (${s.layers} layers)` : fmtInt(s.hashes)],
    ['Keys added', fmtInt(s.count)],
    ['Capacity', s.capacity ? fmtInt(s.capacity) : 'not recorded'],
    ['Target rate', s.errorRate ? fmtRate(s.errorRate) : 'not recorded'],
  ];
  for (const [t, d] of rows) info.append(el('dt', { text: t }), el('dd', { text: d }));
}
