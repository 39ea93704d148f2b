// The arithmetic the page sets beside its measurements: the false-positive
// rate θ(k) of a classic filter and the k that makes it smallest, how much a
// measured rate may stray from it by chance, and the patterns of enhanced
// double hashing (docs/format.md, hash scheme 1) that make a small filter
// leave the formula. Pure functions: no page, no engine (web-demo/test).

/** θ = (1 − e^(−kn/m))^k: the rate after n keys of a filter of m bits and k hashes. */
export function theta(m, k, n) {
  return (-Math.expm1((-k * n) / m)) ** k;
}

/** k* = (m / n) ln 2, the real k at which θ is smallest: the one that sets half the bits. */
export function kStar(m, n) {
  return (m / n) * Math.LN2;
}

/** The points [k, θ(k)] for k = 1 … kmax. */
export function thetaCurve(m, n, kmax) {
  const pts = [];
  for (let k = 1; k <= kmax; k++) pts.push([k, theta(m, k, n)]);
  return pts;
}

/** The whole k (1 … kmax) with the smallest θ. */
export function bestWholeK(m, n, kmax = 64) {
  let best = 1;
  for (let k = 2; k <= kmax; k++) if (theta(m, k, n) < theta(m, best, n)) best = k;
  return best;
}

/** The share of bits still 0 after n keys of k positions each: (1 − 1/m)^(kn), the exact mean. */
export function zeroShare(m, k, n) {
  return Math.exp(k * n * Math.log1p(-1 / m));
}

/**
 * The variance of the number of bits set after n keys of k positions drawn
 * at random among m (the classical occupancy problem): the scatter of the
 * fill from one filter to the next.
 */
export function fillVariance(m, k, n) {
  const kn = k * n;
  const q1 = zeroShare(m, k, n);
  const q2 = m >= 2 ? Math.exp(kn * Math.log1p(-2 / m)) : 0;
  return Math.max(0, m * (m - 1) * q2 + m * q1 - m * m * q1 * q1);
}

/**
 * The two-sided interval [lo, hi] in which a rate measured on `probes` fresh
 * keys spread over `filters` filters (each built from n fresh keys at m and
 * k) falls with probability `level` when the formula holds: the binomial
 * scatter of the probes, and the scatter of the fill from filter to filter
 * (θ is the fill to the power k: its spread is k · fill^(k−1) times the
 * fill's). filters = 0 means one given filter whose fill is known (no fill
 * scatter): then only the probes scatter. The normal approximation, with a continuity margin of half a
 * probe.
 */
export function rateInterval(rate, { m, k, n, probes, filters = 0 }, level = 0.99) {
  const z = normalQuantile(0.5 + level / 2);
  let v = (rate * (1 - rate)) / probes;
  if (filters > 0) {
    const f = 1 - zeroShare(m, k, n);
    const slope = f > 0 ? (k * rate) / f : 0;
    v += (slope * slope * (fillVariance(m, k, n) / (m * m))) / filters;
  }
  const half = z * Math.sqrt(v) + 0.5 / probes;
  return [Math.max(0, rate - half), Math.min(1, rate + half)];
}

/** The standard normal quantile (Acklam's rational approximation, error < 1.2e-9). */
export function normalQuantile(p) {
  if (!(p > 0 && p < 1)) throw new RangeError(`normalQuantile: p must be in (0, 1), got ${p}`);
  const a = [
    -39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239,
  ];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
  const c = [
    -0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968,
    2.938163982698783,
  ];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const lo = 0.02425;
  if (p < lo) {
    const q = Math.sqrt(-2 * Math.log(p));
    return (
      (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
      ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
    );
  }
  if (p > 1 - lo) return -normalQuantile(1 - p);
  const q = p - 0.5;
  const r = q * q;
  return (
    ((((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q) /
    (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)
  );
}

// ---------- the patterns of enhanced double hashing ----------

/**
 * The k positions that the start pair (x, y) gives in a filter of m bits:
 * position i is x, then x = (x + y) mod m and y = (y + i) mod m
 * (docs/format.md, hash scheme 1). A key's pair is x = hi64(h₁ · m),
 * y = hi64(mix64(h₁) · m): everything a key sets is decided by one of m²
 * pairs.
 */
export function patternOf(x, y, m, k) {
  const out = new Array(k);
  for (let i = 1; i <= k; i++) {
    out[i - 1] = x;
    x = (x + y) % m;
    y = (y + i) % m;
  }
  return out;
}

/** The largest m whose m² start pairs the page walks through one by one (4.2 million pairs). */
export const PAIR_LIMIT = 2048;

/** The number of start pairs (x, y): m². */
export function startPairs(m) {
  return m * m;
}

/** The largest m whose distinct patterns the page counts (262,144 start pairs, a second at most). */
export const PATTERN_LIMIT = 512;

/**
 * The number of distinct sets of positions the m² start pairs give, for
 * m ≤ PATTERN_LIMIT (null above it): two pairs may set the same bits in
 * another order (with k = 3, (x, y) and (x + 2y + 1, −y − 1) do, so an even
 * m has m²/2), and a pair may repeat a position. Each set is told apart by a
 * 52-bit fingerprint of its sorted positions: among 262,144 sets, two
 * collide with odds under 1 in 100,000.
 */
export function distinctPatterns(m, k) {
  if (m > PATTERN_LIMIT) return null;
  const seen = new Set();
  const buf = new Int32Array(k);
  for (let x0 = 0; x0 < m; x0++) {
    for (let y0 = 0; y0 < m; y0++) {
      let x = x0;
      let y = y0;
      for (let i = 1; i <= k; i++) {
        // Insertion sort as the positions come.
        let j = i - 1;
        while (j > 0 && buf[j - 1] > x) {
          buf[j] = buf[j - 1];
          j--;
        }
        buf[j] = x;
        x = (x + y) % m;
        y = (y + i) % m;
      }
      let a = 0x9e3779b9;
      let b = 0x85ebca6b;
      for (let i = 0; i < k; i++) {
        if (i && buf[i] === buf[i - 1]) continue;
        a = Math.imul(a ^ buf[i], 0x01000193) ^ (a >>> 15);
        b = Math.imul(b + buf[i], 0x5bd1e995) ^ (b >>> 13);
      }
      seen.add((a >>> 6) * 2 ** 26 + (b >>> 6));
    }
  }
  return seen.size;
}

/** A pattern as a string of its distinct positions in order, for comparing sets. */
export function patternKey(positions) {
  return [...new Set(positions)].sort((a, b) => a - b).join(',');
}

/**
 * The exact false-positive rate of one filter of m bits and k hashes whose
 * bits are isSet(i): the share of the m² start pairs whose k positions are
 * all set (a fresh key draws its pair uniformly), as { rate, repeats }
 * where repeats is the share whose set of positions is one of `patterns`
 * (patternKey strings: the added keys'), which no number of bits set
 * explains. For m ≤ PAIR_LIMIT; null above it.
 */
export function exactRate(isSet, m, k, patterns = new Set()) {
  if (m > PAIR_LIMIT) return null;
  let hits = 0;
  let repeats = 0;
  eachSetPattern(isSet, m, k, (pos) => {
    hits++;
    if (patterns.size && patterns.has(patternKey(pos))) repeats++;
  });
  return { rate: hits / (m * m), repeats: repeats / (m * m) };
}

// eachSetPattern calls fn(positions) for each start pair of a filter of m
// bits and k hashes whose k positions isSet holds all of (positions is
// reused between calls).
function eachSetPattern(isSet, m, k, fn) {
  const pos = new Array(k);
  for (let x0 = 0; x0 < m; x0++) {
    if (!isSet(x0)) continue;
    for (let y0 = 0; y0 < m; y0++) {
      let x = x0;
      let y = y0;
      let all = true;
      for (let i = 1; i <= k; i++) {
        if (!isSet(x)) {
          all = false;
          break;
        }
        pos[i - 1] = x;
        x = (x + y) % m;
        y = (y + i) % m;
      }
      if (all) fn(pos);
    }
  }
}

/**
 * The two kinds of false positive a fresh key can be, as shares of the m²
 * start pairs of a filter of m bits and k hashes whose bit i was set by the
 * keys keysAt(i) (none: the bit is 0): { ordinary, single }, where single
 * is the share whose positions one added key set all of (a whole pattern
 * repeated, or held inside one key's), and ordinary the share whose
 * positions are all set but by different keys. For m ≤ PAIR_LIMIT; null
 * above it.
 */
export function falsePositiveKinds(keysAt, m, k) {
  if (m > PAIR_LIMIT) return null;
  let ordinary = 0;
  let single = 0;
  eachSetPattern(
    (i) => keysAt(i)?.length > 0,
    m,
    k,
    (pos) => {
      let common = new Set(keysAt(pos[0]));
      for (let i = 1; i < k && common.size; i++) {
        const here = new Set(keysAt(pos[i]));
        common = new Set([...common].filter((key) => here.has(key)));
      }
      if (common.size) single++;
      else ordinary++;
    },
  );
  return { ordinary: ordinary / (m * m), single: single / (m * m) };
}

/**
 * How many of `candidates` (keys in order), added to a classic filter of m
 * bits and k hashes whose bit i was set by bitKeys.get(i), make ordinary
 * false positives at least `times` as common as those one key set every
 * bit of (falsePositiveKinds), with positionsOf(key) giving a key's
 * positions: { keys, kinds, set } (set: the bits then set), or null when
 * the first `most` candidates are not enough. bitKeys is left as it was.
 */
export function keysForOrdinary(bitKeys, positionsOf, candidates, { m, k, times, most = 1000 }) {
  const at = new Map([...bitKeys].map(([p, keys]) => [p, [...keys]]));
  const keys = [];
  for (const key of candidates) {
    if (keys.length >= most) return null;
    keys.push(key);
    for (const p of new Set(positionsOf(key))) {
      if (!at.has(p)) at.set(p, []);
      at.get(p).push(key);
    }
    const kinds = falsePositiveKinds((i) => at.get(i), m, k);
    if (!kinds) return null;
    if (kinds.ordinary >= times * kinds.single) return { keys, kinds, set: at.size };
  }
  return null;
}

/**
 * Whose pattern a false positive repeats: the first of `added` (keys with
 * their positions) whose set of positions holds every position of `positions`,
 * as { key, same } where same says the sets are equal; null when no single
 * key set them all.
 */
export function coveringKey(positions, added) {
  const want = new Set(positions);
  const wantKey = patternKey(positions);
  let cover = null;
  for (const [key, pos] of added) {
    const have = new Set(pos);
    if ([...want].every((p) => have.has(p))) {
      if (patternKey(pos) === wantKey) return { key, same: true };
      cover ??= { key, same: false };
    }
  }
  return cover;
}

// niceBelow and niceAbove round a rate down or up to 1, 2 or 5 times a
// power of ten.
function niceBelow(x) {
  const e = Math.floor(Math.log10(x) + 1e-9);
  return [5, 2, 1].map((f) => f * 10 ** e).find((v) => v <= x * (1 + 1e-9)) ?? 10 ** e;
}
function niceAbove(x) {
  const e = Math.floor(Math.log10(x) + 1e-9);
  return [1, 2, 5, 10].map((f) => f * 10 ** e).find((v) => v >= x * (1 - 1e-9));
}

/**
 * yRange returns the rates [low, high] the curve's y axis spans (a log
 * scale), and its ticks: from the 1-2-5 value below the least rate drawn to
 * the one above the greatest, a factor of 4 at least, so that the curve
 * fills the chart rather than lying flat along it; one step lower when a
 * measured zero needs a floor. Ticks: every 1-2-5 value between, or only
 * the powers of ten when those would be more than 8.
 */
export function yRange(rates, zeros = false) {
  const shown = rates.filter((r) => r > 0);
  if (!shown.length) return { low: 1e-3, high: 1, ticks: [1e-3, 1e-2, 1e-1, 1] };
  let low = Math.max(1e-12, niceBelow(Math.min(...shown)));
  const high = Math.min(1, niceAbove(Math.max(...shown)));
  if (zeros) low = niceBelow(low * 0.99);
  while (high / low < 4) low = niceBelow(low * 0.99);
  let ticks = [];
  for (let e = Math.floor(Math.log10(low) + 1e-9); e <= 0; e++)
    for (const f of [1, 2, 5]) {
      const v = f / 10 ** -e;
      if (v >= low * (1 - 1e-9) && v <= high * (1 + 1e-9)) ticks.push(v);
    }
  if (ticks.length > 8) {
    ticks = ticks.filter((v) => Math.abs(Math.log10(v) - Math.round(Math.log10(v))) < 1e-9);
    if (ticks.length > 8)
      ticks = ticks.filter((_, i) => i % 2 === (ticks.length % 2) - 1 || i % 2 === (ticks.length - 1) % 2);
  }
  return { low, high, ticks };
}
