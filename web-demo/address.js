// The page's state in its address, so that a link (or a QR code of it)
// opens a lesson step as it was: the kind, n and p or m and k, the keys
// added, the keys removed anyway, and the tour's step. Pure: the query in,
// the state out, and back (web-demo/test); main.js applies it to the page.
//
//   ?kind=counting&n=6&m=40&k=3&key=red&key=green&anyway=never-12&step=7
//   ?n=100&p=0.05&key=apple#tradeoff
//
// A parameter that is wrong is named in a message with its rule, and the
// page uses its default for it: a broken link still opens a working page.

export const KINDS = ['classic', 'counting', 'blocked'];
export const LIMITS = { n: 1e9, m: 2 ** 26, k: 64, keys: 200, keyLength: 200, steps: 8 };
const KNOWN = new Set(['kind', 'n', 'p', 'm', 'k', 'key', 'anyway', 'step']);

const whole = (text) => (/^\d+$/.test(text) ? Number(text) : NaN);

function rate(text) {
  const pct = text.endsWith('%');
  const t = pct ? text.slice(0, -1) : text;
  if (!/^(\d+\.?\d*|\.\d+)(e-?\d+)?$/i.test(t)) return NaN;
  return Number(t) * (pct ? 0.01 : 1);
}

/**
 * parseAddress reads a query string (location.search) into { state,
 * errors }: state has kind, sizing ('np' or 'mk'), n, p, m, k, keys,
 * anyway and step, each only when the address gives it (and it is right);
 * errors lists one sentence per wrong parameter, naming it and its rule.
 */
export function parseAddress(search) {
  const q = new URLSearchParams(search);
  const state = {};
  const errors = [];
  const bad = (name, got, rule) => errors.push(`The link's ${name}=${JSON.stringify(got)} is not used: ${rule}.`);
  for (const name of new Set(q.keys())) {
    if (!KNOWN.has(name)) bad(name, q.get(name), `the page knows ${[...KNOWN].join(', ')}`);
  }
  const one = (name) => {
    const all = q.getAll(name);
    if (all.length > 1) bad(name, all.join(','), `give ${name} once`);
    return all.length === 1 ? all[0].trim() : null;
  };
  const kind = one('kind');
  if (kind !== null) {
    if (KINDS.includes(kind)) state.kind = kind;
    else bad('kind', kind, `kind is one of ${KINDS.join(', ')}`);
  }
  const n = one('n');
  if (n !== null) {
    const v = whole(n);
    if (v >= 1 && v <= LIMITS.n) state.n = v;
    else bad('n', n, `n is a whole number of keys from 1 to ${LIMITS.n.toLocaleString('en-US')}`);
  }
  const p = one('p');
  const m = one('m');
  const k = one('k');
  if (p !== null) {
    const v = rate(p);
    if (!(v > 0 && v < 1)) bad('p', p, 'p is a rate more than 0 and less than 1, such as 0.01 or 1%');
    else if (m !== null || k !== null) bad('p', p, 'a filter is sized from n and p, or from m and k, not both');
    else {
      state.p = v;
      state.sizing = 'np';
    }
  }
  if (m !== null) {
    const v = whole(m);
    const blocked = state.kind === 'blocked';
    if (blocked && !(v >= 256 && v % 256 === 0 && v <= LIMITS.m))
      bad('m', m, 'a split-block filter has a multiple of 256 bits, at most 2^26');
    else if (!blocked && !(v >= 2 && v <= LIMITS.m)) bad('m', m, 'm is a whole number of bits from 2 to 2^26');
    else {
      state.m = v;
      state.sizing = 'mk';
    }
  }
  if (k !== null) {
    const v = whole(k);
    if (v >= 1 && v <= LIMITS.k) {
      state.k = v;
      state.sizing = 'mk';
    } else bad('k', k, `k is a whole number of hashes from 1 to ${LIMITS.k}`);
  }
  for (const name of ['key', 'anyway']) {
    const keys = q.getAll(name);
    if (!keys.length) continue;
    const ok = keys.filter((key) => key !== '' && key.length <= LIMITS.keyLength);
    if (ok.length < keys.length)
      bad(
        name,
        keys.find((key) => !ok.includes(key)),
        `a key has 1 to ${LIMITS.keyLength} characters`,
      );
    if (ok.length > LIMITS.keys) bad(name, `${ok.length} keys`, `a link holds at most ${LIMITS.keys} keys`);
    state[name === 'key' ? 'keys' : 'anyway'] = ok.slice(0, LIMITS.keys);
  }
  if (state.anyway && state.kind !== 'counting') {
    bad('anyway', state.anyway.join(','), 'only a counting filter removes keys (kind=counting)');
    delete state.anyway;
  }
  const step = one('step');
  if (step !== null) {
    const v = whole(step);
    if (v >= 1 && v <= LIMITS.steps) state.step = v;
    else bad('step', step, `step is a number of the tour, from 1 to ${LIMITS.steps}`);
  }
  return { state, errors };
}

/**
 * addressOf writes a state (as parseAddress returns it) as a query string
 * that parseAddress reads back: the kind unless classic, the sizes, the
 * keys in the order they were added, the keys removed anyway, the step.
 */
export function addressOf({ kind = 'classic', sizing = 'np', n, p, m, k, keys = [], anyway = [], step } = {}) {
  const q = new URLSearchParams();
  if (kind !== 'classic') q.set('kind', kind);
  if (n !== undefined) q.set('n', String(n));
  if (sizing === 'np' && p !== undefined) q.set('p', String(p));
  if (sizing === 'mk') {
    if (m !== undefined) q.set('m', String(m));
    if (k !== undefined && kind !== 'blocked') q.set('k', String(k));
  }
  for (const key of keys) q.append('key', key);
  for (const key of anyway) q.append('anyway', key);
  if (step) q.set('step', String(step));
  const s = q.toString();
  return s ? `?${s}` : '';
}
