// The module's CRC-32 against the bitwise definition and known values: it
// checks every delta and every row the edge service stores, so a wrong
// table would call good bytes damaged.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { crc32 } from '../crc32.js';

function bitwise(bytes) {
  let c = 0xffffffff;
  for (const b of bytes) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = c & 1 ? (0xedb88320 ^ (c >>> 1)) >>> 0 : c >>> 1;
  }
  return (c ^ 0xffffffff) >>> 0;
}

test('crc32: known values and every length and offset against the bitwise definition', () => {
  const enc = new TextEncoder();
  assert.equal(crc32(new Uint8Array(0)), 0);
  assert.equal(crc32(enc.encode('123456789')), 0xcbf43926);
  assert.equal(crc32(enc.encode('The quick brown fox jumps over the lazy dog')), 0x414fa339);
  const buf = new Uint8Array(300).map((_, i) => (i * 2654435761) >>> 24);
  for (let off = 0; off < 9; off++) {
    for (let n = 0; n + off <= buf.length; n += 7) {
      const part = buf.subarray(off, off + n);
      assert.equal(crc32(part), bitwise(part), `offset ${off}, length ${n}`);
    }
  }
});
