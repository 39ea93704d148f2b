// The k trade-off, live: sliders for k and n at the filter's m, the curve
// θ(k) with k* marked, the filter's own k, and rates measured on filters
// built at each k; and why k* is best, with the bits of one such filter.
import { BloomFilter } from '/js/index.js';
import { $, state } from './state.js';
import { el, fmtInt, fmtRate, fmtTick, withSup } from './format.js';
import { svg } from './charts.js';
import { bestWholeK, kStar, rateInterval, theta, thetaCurve, yRange } from './theory.js';
import { ADD_BUDGET, measureRate, plan } from './measure.js';

const tr = {
  on: false, // the filter on show has a k to vary (classic or counting)
  m: 0,
  measured: new Map(), // k → measureRate's result, at tr.m and the slider's n
  timer: 0,
  run: 0, // bumped when m or n changes: a measurement of an older run is dropped
  visible: false, // the section is on screen: measuring waits for it
  stale: false, // a measurement is owed once the section shows
};

/** The largest k the slider offers at m and n: three times k*, from 8 to 64. */
export function kMax(m, n) {
  return Math.min(64, Math.max(8, Math.ceil(3 * kStar(m, n))));
}

const nOf = () => Number($('tn').value);
const kOf = () => Number($('tk').value);

/** syncTradeoff starts the trade-off over for the filter on show: its m, its k, its planned n. */
export function syncTradeoff(plannedN) {
  const kinds = ['classic', 'counting'];
  tr.on = kinds.includes(state.kind) && state.m >= 2;
  $('tradeoff-off').hidden = tr.on;
  $('tradeoff-on').hidden = !tr.on;
  for (const id of ['tk', 'tn', 'measure-all']) $(id).disabled = !tr.on;
  if (!tr.on) {
    $('tradeoff-off').textContent =
      state.kind === 'blocked'
        ? 'A split-block filter always sets 8 bits, one in each word of its block: there is no k to vary. Make a classic filter to try the trade-off.'
        : `A ${state.kind} filter is made of several filters, each with its own k: make a classic filter to try the trade-off.`;
    return;
  }
  tr.m = state.m;
  const nMax = Math.max(2, Math.min(state.m, ADD_BUDGET));
  const n = Math.min(nMax, Math.max(1, plannedN || state.added || 1));
  $('tn').max = String(nMax);
  $('tn').value = String(n);
  setKRange(state.k);
  $('tm-note').textContent =
    `m = ${fmtInt(state.m)} bits, the filter's own. Each measured point: filters of m bits built at that k from n fresh keys, asked about other fresh keys.`;
  restart();
}

function setKRange(k) {
  const max = Math.max(kMax(tr.m, nOf()), Math.min(64, k));
  $('tk').max = String(max);
  $('tk').value = String(Math.min(max, Math.max(1, k)));
}

// restart forgets the measurements (m or n changed) and measures again: at
// every k when that is quick (under 2 million keys added and tested in
// all), else at the slider's k.
function restart() {
  tr.measured = new Map();
  tr.run++;
  draw();
  tr.stale = !tr.visible;
  if (tr.visible) measureSoon();
}

function measureSoon() {
  const n = nOf();
  let cost = 0;
  for (let k = 1; k <= Number($('tk').max); k++) {
    const p = plan(tr.m, k, n);
    cost += p.probes + p.filters * n;
  }
  if (cost < 2_000_000) measureAll();
  else schedule(kOf());
}

// schedule measures at k once the page has drawn (a slider dragged across
// many k measures only where it stops).
function schedule(k) {
  clearTimeout(tr.timer);
  $('k-result').dataset.state = 'measuring';
  tr.timer = setTimeout(() => {
    if (!tr.on) return;
    measureK(k);
    draw();
  }, 30);
}

function measureK(k) {
  const m = tr.m;
  const n = nOf();
  if (tr.measured.has(k)) return tr.measured.get(k);
  const r = measureRate(() => new BloomFilter({ bits: m, hashes: k }), { n, ...plan(m, k, n) });
  tr.measured.set(k, r);
  return r;
}

async function measureAll() {
  const run = tr.run;
  const max = Number($('tk').max);
  $('measure-all').disabled = true;
  try {
    // The slider's k first, so that its sentence is there at once.
    for (const k of [kOf(), ...Array.from({ length: max }, (_, i) => i + 1)]) {
      if (run !== tr.run) break;
      measureK(k);
      draw();
      await new Promise((r) => setTimeout(r, 0));
    }
  } finally {
    $('measure-all').disabled = !tr.on;
  }
  if (run === tr.run) draw();
}

export function wireTradeoff() {
  $('tk').addEventListener('input', () => {
    draw();
    schedule(kOf());
  });
  $('tn').addEventListener('input', () => {
    setKRange(kOf());
    restart();
  });
  $('measure-all').addEventListener('click', () => measureAll());
  window.addEventListener('resize', () => draw());
  // Measuring costs up to a few hundred milliseconds: only for a reader.
  new IntersectionObserver((entries) => {
    tr.visible = entries.some((e) => e.isIntersecting);
    if (tr.visible && tr.stale && tr.on) {
      tr.stale = false;
      measureSoon();
    }
  }).observe($('tradeoff'));
}

// ---------- drawing ----------

function draw() {
  if (!tr.on) return;
  const m = tr.m;
  const n = nOf();
  const k = kOf();
  const kmax = Number($('tk').max);
  $('tk-out').textContent = String(k);
  $('tn-out').textContent = fmtInt(n);
  $('tk').setAttribute('aria-valuetext', `k = ${k}: θ = ${fmtRate(theta(m, k, n))}`);
  $('tn').setAttribute('aria-valuetext', `n = ${fmtInt(n)} keys`);
  drawCurve(m, n, k, kmax);
  sayResult(m, n, k);
  drawFill(m, n, k);
}

function drawCurve(m, n, k, kmax) {
  const node = $('chart-k');
  // One unit of the drawing a pixel of the screen (300 to 960), so that its
  // 16 px text is 16 px on a projector and on a phone alike.
  const W = Math.round(Math.min(960, Math.max(300, node.clientWidth || 640)));
  const H = W < 480 ? 280 : 320;
  const L = 72;
  const R = 16;
  const T = 14;
  const B = 44;
  const curve = thetaCurve(m, n, kmax);
  const meas = [...tr.measured].filter(([kk]) => kk <= kmax);
  const rates = [...curve.map(([, r]) => r), ...meas.map(([, r]) => r.hits / r.probes)];
  const { low, high, ticks } = yRange(
    rates,
    meas.some(([, r]) => r.hits === 0),
  );
  const [lowL, highL] = [Math.log10(low), Math.log10(high)];
  const ymin = low;
  const X = (x) => L + ((W - L - R) * (x - 1)) / Math.max(1, kmax - 1);
  const Y = (y) => {
    const t = (Math.log10(Math.max(y, ymin)) - lowL) / (highL - lowL);
    return T + (H - T - B) * (1 - Math.min(1, Math.max(0, t)));
  };
  node.setAttribute('viewBox', `0 0 ${W} ${H}`);
  node.replaceChildren(svg('title', {}, `False-positive rate against k, at m = ${m} and n = ${n}`));
  const axes = svg('g', { class: 'axes' });
  for (const v of ticks) {
    axes.append(svg('line', { x1: L, x2: W - R, y1: Y(v), y2: Y(v), class: 'gridline' }));
    axes.append(svg('text', { x: L - 6, y: Y(v) + 5, 'text-anchor': 'end' }, fmtTick(v)));
  }
  // Labels at least 32 px apart.
  const kstep = [1, 2, 4, 8].find((st) => ((W - L - R) * st) / Math.max(1, kmax - 1) >= 32) ?? 8;
  for (let kk = 1; kk <= kmax; kk += kstep)
    axes.append(svg('text', { x: X(kk), y: H - B + 20, 'text-anchor': 'middle' }, String(kk)));
  axes.append(svg('text', { x: W - R, y: H - 4, 'text-anchor': 'end' }, 'hashes k'));
  axes.append(svg('line', { x1: L, x2: L, y1: T, y2: H - B, class: 'axis' }));
  axes.append(svg('line', { x1: L, x2: W - R, y1: H - B, y2: H - B, class: 'axis' }));
  node.append(axes);
  // k*, where half the bits are set.
  const ks = kStar(m, n);
  if (ks >= 1 && ks <= kmax) {
    node.append(svg('line', { x1: X(ks), x2: X(ks), y1: T, y2: H - B, class: 'kstar' }));
    node.append(svg('text', { x: X(ks) + 5, y: T + 16, class: 'kstar-label' }, `k* = ${ks.toFixed(2)}`));
  }
  const d = curve.map(([kk, r], i) => `${i ? 'L' : 'M'}${X(kk).toFixed(1)},${Y(r).toFixed(1)}`).join('');
  node.append(svg('path', { d, class: 'theory' }));
  const verts = svg('g', { class: 'curve' });
  for (const [kk, r] of curve)
    verts.append(svg('circle', { cx: X(kk).toFixed(1), cy: Y(r).toFixed(1), r: 2.5, 'data-k': kk, 'data-rate': r }));
  node.append(verts);
  // The filter's own k, and the slider's.
  if (state.k >= 1 && state.k <= kmax)
    node.append(svg('circle', { cx: X(state.k), cy: Y(theta(m, state.k, n)), r: 8, class: 'own', 'data-k': state.k }));
  node.append(svg('circle', { id: 'kpoint', cx: X(k), cy: Y(theta(m, k, n)), r: 7, class: 'cur', 'data-k': k }));
  // Measured rates: dots, and a hollow triangle on the floor for a measured zero.
  const g = svg('g', { class: 'meas' });
  for (const [kk, r] of meas) {
    const rate = r.hits / r.probes;
    if (rate > 0) g.append(svg('circle', { cx: X(kk).toFixed(1), cy: Y(rate).toFixed(1), r: 4, 'data-k': kk }));
    else {
      const x = X(kk);
      const y = H - B - 2;
      g.append(svg('path', { d: `M${x - 5},${y - 8}L${x + 5},${y - 8}L${x},${y}Z`, class: 'zero', 'data-k': kk }));
    }
  }
  node.append(g);
}

function sayResult(m, n, k) {
  const box = $('k-result');
  const ks = kStar(m, n);
  const best = bestWholeK(m, n, 64);
  const t = theta(m, k, n);
  const parts = [el('p', { class: 'result-head' }, ...withSup(`k = ${k}: theory (1 − e^(−kn/m))^k = ${fmtRate(t)}.`))];
  const r = tr.measured.get(k);
  if (r) {
    const rate = r.hits / r.probes;
    const [lo, hi] = rateInterval(t, { m, k, n, probes: r.probes, filters: r.filters });
    const within = rate >= lo && rate <= hi;
    parts.push(
      el('p', {
        'data-measured': String(rate),
        text: `Measured ${fmtRate(rate)}: ${fmtInt(r.hits)} false positives in ${fmtInt(r.probes)} fresh keys, asked of ${fmtInt(r.filters)} ${r.filters === 1 ? 'filter' : 'filters'} of ${fmtInt(n)} fresh keys each. ${within ? 'Within' : 'Outside'} the 99 % range of theory, ${fmtRate(lo)} to ${fmtRate(hi)}.`,
      }),
    );
    if (!within) parts.push(el('p', { class: 'why-differ', text: whyDiffer(m, k, n, rate, t) }));
  } else {
    parts.push(el('p', { class: 'help', text: 'Measuring…' }));
  }
  parts.push(
    el('p', {
      text: `k* = (m / n) ln 2 = ${fmtInt(m)} / ${fmtInt(n)} × 0.6931 = ${ks.toFixed(2)}; the best whole k is ${best}${best === Math.max(1, Math.round(ks)) ? '' : `, not round(k*) = ${Math.round(ks)}: θ is not symmetric about k*`}. This filter's k is ${state.k}.`,
    }),
  );
  box.replaceChildren(...parts);
  box.dataset.k = String(k);
  box.dataset.state = r ? 'measured' : 'measuring';
}

/** Why a measured rate left theory's range at m, k, n: the reasons the formula's assumptions fail. */
export function whyDiffer(m, k, n, rate, t) {
  const reasons = [];
  const pairs = m * m;
  if (n / pairs > 0.1 * t) {
    reasons.push(
      `a small filter repeats whole patterns: a key's k positions come from one of only m² = ${fmtInt(pairs)} start pairs, so a fresh key lands on exactly the pattern of one of the n added keys about n / m² = ${fmtRate(n / pairs)} of the time, a false positive the formula does not count (section 5)`,
    );
  }
  if (k > 1 && k * k > m / 4) {
    reasons.push(`with k = ${k} of m = ${m}, a key's own positions often repeat, so it sets fewer than k bits`);
  }
  if (!reasons.length) reasons.push('chance: 1 measurement in 100 falls outside its 99 % range');
  return `Why they differ: ${reasons.join('; and ')}.`;
}

function drawFill(m, n, k) {
  const box = $('fillpic');
  const r = tr.measured.get(k);
  const share = -Math.expm1((-k * n) / m);
  const parts = [];
  const pct = (x) => `${(100 * x).toFixed(0)} %`;
  const share0 = r ? r.fill : share;
  const bar = el(
    'div',
    { class: 'fillbar' },
    el('span', { class: 'fillbar-set' }),
    el('span', { class: 'fillbar-half' }),
  );
  bar.firstChild.style.width = `${(100 * share0).toFixed(1)}%`;
  bar.setAttribute('role', 'img');
  bar.setAttribute('aria-label', `${pct(r ? r.fill : share)} of the bits set; the mark is at half`);
  parts.push(
    el('p', {
      text: `At k = ${k}, ${fmtInt(n)} keys set ${pct(r ? r.fill : share)} of the ${fmtInt(m)} bits${r ? ' (measured)' : ''}; at k* they set half.`,
    }),
    bar,
  );
  if (r?.bits && m <= 1024) {
    const strip = el('div', { class: m > 512 ? 'strip small' : 'strip', 'aria-hidden': 'true' });
    for (const b of r.bits) strip.append(el('span', { class: b ? 'c set' : 'c' }));
    parts.push(strip, el('p', { class: 'help', text: `The bits of one filter built at k = ${k}.` }));
  }
  box.replaceChildren(...parts);
}
