// The filter's bytes in IndexedDB: one record, written whole. IndexedDB
// stores binary values as they are (chrome.storage.local would need base64,
// a third more, inside its 10 MB quota) and its quota is a share of the
// disk, not 10 MB.

const DB = 'edgebloom';
const STORE = 'filters';

let opening;
function db() {
  opening ??= new Promise((resolve, reject) => {
    const req = indexedDB.open(DB, 1);
    req.onupgradeneeded = () => req.result.createObjectStore(STORE);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => {
      opening = undefined;
      reject(req.error);
    };
  });
  return opening;
}

function request(mode, run) {
  return db().then(
    (d) =>
      new Promise((resolve, reject) => {
        const tx = d.transaction(STORE, mode);
        const req = run(tx.objectStore(STORE));
        tx.oncomplete = () => resolve(req.result);
        tx.onerror = tx.onabort = () => reject(tx.error ?? new Error('IndexedDB transaction aborted'));
      }),
  );
}

/** The saved bytes of filter `name`, or undefined. */
export function load(name) {
  return request('readonly', (s) => s.get(name));
}

/** Saves bytes as filter `name`; resolves once the transaction committed. */
export function save(name, bytes) {
  return request('readwrite', (s) => s.put(bytes, name));
}
