import type { Page } from '@playwright/test';

/** The seqs the tab mirrored for a session, read straight from IndexedDB. */
export function mirroredSeqs(page: Page, sessionId: string): Promise<number[]> {
  return page.evaluate(
    (id) =>
      new Promise<number[]>((resolve, reject) => {
        const open = indexedDB.open('paddock-mirror');
        open.onerror = () => reject(new Error('cannot open the mirror'));
        open.onsuccess = () => {
          const all = open.result.transaction('events', 'readonly').objectStore('events').getAll(IDBKeyRange.bound([id, 0], [id, Infinity]));
          all.onsuccess = () => resolve((all.result as Array<{ seq: number }>).map((r) => r.seq));
        };
      }),
    sessionId,
  );
}
