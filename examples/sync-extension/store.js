// The copy in IndexedDB, one object store, per filter name NAME:
//   NAME                {at, base: {at, gen, pieces, bytes}, deltas, deltaBytes, savedAt}
//   NAME/base/G/IIIIII  piece I of the copy's encoding at checkpoint base.at, written as generation G
//   NAME/delta/JJJJJJ   the J-th delta applied since, as the service sent it
// where `at` is a checkpoint: {generation, checkpoint, cursor}. A piece is
// written in a transaction of its own as it arrives, so no transaction
// holds the clone of more than one piece.
import { fromBytes, applyDelta } from './edgebloom/index.js';
import { PIECE_BYTES } from './checkpoints.js';

const key = (filter, kind, i) => `${filter}/${kind}/${String(i).padStart(6, '0')}`;
const range = (filter, kind) => IDBKeyRange.bound(`${filter}/${kind}/`, `${filter}/${kind}/\uffff`);

let opening;
function idb(mode, op) {
  opening ??= new Promise((resolve, reject) => {
    const req = indexedDB.open('edgebloom-sync', 4);
    req.onupgradeneeded = () => {
      // Versions 1 to 3 kept a /changes cursor, not a checkpoint: start again.
      if (req.result.objectStoreNames.contains('copies')) req.result.deleteObjectStore('copies');
      req.result.createObjectStore('copies');
    };
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => {
      opening = undefined;
      reject(req.error);
    };
  });
  return opening.then(
    (db) =>
      new Promise((resolve, reject) => {
        const tx = db.transaction('copies', mode);
        const req = op(tx.objectStore('copies'));
        tx.oncomplete = () => resolve(req?.result);
        tx.onerror = tx.onabort = () => reject(tx.error ?? new Error('IndexedDB transaction aborted'));
      }),
  );
}

/**
 * Reads the copy back: its encoding piece by piece into one buffer (no
 * second copy of the pieces is held), then the deltas kept since.
 * Resolves with {filter, saved} or null when nothing is saved.
 */
export async function load(name) {
  const saved = await idb('readonly', (s) => s.get(name));
  if (!saved) return null;
  const encoding = new Uint8Array(saved.base.bytes);
  let at = 0;
  await idb('readonly', (s) => {
    s.openCursor(range(name, `base/${saved.base.gen}`)).onsuccess = (e) => {
      const c = e.target.result;
      if (!c) return;
      encoding.set(c.value, at);
      at += c.value.length;
      c.continue();
    };
  });
  if (at !== encoding.length) throw new Error(`the saved copy of ${name} is ${at} bytes, not ${encoding.length}`);
  const filter = fromBytes(encoding);
  const deltas = await idb('readonly', (s) => s.getAll(range(name, 'delta')));
  let c = saved.base.at.cursor;
  for (const d of deltas) c = applyDelta(filter, d, c);
  return { filter, saved };
}

/**
 * A new base for the copy: put(piece, i) writes its pieces (each a copy of
 * its own bytes: a view's structured clone is its whole buffer) under a
 * generation the record does not name yet; commit(at, bytes) writes the
 * record naming it, in the transaction that drops the other generations
 * and the deltas kept, and resolves with the record.
 */
export function newBase(name, saved) {
  const gen = (saved?.base.gen ?? 0) + 1;
  const mine = range(name, `base/${gen}`);
  let pieces = 0;
  return {
    put: (piece, i) =>
      idb('readwrite', (s) => {
        if (i === 0) s.delete(mine); // what a write of this generation left unfinished
        s.put(piece, key(name, `base/${gen}`, i));
        pieces = i + 1;
      }),
    /** Writes all of bytes, a piece at a time. */
    async putAll(bytes) {
      for (let i = 0; i * PIECE_BYTES < bytes.length; i++)
        await this.put(bytes.slice(i * PIECE_BYTES, (i + 1) * PIECE_BYTES), i);
    },
    async commit(at, bytes) {
      if (pieces !== Math.ceil(bytes / PIECE_BYTES)) throw new Error(`${pieces} pieces written for ${bytes} bytes`);
      const next = { at, base: { at, gen, pieces, bytes }, deltas: 0, deltaBytes: 0, savedAt: Date.now() };
      await idb('readwrite', (s) => {
        s.delete(IDBKeyRange.bound(`${name}/base/`, mine.lower, false, true));
        s.delete(IDBKeyRange.bound(mine.upper, `${name}/base/\uffff`, true, false));
        s.delete(range(name, 'delta'));
        return s.put(next, name);
      });
      return next;
    },
  };
}

/** Keeps a delta applied after saved's and the record naming `at`; resolves with the record. */
export async function keepDelta(name, saved, bytes, at) {
  const j = saved.deltas;
  const next = { ...saved, at, deltas: j + 1, deltaBytes: saved.deltaBytes + bytes.length, savedAt: Date.now() };
  await idb('readwrite', (s) => {
    s.put(bytes, key(name, 'delta', j));
    return s.put(next, name);
  });
  return next;
}
