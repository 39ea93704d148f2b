// A shard's history: what its log held before each compaction, one segment
// a compaction, kept beside the chunks and the log (store.js) in the
// Durable Object's SQLite, so that a copy that fell behind past the log's
// tail still gets the bits it lacks as a delta. See DESIGN.md,
// "Persistence: chunks and the log".
//
//   history (seq, part,     one segment a compaction: the positions the log
//     since, count, n,      rows (since, seq] set, each once, increasing, as
//     data, crc)            a Rice-coded record body (js/rice.js), in parts
//                           of at most PART_POSITIONS; count is the count at
//                           seq, n the part's positions
//
// The newest segments are kept while they take at most historyLimit()
// bytes (the payload's), and a segment under minSegment() bytes takes the
// next compaction's positions too, so that a quiet shard does not pile up
// small ones. Every part carries a CRC-32 of its data.

import { crc32 } from '../../js/crc32.js';
import { encodeRice, decodeRice } from '../../js/rice.js';

// Positions in one part of a segment: Rice-coded, n positions below
// m <= 2^28 take about n * (log2(m / n) + 2) bits, at most 393 KiB for 2^18
// of them, under the storage's 2 MB value limit (maxValueBytes).
const PART_POSITIONS = 1 << 18;

/**
 * The history a shard keeps: segments while they take at most the
 * payload's bytes, enough for a copy behind by a tenth of the filter's
 * capacity (worker/test/sync.test.js), at most doubling what the shard
 * stores.
 */
export function historyLimit(payload) {
  return payload;
}

/** A segment under this many bytes takes the next compaction's positions too. */
export function minSegment(payload) {
  return Math.max(4096, Math.floor(payload / 64));
}

// unique sorts positions (a Uint32Array) in place and returns them each
// once.
export function unique(positions) {
  positions.sort();
  let n = 0;
  for (let i = 0; i < positions.length; i++) {
    if (i === 0 || positions[i] !== positions[n - 1]) positions[n++] = positions[i];
  }
  return positions.subarray(0, n);
}

/** The history segments of a shard, in its Durable Object's SQLite (storage.sql). */
export class History {
  constructor(sql, maxValueBytes) {
    this.sql = sql;
    this.maxValueBytes = maxValueBytes;
    this.sql.exec(
      'CREATE TABLE IF NOT EXISTS history (seq INTEGER NOT NULL, part INTEGER NOT NULL, since INTEGER NOT NULL, ' +
        'count INTEGER NOT NULL, n INTEGER NOT NULL, data BLOB NOT NULL, crc INTEGER NOT NULL, PRIMARY KEY (seq, part))',
    );
  }

  /** Drops every segment: no delta reaches past the log then. */
  clear() {
    this.sql.exec('DELETE FROM history');
  }

  /**
   * Writes live, the positions (unsorted, perhaps more than once) the log
   * rows (since, seq] set and the count at seq, as the segment ending at
   * seq (or into the newest one, ending at since, while it is under
   * minSegment()), and trims the history to historyLimit(). It returns
   * the bytes it wrote.
   */
  fold(live, since, seq, payload) {
    let written = 0;
    let from = since;
    let positions = live.positions;
    const [last] = this.sql
      .exec(
        'SELECT seq, since, sum(length(data)) AS bytes, sum(n) AS n FROM history GROUP BY seq ORDER BY seq DESC LIMIT 1',
      )
      .toArray();
    if (last && last.seq === since && last.bytes < minSegment(payload)) {
      const both = new Uint32Array(last.n + positions.length);
      if (this.positions(last.seq, both)) {
        both.set(positions, last.n);
        positions = both;
        from = last.since;
        this.sql.exec('DELETE FROM history WHERE seq = ?', last.seq);
      }
    }
    positions = unique(positions);
    for (let part = 0, at = 0; at < positions.length || part === 0; part++, at += PART_POSITIONS) {
      const some = positions.subarray(at, at + PART_POSITIONS);
      const data = encodeRice(some);
      if (data.length > this.maxValueBytes) throw new Error(`shard: a history part is ${data.length} bytes`);
      this.sql.exec(
        'INSERT INTO history (seq, part, since, count, n, data, crc) VALUES (?, ?, ?, ?, ?, ?, ?)',
        seq,
        part,
        from,
        live.count,
        some.length,
        data.buffer,
        crc32(data),
      );
      written += data.length;
    }
    // The newest segments while they fit historyLimit().
    let kept = 0;
    for (const row of this.sql.exec(
      'SELECT seq, sum(length(data)) AS bytes FROM history GROUP BY seq ORDER BY seq DESC',
    )) {
      kept += row.bytes;
      if (kept > historyLimit(payload)) {
        this.sql.exec('DELETE FROM history WHERE seq <= ?', row.seq);
        break;
      }
    }
    return written;
  }

  /**
   * The contiguous segments from the one that holds position since to the
   * one that reaches upTo: {segments, from, total, count}, where from is
   * the last one's end, total their positions and count the count at
   * from; null when the history does not hold all of it.
   */
  run(since, upTo) {
    const segments = [];
    let from = since;
    let total = 0;
    let count;
    const rows = this.sql
      .exec('SELECT seq, since, count, sum(n) AS n FROM history WHERE seq > ? GROUP BY seq ORDER BY seq', since)
      .toArray();
    for (const g of rows) {
      if (from >= upTo) break;
      // Contiguous, from the one that holds since.
      if (segments.length === 0 ? g.since > since : g.since !== from) return null;
      segments.push(g);
      from = g.seq;
      total += g.n;
      count = g.count;
    }
    return from < upTo ? null : { segments, from, total, count };
  }

  /**
   * Decodes the positions of the segment ending at seq into out; false when
   * a part fails its CRC-32 or does not decode.
   */
  positions(seq, out) {
    let at = 0;
    for (const row of this.sql.exec('SELECT n, data, crc FROM history WHERE seq = ? ORDER BY part', seq)) {
      const data = new Uint8Array(row.data);
      if (crc32(data) !== row.crc || at + row.n > out.length) return false;
      if (!decodeRice(data, 2, data.length, data[1], 2 ** 32, out.subarray(at, at + row.n))) return false;
      at += row.n;
    }
    return true;
  }

  /** The segments, for the tests. */
  info() {
    return this.sql
      .exec('SELECT seq, since, sum(n) AS n, sum(length(data)) AS bytes FROM history GROUP BY seq ORDER BY seq')
      .toArray();
  }
}
