import 'client-only';
import Dexie, { type EntityTable } from 'dexie';
import type { StoredEvent } from '~/lib/events';

/** The browser's copy of what it has seen: sessions and their logs, keyed exactly as on the server. */
export interface MirroredSession {
  id: string;
  title: string;
  status: string;
  created_at: string;
  updated_at: string;
  last_seq: number;
}

export interface MirroredEvent {
  session_id: string;
  seq: number;
  event: StoredEvent;
}

class MirrorDb extends Dexie {
  sessions!: EntityTable<MirroredSession, 'id'>;
  events!: Dexie.Table<MirroredEvent, [string, number]>;

  constructor() {
    super('paddock-mirror');
    this.version(1).stores({
      sessions: 'id, updated_at',
      events: '[session_id+seq], session_id',
    });
  }
}

let db: MirrorDb | null = null;
export function mirror(): MirrorDb {
  db ??= new MirrorDb();
  return db;
}

export async function mirroredEvents(sessionId: string): Promise<StoredEvent[]> {
  const rows = await mirror().events.where('[session_id+seq]').between([sessionId, 0], [sessionId, Infinity]).toArray();
  return rows.map((r) => r.event);
}

/** The newest `n` mirrored events, oldest first: enough to paint a long session at once. */
export async function mirroredTail(sessionId: string, n: number): Promise<StoredEvent[]> {
  const rows = await mirror().events.where('[session_id+seq]').between([sessionId, 0], [sessionId, Infinity]).reverse().limit(n).toArray();
  return rows.reverse().map((r) => r.event);
}

/** Idempotent: the key is (session, seq), so a replayed event overwrites itself. */
export async function mirrorEvents(events: readonly StoredEvent[]): Promise<void> {
  if (events.length === 0) return;
  await mirror().events.bulkPut(events.map((event) => ({ session_id: event.session_id, seq: event.seq, event })));
}

export async function mirrorSessions(sessions: readonly MirroredSession[]): Promise<void> {
  if (sessions.length === 0) return;
  await mirror().sessions.bulkPut(
    sessions.map(({ id, title, status, created_at, updated_at, last_seq }) => ({ id, title, status, created_at, updated_at, last_seq })),
  );
}

/** A deleted session leaves this browser's copy too. */
export async function forgetSession(sessionId: string): Promise<void> {
  await mirror().transaction('rw', mirror().sessions, mirror().events, async () => {
    await mirror().sessions.delete(sessionId);
    await mirror().events.where('session_id').equals(sessionId).delete();
  });
}

/**
 * Signing out forgets what this browser kept: the mirror and the service worker's page copies,
 * so the next person at this browser reads nothing offline either.
 */
export async function forgetMirror(): Promise<void> {
  await mirror().delete();
  db = null;
  // The worker goes first, so it cannot put a page back; the next sign-in registers it again.
  if (typeof navigator !== 'undefined' && 'serviceWorker' in navigator) {
    for (const r of await navigator.serviceWorker.getRegistrations()) await r.unregister();
  }
  if (typeof caches !== 'undefined') for (const name of await caches.keys()) await caches.delete(name);
}
