import 'client-only';
/**
 * The offline engine's workspace in IndexedDB (database `paddock-offline-fs`), one record per
 * file, folder or symlink, keyed by [session id, absolute path], so a save writes only what a
 * command touched and a reload restores the workspace. Raw IndexedDB (no Dexie): it runs inside
 * the worker and needs three operations.
 */

const DB_NAME = 'paddock-offline-fs';
const STORE = 'entries';

export interface StoredEntry {
  session: string;
  path: string;
  kind: 'file' | 'dir' | 'symlink';
  data?: Uint8Array;
  target?: string;
  mode: number;
  mtime: number;
}

let dbPromise: Promise<IDBDatabase> | null = null;

function openDb(): Promise<IDBDatabase> {
  dbPromise ??= new Promise<IDBDatabase>((resolve, reject) => {
    const req = indexedDB.open(DB_NAME, 1);
    req.onupgradeneeded = () => {
      req.result.createObjectStore(STORE, { keyPath: ['session', 'path'] });
    };
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error ?? new Error('indexedDB.open failed'));
    req.onblocked = () => reject(new Error('indexedDB.open blocked by another tab'));
  }).catch((e: unknown) => {
    dbPromise = null;
    throw e;
  });
  return dbPromise;
}

/** Every entry below `session`'s keys, in path order (folders before their contents). */
function sessionRange(session: string, prefix = ''): IDBKeyRange {
  return IDBKeyRange.bound([session, prefix], [session, `${prefix}\uffff`]);
}

export async function loadEntries(session: string): Promise<StoredEntry[]> {
  const db = await openDb();
  return new Promise((resolve, reject) => {
    const req = db.transaction(STORE, 'readonly').objectStore(STORE).getAll(sessionRange(session));
    req.onsuccess = () => resolve(req.result as StoredEntry[]);
    req.onerror = () => reject(req.error ?? new Error('reading the workspace failed'));
  });
}

/**
 * One transaction: removes each path in `removed` with everything below it, then stores `puts`.
 * Resolves once the transaction has committed (a reload right after sees it).
 */
export async function saveEntries(session: string, puts: StoredEntry[], removed: string[]): Promise<void> {
  if (puts.length === 0 && removed.length === 0) return;
  const db = await openDb();
  await new Promise<void>((resolve, reject) => {
    const tx = db.transaction(STORE, 'readwrite');
    const store = tx.objectStore(STORE);
    for (const p of removed) {
      store.delete([session, p]);
      store.delete(sessionRange(session, `${p}/`));
    }
    for (const e of puts) store.put(e);
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error ?? new Error('saving the workspace failed'));
    tx.onabort = () => reject(tx.error ?? new Error('saving the workspace was aborted'));
  });
}
