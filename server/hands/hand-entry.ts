import type { NewEvent, StoredEvent } from '~/lib/events';
import type { Hand, HandKind } from '~/lib/hand';
import type { HandRecord } from '~/lib/hand-log';
import type { ProvisionSpec } from '~/server/hands/provisioner';

/** How a harness step lets the registry append (with its lease fence) and when to give up. */
export interface HandScope {
  sessionId: string;
  emit: (event: NewEvent, idempotencyKey: string) => Promise<StoredEvent>;
  signal: AbortSignal;
  /**
   * The lease epoch of the harness acting (absent for a user's request). A new epoch means the
   * session may have run elsewhere since this process last looked: its hands are re-read from
   * the log, remote ones re-attached, local ones that are not here reported lost.
   */
  epoch?: number;
}

export interface HandEntry {
  /** The hand's name in this session (`sandbox-1`), which the brain and the log use. */
  id: string;
  kind: HandKind;
  /** `suspended`: its process is stopped to free the machine, its workspace kept; a call resumes it. */
  status: 'starting' | 'ready' | 'suspended' | 'released' | 'lost';
  hand: Hand | null;
  startedAt: number;
  /** When a call last started or ended on it: the reaper suspends the least recently used. */
  lastUsed: number;
  /** Calls running on it now (never suspended while busy). */
  inFlight: number;
  /** Seq of its `hand.provisioned` in the log, once written. */
  provisionedSeq?: number;
  /** What it was provisioned as: how a suspended hand starts again. */
  spec?: ProvisionSpec;
  /** The resume in progress, shared by parallel calls. */
  resuming?: Promise<void>;
  /** The suspend in progress (its process stopping, its event being written). */
  suspending?: Promise<void>;
  reason?: string;
  /** A remote hand's configured endpoint name (what it is re-attached by). */
  endpoint?: string;
}

export function newEntry(id: string, kind: HandKind, status: HandEntry['status']): HandEntry {
  const now = Date.now();
  return { id, kind, status, hand: null, startedAt: now, lastUsed: now, inFlight: 0 };
}

/** Takes calls now, or after a resume. */
export function usable(e: HandEntry): boolean {
  return (e.status === 'ready' && e.hand !== null) || e.status === 'suspended';
}

export function fromRecord(r: HandRecord): HandEntry {
  return {
    ...newEntry(r.id, r.kind as HandKind, r.status),
    startedAt: Date.parse(r.since),
    provisionedSeq: r.seq,
    ...(r.reason ? { reason: r.reason } : {}),
    ...(r.endpoint ? { endpoint: r.endpoint } : {}),
  };
}
