// A shard's snapshot (GET /snapshot of objects.go), streamed a piece at a
// time from the filter in the engine: no copy of the shard is ever whole,
// in the engine or in JS, so a snapshot of a shard at the cap (32 MiB)
// holds one piece (1 MiB) while it is sent instead of a 32 MiB copy.
//
// The snapshot is the filter as it was when the request arrived, byte for
// byte, however long the client takes to read it: the header (with its
// count) and the checksum are read then, in the request's synchronous turn,
// and adds that land while the rest is sent have their bits taken out of
// each piece again. That is exact because an add reports the bits it set,
// which were clear before it (addManyChanges), and bits are never cleared
// in a shard. The positions are kept per snapshot in flight, up to
// MAX_POSITIONS (4 MiB); a snapshot that outlives more adds than that ends
// short (the front's Content-Length check then fails the client's
// request, which it can repeat), rather than holding more memory than the
// copy it replaces. If the shard gives its filter back meanwhile (the
// engine's budget, a stopped engine), the next piece comes from the
// filter loaded again from storage, which holds every acknowledged add.

import { HEADER_SIZE as HEADER_BYTES, CHECKSUM_SIZE as TRAILER_BYTES } from '../../js/abi.js';

/** The bytes a snapshot reads from the engine at a time. */
export const PIECE_BYTES = 1 << 20;
/** The bit positions one snapshot in flight may keep: 4 MiB of them. */
export const MAX_POSITIONS = 1 << 20;

/**
 * Returns the Response of shard's snapshot: filter (the shard's, of the
 * request's parameters p) as it is now. shard.streams holds the snapshots
 * in flight; the shard passes each add's changed positions to their note().
 */
export function snapshotResponse(shard, p, filter) {
  const size = filter.byteLength;
  const end = size - TRAILER_BYTES;
  const head = filter.readBytes(0, HEADER_BYTES);
  const trailer = filter.readBytes(end, size);
  const since = {
    positions: [],
    kept: 0,
    note(changed) {
      // Counted for the tests (GET /_test/counters: snapshotRaces).
      if (changed.length > 0) shard.snapshotRaces = (shard.snapshotRaces ?? 0) + 1;
      this.kept += changed.length;
      if (this.kept <= MAX_POSITIONS) this.positions.push(changed);
      else this.positions = null;
    },
  };
  shard.streams.add(since);
  const done = () => shard.streams.delete(since);
  let offset = 0;
  const body = new ReadableStream(
    {
      async pull(controller) {
        try {
          if (shard.hooks) await shard.hooks.hold('PULL /snapshot');
          if (offset === 0) {
            controller.enqueue(head);
            offset = HEADER_BYTES;
            return;
          }
          if (offset === end) {
            done();
            controller.enqueue(trailer);
            controller.close();
            return;
          }
          const hi = Math.min(end, offset + PIECE_BYTES);
          const piece = await shard.withEngine('snapshot', () => shard.open(p).readBytes(offset, hi));
          if (since.positions === null) {
            throw new Error(`more than ${MAX_POSITIONS} bits were set while the snapshot was sent`);
          }
          clearSince(piece, offset, since.positions);
          controller.enqueue(piece);
          offset = hi;
        } catch (err) {
          done();
          console.error(`edgebloom shard: a snapshot ended at byte ${offset} of ${size}:`, err);
          controller.error(err);
        }
      },
      cancel: done,
    },
    // Read a piece only when the reader asks for it.
    { highWaterMark: 0 },
  );
  return new Response(body, { headers: { 'Content-Type': 'application/octet-stream' } });
}

// clearSince clears in piece, bytes [offset, offset + piece.length) of the
// encoding, every bit the positions name: bit p of the payload is bit p & 7
// of byte HEADER_BYTES + (p >>> 3).
function clearSince(piece, offset, positions) {
  const lo = (offset - HEADER_BYTES) * 8;
  const hi = lo + piece.length * 8;
  for (const changed of positions) {
    for (const p of changed) {
      if (p >= lo && p < hi) piece[(p - lo) >>> 3] &= ~(1 << (p & 7));
    }
  }
}
