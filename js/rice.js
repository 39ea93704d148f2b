// Golomb-Rice coding of a delta record's positions (docs/format.md,
// "Deltas"; Go's snapshot/rice.go): the gaps d0 = p0 and dj = pj - pj-1 - 1
// of the increasing positions, each as q = d >> r one-bits and a zero-bit,
// then the r low bits of d, least significant first; the stream fills each
// byte from its least significant bit, and the bits after the last gap are
// 0. The edge service's shards encode with it (worker/shard/store.js), and
// applyDelta decodes.

import { DELTA_CODING_RICE, MAX_RICE_BITS } from './abi.js';

// The bits of positions' gaps coded with parameter r.
function cost(positions, r) {
  let total = positions.length * (r + 1);
  let prev = -1;
  for (let i = 0; i < positions.length; i++) {
    total += (positions[i] - prev - 1) >>> r;
    prev = positions[i];
  }
  return total;
}

/**
 * The body of a record of positions (a Uint32Array, increasing, each once):
 * the coding byte, the parameter r that codes them in the fewest bits, then
 * the gaps.
 */
export function encodeRice(positions) {
  const n = positions.length;
  let guess = 0;
  if (n > 0) {
    const v = ((positions[n - 1] + 1 - n) / n) * Math.LN2;
    if (v >= 1) guess = Math.min(MAX_RICE_BITS, Math.floor(Math.log2(v)));
  }
  let r = 0;
  let bits = Infinity;
  for (let c = Math.max(0, guess - 1); c <= Math.min(MAX_RICE_BITS, guess + 1); c++) {
    const b = cost(positions, c);
    if (b < bits) [r, bits] = [c, b];
  }
  if (n === 0) bits = 0;
  const out = new Uint8Array(2 + Math.ceil(bits / 8));
  out[0] = DELTA_CODING_RICE;
  out[1] = r;
  let at = 2;
  let acc = 0;
  let nb = 0;
  // Appends the n <= 24 low bits of v; nb < 8 on entry.
  const put = (v, count) => {
    acc |= v << nb;
    nb += count;
    while (nb >= 8) {
      out[at++] = acc & 0xff;
      acc >>>= 8;
      nb -= 8;
    }
  };
  const mask = 2 ** r - 1;
  let prev = -1;
  for (let i = 0; i < n; i++) {
    const d = positions[i] - prev - 1;
    prev = positions[i];
    let q = d >>> r;
    for (; q >= 24; q -= 24) put(0xffffff, 24);
    put((1 << q) - 1, q + 1); // q ones, then the zero
    put(d & mask, r);
  }
  if (nb > 0) out[at++] = acc;
  return out;
}

/**
 * Reads n positions below m coded with parameter r from bytes[start, end)
 * into out (a Uint32Array of length n). Returns false when the stream ends
 * early, a position reaches m, or bits other than 0 follow the last gap.
 */
export function decodeRice(bytes, start, end, r, m, out) {
  let at = start;
  let acc = 0; // the unread bits, least significant first
  let nb = 0;
  let p = -1;
  const mask = 2 ** r - 1;
  const scale = 2 ** r;
  for (let j = 0; j < out.length; j++) {
    let q = 0;
    for (;;) {
      if (nb === 0) {
        if (at === end) return false;
        acc = bytes[at++];
        nb = 8;
      }
      // The ones before the first zero of acc: trailing zeros of ~acc.
      const inv = ~acc;
      const ones = 31 - Math.clz32(inv & -inv);
      if (ones < nb) {
        q += ones;
        acc >>>= ones + 1;
        nb -= ones + 1;
        break;
      }
      q += nb;
      acc = 0;
      nb = 0;
      if (q > m) return false;
    }
    while (nb < r) {
      if (at === end) return false;
      acc |= bytes[at++] << nb;
      nb += 8;
    }
    const d = q * scale + (acc & mask);
    acc >>>= r;
    nb -= r;
    p += 1 + d;
    if (p >= m) return false;
    out[j] = p;
  }
  return at === end && acc === 0;
}
