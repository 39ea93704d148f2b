// XXH64 in BigInt arithmetic, as github.com/cespare/xxhash/v2 computes it:
// slow, and plain to read. The demo shows a key's digest with it, and the
// Node tests checksum the few bytes they write by hand.

export const MASK64 = (1n << 64n) - 1n;
const P1 = 11400714785074694791n;
const P2 = 14029467366897019727n;
const P3 = 1609587929392839161n;
const P4 = 9650029242287828579n;
const P5 = 2870177450012600261n;

const rotl = (x, r) => ((x << r) | (x >> (64n - r))) & MASK64;
const mul = (a, b) => (a * b) & MASK64;
const add = (a, b) => (a + b) & MASK64;

function round(acc, input) {
  acc = add(acc, mul(input, P2));
  return mul(rotl(acc, 31n), P1);
}

function merge(acc, val) {
  acc ^= round(0n, val);
  return add(mul(acc, P1), P4);
}

export function u64(b, i) {
  let x = 0n;
  for (let j = 7; j >= 0; j--) x = (x << 8n) | BigInt(b[i + j]);
  return x;
}

function u32(b, i) {
  return BigInt((b[i] | (b[i + 1] << 8) | (b[i + 2] << 16) | (b[i + 3] << 24)) >>> 0);
}

/** XXH64 of bytes b with seed (a BigInt), as github.com/cespare/xxhash/v2 computes it. */
export function xxh64(b, seed = 0n) {
  const n = b.length;
  let i = 0;
  let h;
  if (n >= 32) {
    let v1 = add(add(seed, P1), P2);
    let v2 = add(seed, P2);
    let v3 = seed;
    let v4 = (seed - P1) & MASK64;
    for (; i + 32 <= n; i += 32) {
      v1 = round(v1, u64(b, i));
      v2 = round(v2, u64(b, i + 8));
      v3 = round(v3, u64(b, i + 16));
      v4 = round(v4, u64(b, i + 24));
    }
    h = add(add(rotl(v1, 1n), rotl(v2, 7n)), add(rotl(v3, 12n), rotl(v4, 18n)));
    h = merge(merge(merge(merge(h, v1), v2), v3), v4);
  } else {
    h = add(seed, P5);
  }
  h = add(h, BigInt(n));
  for (; i + 8 <= n; i += 8) {
    h ^= round(0n, u64(b, i));
    h = add(mul(rotl(h, 27n), P1), P4);
  }
  if (i + 4 <= n) {
    h ^= mul(u32(b, i), P1);
    h = add(mul(rotl(h, 23n), P2), P3);
    i += 4;
  }
  for (; i < n; i++) {
    h ^= mul(BigInt(b[i]), P5);
    h = mul(rotl(h, 11n), P1);
  }
  h ^= h >> 33n;
  h = mul(h, P2);
  h ^= h >> 29n;
  h = mul(h, P3);
  h ^= h >> 32n;
  return h;
}
