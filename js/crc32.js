// CRC-32 (IEEE 802.3), as Go's hash/crc32.ChecksumIEEE: the checksum of a
// delta's bytes (delta.js) and of the edge service's stored chunks and log
// rows (worker/shard/store.js), which hold a shard of up to 32 MiB. It reads
// eight bytes a step (slicing by 8), for those large inputs.

// CRC_TABLES[k][b] is the CRC of byte b followed by k zero bytes.
let tables;

function makeTables() {
  const t = Array.from({ length: 8 }, () => new Int32Array(256));
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[0][n] = c;
  }
  for (let n = 0; n < 256; n++) {
    for (let k = 1; k < 8; k++) t[k][n] = t[0][t[k - 1][n] & 0xff] ^ (t[k - 1][n] >>> 8);
  }
  return t;
}

/** CRC-32 (IEEE 802.3) of bytes, as an unsigned integer. */
export function crc32(bytes) {
  tables ??= makeTables();
  const [t0, t1, t2, t3, t4, t5, t6, t7] = tables;
  let c = -1;
  let i = 0;
  for (const end = bytes.length - 8; i <= end; i += 8) {
    const a = c ^ (bytes[i] | (bytes[i + 1] << 8) | (bytes[i + 2] << 16) | (bytes[i + 3] << 24));
    c =
      t7[a & 0xff] ^
      t6[(a >>> 8) & 0xff] ^
      t5[(a >>> 16) & 0xff] ^
      t4[a >>> 24] ^
      t3[bytes[i + 4]] ^
      t2[bytes[i + 5]] ^
      t1[bytes[i + 6]] ^
      t0[bytes[i + 7]];
  }
  for (; i < bytes.length; i++) c = t0[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ -1) >>> 0;
}
