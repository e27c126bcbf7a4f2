import { type NewEvent, type StoredEvent, parseStoredEvent } from '~/lib/events';

/** A session log for pure tests: seq, id and processed_at assigned as the store does, each event parsed. */
export function storedLog(...events: NewEvent[]): StoredEvent[] {
  return events.map((e, i) =>
    parseStoredEvent({ ...e, id: `sevt_${String(i + 1).padStart(26, '0')}`, session_id: 'sesn_test', seq: i + 1, processed_at: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString() }),
  );
}
