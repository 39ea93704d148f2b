// Measuring a false-positive rate the way a user meets it: filters built
// from fresh random keys, asked about other fresh keys. The engine's filter
// class is passed in, so that Node's tests (web-demo/test) run the same
// code on the npm module's node entry that the page runs on its browser one.
import { theta } from './theory.js';

// A random word drawn once, and a count: keys that never repeat on this
// page, new on every visit, and made hundreds of times faster than from
// random numbers each (a measurement of every k tests millions; the hash
// spreads a counted key as well as a random one).
const words = new Uint32Array(2);
crypto.getRandomValues(words);
const salt = `${words[0].toString(36)}${words[1].toString(36)}`;
let counter = 0;

/** count fresh keys, `${prefix}`, a random word and a count each: none repeats on the page. */
export function freshKeys(count, prefix = 'fresh:') {
  const base = `${prefix}${salt}.`;
  const keys = new Array(count);
  for (let i = 0; i < count; i++) keys[i] = base + (counter++).toString(36);
  return keys;
}

/** At most this many keys added, over all the filters of one measurement. */
export const ADD_BUDGET = 100_000;
/** At most this many fresh keys tested in one measurement. */
export const PROBE_BUDGET = 100_000;

/**
 * How a measurement at m, k, n is spread: enough fresh keys to expect about
 * 400 false positives (4,000 to PROBE_BUDGET), over up to 20 filters so that
 * one filter's luck in its fill does not decide the result.
 */
export function plan(m, k, n) {
  const rate = theta(m, k, n);
  const probes = Math.min(PROBE_BUDGET, Math.max(4000, Math.ceil(400 / Math.max(rate, 1e-9))));
  const filters = Math.max(1, Math.min(20, Math.floor(ADD_BUDGET / Math.max(1, n))));
  return { probes: filters * Math.ceil(probes / filters), filters };
}

/**
 * Builds `filters` filters with make() and n fresh keys each, tests
 * probes / filters other fresh keys against each, and returns { hits,
 * probes, filters, fill, bits } where fill is the mean share of bits set
 * and bits the first filter's bits (0 or 1 each) when it is a classic
 * filter of at most 4,096 bits.
 */
export function measureRate(make, { n, probes, filters }) {
  const each = Math.ceil(probes / filters);
  let hits = 0;
  let fill = 0;
  let bits = null;
  for (let j = 0; j < filters; j++) {
    const f = make();
    try {
      f.addMany(freshKeys(n, 'added:'));
      hits += countHits(f, each);
      const s = f.stats();
      fill += s.fillRatio;
      if (j === 0 && s.kind === 'classic' && s.bits <= 4096) bits = bitsOf(f.toBytes(), s.bits);
    } finally {
      f.free();
    }
  }
  return { hits, probes: each * filters, filters, fill: fill / filters, bits };
}

/** How many of `probes` fresh keys filter f answers "probably" for. */
export function countHits(f, probes) {
  let hits = 0;
  for (let done = 0; done < probes; done += 20_000) {
    for (const hit of f.hasMany(freshKeys(Math.min(20_000, probes - done)))) if (hit) hits++;
  }
  return hits;
}

/** How many fresh keys to test against one filter whose rate is about `rate`: enough for about 400 false positives, 10,000 to PROBE_BUDGET. */
export function probesFor(rate) {
  return Math.min(PROBE_BUDGET, Math.max(10_000, Math.ceil(400 / Math.max(rate, 1e-9))));
}

/** The m bits of a classic filter's bytes (docs/format.md: a 64-byte header, then the bits, least significant first). */
export function bitsOf(bytes, m) {
  const out = new Uint8Array(m);
  for (let i = 0; i < m; i++) out[i] = (bytes[64 + (i >> 3)] >> (i & 7)) & 1;
  return out;
}
