// A shard's POST /merge (front/merge.go): bits set offline OR'ed into the
// shard. The body is the positions, uint32 little-endian and increasing
// (the front decoded them from the client's delta), and X-Edgebloom-Count
// what the merge adds to the shard's count. The positions not yet set are
// set and persisted exactly as an add's are (one log row in the
// transaction of the answer, then the compaction's usual course), so
// /changes, checkpoints and running snapshots see them; the count grows
// only when some bit was new, so a merge sent twice (a retry after a lost
// answer) changes nothing the second time. The answer is {"set": n}, the
// positions that were new.

import { HEADER_SIZE, CHECKSUM_SIZE } from '../../js/abi.js';
import { HttpError } from './shard.js';

// Bytes of the payload read at once to test the positions' bits.
const WINDOW = 64 << 10;

export function merge(shard, filter, request, body) {
  const header = request.headers.get('X-Edgebloom-Count') ?? '';
  const count = /^[0-9]{1,16}$/.test(header) ? Number(header) : NaN;
  if (!(body instanceof Uint8Array) || body.length % 4 !== 0 || !Number.isSafeInteger(count))
    throw new HttpError(400, 'bad_shard_request', 'POST /merge takes uint32 positions and X-Edgebloom-Count');
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  const n = body.length / 4;
  const bits = filter.bits;
  // Checked whole before anything changes.
  for (let i = 0, last = -1; i < n; i++) {
    const p = view.getUint32(4 * i, true);
    if (p <= last || p >= bits)
      throw new HttpError(400, 'bad_shard_request', `POST /merge: position ${p} is not increasing below ${bits}`);
    last = p;
  }
  // The payload's byte p >> 3 holds bit p at 1 << (p & 7) (little-endian
  // 64-bit words, docs/format.md).
  const end = filter.byteLength - CHECKSUM_SIZE;
  const changed = new Uint32Array(n);
  let found = 0;
  let lo = 0;
  let win = new Uint8Array(0);
  for (let i = 0; i < n; i++) {
    const p = view.getUint32(4 * i, true);
    const at = HEADER_SIZE + (p >>> 3);
    if (at >= lo + win.length) {
      lo = at;
      win = filter.readBytes(lo, Math.min(end, lo + WINDOW));
    }
    if ((win[at - lo] & (1 << (p & 7))) === 0) changed[found++] = p;
  }
  if (found > 0) {
    const changes = { changed: changed.subarray(0, found), count: filter.count + count };
    filter.applyChanges(changes);
    shard.logged(filter, changes);
    for (const s of shard.streams) s.note(changes.changed);
  }
  return new Response(JSON.stringify({ set: found }), {
    status: 200,
    headers: { 'Content-Type': 'application/json' },
  });
}
