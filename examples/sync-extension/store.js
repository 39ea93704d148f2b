// The copy in IndexedDB, one object store, per filter name NAME:
//   NAME               {at, base: {at, gen, bytes}, deltas, deltaBytes, savedAt}
//   NAME/base/G        the copy's encoding at checkpoint base.at, a Blob, written as generation G
//   NAME/delta/JJJJJJ  the J-th delta applied since, as the service sent it
// where `at` is a checkpoint: {generation, checkpoint, cursor}. The
// encoding is kept as a Blob: the service's answer goes from the network
// into the browser's blob storage and from there into IndexedDB without
// passing through this worker's memory, and a transaction's structured
// clone of a Blob is a handle, not its bytes.
import { fromStream, applyDelta } from './edgebloom/index.js';

const key = (filter, kind, i) => `${filter}/${kind}/${String(i).padStart(6, '0')}`;
const range = (filter, kind) => IDBKeyRange.bound(`${filter}/${kind}/`, `${filter}/${kind}/\uffff`);

let opening;
function idb(mode, op) {
  opening ??= new Promise((resolve, reject) => {
    const req = indexedDB.open('edgebloom-sync', 5);
    req.onupgradeneeded = () => {
      // Versions 1 to 4 kept a /changes cursor, or the encoding in pieces: start again.
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
 * Loads an encoding kept as a Blob into the engine, after checking its
 * size: fromStream reads it chunk by chunk (blob.stream()) straight into
 * the filter's memory in the engine, so this worker never holds a buffer of
 * all of it.
 */
export function loadBlob(blob, expected) {
  if (!(blob instanceof Blob) || blob.size !== expected)
    throw new Error(`the copy's encoding is ${blob?.size ?? 'not a Blob of'} bytes, not ${expected}`);
  return fromStream(blob);
}

/**
 * Reads the copy back: its encoding, then the deltas kept since. Resolves
 * with {filter, saved} or null when nothing is saved.
 */
export async function load(name) {
  const saved = await idb('readonly', (s) => s.get(name));
  if (!saved) return null;
  const blob = await idb('readonly', (s) => s.get(`${name}/base/${saved.base.gen}`));
  const filter = await loadBlob(blob, saved.base.bytes);
  const deltas = await idb('readonly', (s) => s.getAll(range(name, 'delta')));
  let c = saved.base.at.cursor;
  for (const d of deltas) c = applyDelta(filter, d, c);
  return { filter, saved };
}

/**
 * Keeps blob as the copy's encoding at checkpoint `at`, in the transaction
 * that writes the record naming it and drops the other generations and the
 * deltas kept; resolves with the record.
 */
export async function keepBase(name, saved, blob, at) {
  const gen = (saved?.base.gen ?? 0) + 1;
  const mine = `${name}/base/${gen}`;
  const next = { at, base: { at, gen, bytes: blob.size }, deltas: 0, deltaBytes: 0, savedAt: Date.now() };
  await idb('readwrite', (s) => {
    s.delete(IDBKeyRange.bound(`${name}/base/`, mine, false, true));
    s.delete(IDBKeyRange.bound(mine, `${name}/base/\uffff`, true, false));
    s.delete(range(name, 'delta'));
    s.put(blob, mine);
    return s.put(next, name);
  });
  return next;
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
