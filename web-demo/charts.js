// What the filter holds now: its statistics, the status line, the keys added
// on the page, and the two charts of fill and false-positive rate.
import { $, BLOCK, PROBES, bitWord, isDrawable, state } from './state.js';
import { el, fmtInt, fmtPercentTick, fmtRate, kindName, sizeNote } from './format.js';
import { theoryFPR } from './params.js';
import { paintGrid } from './grid.js';
import { scheduleNow } from './nowrate.js';

function showStats() {
  const f = state.filter;
  const s = f.stats();
  const dl = $('stats');
  dl.replaceChildren();
  const unit = s.kind === 'counting' ? 'counters' : 'bits';
  const rows = [
    ['Kind', s.kind + (state.fromFile ? ` (opened from ${state.fromFile})` : '')],
    [`Size m`, `${fmtInt(s.bits)} ${unit}`],
    ['Hashes k', s.kind === 'scalable' ? 'per layer' : fmtInt(s.hashes)],
    [
      'Keys added',
      fmtInt(state.added) +
        (s.count !== state.added
          ? ` (the filter counts ${fmtInt(s.count)}: an add whose ${bitWord()}s were all set already does not count${state.forced ? ', and each removal of a key never added took one off' : ''})`
          : ''),
    ],
    [`${unit[0].toUpperCase()}${unit.slice(1)} set`, `${fmtInt(s.setBits)} (${fmtRate(s.fillRatio)})`],
    [`Keys estimated from the ${unit} set`, s.estimatedCount.toFixed(1)],
    ['False-positive rate now', fmtRate(s.estimatedErrorRate)],
  ];
  if (s.errorRate) rows.push(['Target rate', fmtRate(s.errorRate)]);
  if (s.capacity)
    rows.push([
      'Capacity',
      fmtInt(s.capacity) + (s.overCapacity ? ' — over capacity: false positives are now more likely than planned' : ''),
    ]);
  if (s.kind === 'scalable') rows.push(['Layers', fmtInt(s.layers)]);
  if (s.kind === 'blocked') rows.push(['Blocks', `${fmtInt(s.bits / BLOCK)} of 256 bits`]);
  if (s.kind === 'sharded') rows.push(['Shards', fmtInt(s.layers)]);
  rows.push(['Saved size', sizeNote(s)]);
  for (const [t, d] of rows) dl.append(el('dt', { text: t }), el('dd', { text: d, 'data-name': t }));
  return s;
}

// showStatus says in one line what filter the page holds now.
export function showStatus(s = state.filter.stats()) {
  const unit = s.kind === 'counting' ? 'counters' : 'bits';
  const size =
    s.kind === 'scalable' || s.kind === 'sharded'
      ? `${fmtInt(s.bits)} ${unit} in all`
      : `${fmtInt(s.bits)} ${unit} and ${fmtInt(s.hashes)} ${s.hashes === 1 ? 'hash' : 'hashes'}`;
  const keys = `${fmtInt(state.added)} ${state.added === 1 ? 'key' : 'keys'}`;
  let text;
  if (state.fromFile) {
    text = `Opened ${state.fromFile}: a ${kindName(s.kind)} filter with ${keys}. Test keys in section 2.`;
  } else if (state.added === 0) {
    text = `Ready: an empty ${kindName(s.kind)} filter of ${size}. Type a key below and press Enter.`;
  } else {
    text = `A ${kindName(s.kind)} filter of ${size}, holding ${keys}: ${fmtRate(s.fillRatio)} of its ${unit} are set.`;
  }
  $('status').textContent = text;
}

function showKeys() {
  const ul = $('keylist');
  ul.replaceChildren();
  let total = 0;
  for (const c of state.keyCounts.values()) total += c;
  $('keycount').textContent = fmtInt(total);
  const shown = state.typedKeys.slice(-40);
  for (const key of shown) {
    // main.js tests the key of a chip that is clicked (data-key).
    // A counting filter's key lost by a removal of a key never added.
    const lost = state.kind === 'counting' && !state.filter.has(key);
    const b = el('button', { type: 'button', class: lost ? 'chip lost' : 'chip', text: key });
    b.setAttribute('aria-label', lost ? `Test ${key} (added, now a false negative)` : `Test ${key}`);
    b.dataset.key = key;
    ul.append(el('li', {}, b));
  }
  if (state.typedKeys.length > shown.length)
    ul.append(el('li', { text: `… and ${fmtInt(state.typedKeys.length - shown.length)} earlier` }));
  if (state.bulkKeys) ul.append(el('li', { text: `and ${fmtInt(state.bulkKeys)} crawler URLs` }));
}

export function randomWord() {
  const a = new Uint32Array(2);
  crypto.getRandomValues(a);
  return (a[0].toString(36) + a[1].toString(36)).slice(0, 10);
}

// measure tests PROBES keys never added and returns the share reported present.
function measure() {
  const probes = [];
  while (probes.length < PROBES) {
    const key = `probe:${randomWord()}`;
    if (!state.keyCounts.has(key)) probes.push(key);
  }
  return state.filter.hasMany(probes).filter(Boolean).length / PROBES;
}

function record(s) {
  state.history.push({ n: state.added, fill: s.fillRatio, est: s.estimatedErrorRate, measured: measure() });
  if (state.history.length > 400) state.history.splice(1, 1);
}

const SVG = 'http://www.w3.org/2000/svg';
export function svg(tag, attrs, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

function niceMax(x) {
  const p = 10 ** Math.floor(Math.log10(x));
  for (const s of [1, 2, 2.5, 5, 10]) if (s * p >= x) return s * p;
  return 10 * p;
}

// drawChart draws series of { points: [[x, y]], cls, dots } on an SVG.
// One unit of the drawing is a pixel of the screen (280 to 720 wide), so that
// its 16 px text (style.css) is 16 px on a projector and on a phone alike.
function drawChart(node, { xmax, log, ymin, ymax, yticks, series, label }) {
  const W = Math.round(Math.min(720, Math.max(280, node.clientWidth || 320)));
  const H = Math.round(Math.min(300, Math.max(200, W * 0.6)));
  const L = 70;
  const R = 20;
  const T = 12;
  const B = 44;
  node.setAttribute('viewBox', `0 0 ${W} ${H}`);
  node.replaceChildren();
  node.append(svg('title', {}, label));
  const X = (x) => L + ((W - L - R) * x) / xmax;
  const Y = (y) => {
    const t = log
      ? (Math.log10(Math.max(y, ymin)) - Math.log10(ymin)) / (Math.log10(ymax) - Math.log10(ymin))
      : (y - ymin) / (ymax - ymin);
    return T + (H - T - B) * (1 - Math.min(1, Math.max(0, t)));
  };
  const axes = svg('g', { class: 'axes' });
  for (const [v, text] of yticks) {
    axes.append(svg('line', { x1: L, x2: W - R, y1: Y(v), y2: Y(v), class: 'gridline' }));
    axes.append(svg('text', { x: L - 6, y: Y(v) + 5, 'text-anchor': 'end' }, text));
  }
  for (let i = 0; i <= 4; i++) {
    const v = (xmax * i) / 4;
    axes.append(svg('text', { x: X(v), y: H - B + 20, 'text-anchor': 'middle' }, fmtInt(Math.round(v))));
  }
  axes.append(svg('text', { x: W - R, y: H - 2, 'text-anchor': 'end' }, 'keys added'));
  axes.append(svg('line', { x1: L, x2: L, y1: T, y2: H - B, class: 'axis' }));
  axes.append(svg('line', { x1: L, x2: W - R, y1: H - B, y2: H - B, class: 'axis' }));
  node.append(axes);
  for (const s of series) {
    const pts = s.points.filter(([x, y]) => x <= xmax && Number.isFinite(y));
    if (!pts.length) continue;
    if (s.zeros) {
      // Measured zeros: a hollow triangle standing on the floor, never a dot
      // that would claim a rate.
      const g = svg('g', { class: `${s.cls} zeros` });
      for (const [x] of pts) {
        const cx = X(x);
        const y = H - B - 1;
        g.append(
          svg('path', {
            d: `M${(cx - 6).toFixed(1)},${y - 10}L${(cx + 6).toFixed(1)},${y - 10}L${cx.toFixed(1)},${y}Z`,
          }),
        );
      }
      node.append(g);
    } else if (s.dots) {
      const g = svg('g', { class: s.cls });
      for (const [x, y] of pts) g.append(svg('circle', { cx: X(x).toFixed(1), cy: Y(y).toFixed(1), r: 4 }));
      node.append(g);
    } else {
      // On a log scale a line stops at the floor instead of running along
      // it: what lies below is not drawn, rather than drawn as the floor.
      let d = '';
      let pen = false;
      for (const [x, y] of pts) {
        if (log && y < ymin) {
          pen = false;
          continue;
        }
        d += `${pen ? 'L' : 'M'}${X(x).toFixed(1)},${Y(y).toFixed(1)}`;
        pen = true;
      }
      if (d) node.append(svg('path', { d, class: s.cls }));
    }
  }
}

export function drawCharts() {
  const { m, k, history } = state;
  const last = history[history.length - 1]?.n ?? 0;
  const cap = state.filter.capacity || 0;
  const xmax = niceMax(Math.max(10, last, cap));
  const curve = (fn) => {
    const pts = [];
    if (!k || !isDrawable(state.kind)) return pts;
    for (let i = 0; i <= 120; i++) {
      const n = (xmax * i) / 120;
      pts.push([n, fn(n)]);
    }
    return pts;
  };
  drawChart($('chart-fill'), {
    label: 'Share of bits set',
    xmax,
    ymin: 0,
    ymax: 1,
    yticks: [
      [0, '0 %'],
      [0.25, '25 %'],
      [0.5, '50 %'],
      [0.75, '75 %'],
      [1, '100 %'],
    ],
    series: [
      { cls: 'theory', points: curve((n) => -Math.expm1((-k * n) / m)) },
      { cls: 'meas', dots: true, points: history.map((h) => [h.n, h.fill]) },
    ],
  });
  const target = state.filter.errorRate || 0;
  const ymin = target ? Math.min(1e-4, 10 ** Math.floor(Math.log10(target) - 1)) : 1e-4;
  const yticks = [];
  for (let e = Math.round(Math.log10(ymin)); e <= 0; e++) yticks.push([10 ** e, fmtPercentTick(e)]);
  drawChart($('chart-fpr'), {
    label: 'False-positive rate',
    xmax,
    log: true,
    ymin,
    ymax: 1,
    yticks,
    series: [
      { cls: 'theory', points: curve((n) => theoryFPR(state.kind, m, k, n)) },
      { cls: 'est', points: history.map((h) => [h.n, h.est]) },
      { cls: 'meas', dots: true, points: history.filter((h) => h.measured > 0).map((h) => [h.n, h.measured]) },
      { cls: 'meas', zeros: true, points: history.filter((h) => h.measured === 0).map((h) => [h.n, 0]) },
    ],
  });
}

// refresh redraws everything that shows the filter's contents.
export function refresh({ recordPoint = true } = {}) {
  const s = showStats();
  if (recordPoint) record(s);
  showStatus(s);
  paintGrid();
  showKeys();
  drawCharts();
  scheduleNow();
  $('remove').hidden = state.kind !== 'counting';
  // main.js: the address follows the filter's keys.
  document.dispatchEvent(new CustomEvent('pagechange'));
}
