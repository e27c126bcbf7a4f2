import type { StoredEvent } from '~/lib/events';

/** A hand as the session log records it. */
export interface HandRecord {
  id: string;
  kind: string;
  status: 'ready' | 'released' | 'lost';
  since: string;
  /** Seq of its `hand.provisioned`: calls made before it may have run on it. */
  seq: number;
  reason?: string;
  /** A remote hand's configured endpoint name, to re-attach by. */
  endpoint?: string;
  /** How many times a harness re-attached it after taking the session over. */
  reattached?: number;
  /**
   * Set while a ready hand's process is stopped to free the machine (`hand.suspended`): its
   * workspace is kept and the next call resumes it. Still `ready` to callers: it is not lost.
   */
  suspended?: 'idle' | 'cap' | 'shutdown';
  /** Per-command limits it was provisioned with (a resumed hand keeps them). */
  resources?: { memory_mb?: number; cpu_seconds?: number };
}

/** Folds the log's `hand.*` events into the session's hands, in provisioning order. Pure. */
export function handsInLog(events: readonly StoredEvent[]): HandRecord[] {
  const hands = new Map<string, HandRecord>();
  for (const e of events) {
    switch (e.type) {
      case 'hand.provisioned':
        hands.set(e.hand, {
          id: e.hand,
          kind: e.kind,
          status: 'ready',
          since: e.processed_at,
          seq: e.seq,
          ...(e.endpoint ? { endpoint: e.endpoint } : {}),
          ...(e.resources ? { resources: e.resources } : {}),
        });
        break;
      case 'hand.reattached': {
        const h = hands.get(e.hand);
        if (h && h.status === 'ready') h.reattached = (h.reattached ?? 0) + 1;
        break;
      }
      case 'hand.suspended': {
        const h = hands.get(e.hand);
        if (h && h.status === 'ready') h.suspended = e.reason;
        break;
      }
      case 'hand.resumed': {
        const h = hands.get(e.hand);
        if (h) delete h.suspended;
        break;
      }
      case 'hand.released': {
        const h = hands.get(e.hand);
        if (h) {
          delete h.suspended;
          Object.assign(h, { status: 'released', since: e.processed_at, reason: e.transferred_to ? `transferred to ${e.transferred_to.session_id}` : undefined });
        }
        break;
      }
      case 'hand.lost': {
        const h = hands.get(e.hand);
        if (h && h.status === 'ready') {
          delete h.suspended;
          Object.assign(h, { status: 'lost', since: e.processed_at, reason: e.reason });
        }
        break;
      }
      default:
        break;
    }
  }
  return [...hands.values()];
}

/** The hand calls go to when they name none: the newest one still ready (suspended ones resume). */
export function currentHand(records: readonly HandRecord[]): HandRecord | null {
  for (let i = records.length - 1; i >= 0; i--) if (records[i]!.status === 'ready') return records[i]!;
  return null;
}
