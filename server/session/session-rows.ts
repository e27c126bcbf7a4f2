import 'server-only';
import type { SessionAgent } from '~/lib/agent';
import { InvalidInputError } from '~/lib/errors';
import type { SessionRow } from '~/server/session/schema';
import type { Session } from '~/server/session/store';

/** A session row as the store answers it. */
export function toSession(row: SessionRow): Session {
  const extra = JSON.parse(row.extra) as { vault_ids?: string[]; resources?: unknown[] };
  return {
    id: row.id,
    title: row.title,
    created_at: row.created_at,
    updated_at: row.updated_at,
    status: row.status,
    last_seq: row.last_seq,
    metadata: JSON.parse(row.metadata) as Record<string, string>,
    agent: row.agent ? (JSON.parse(row.agent) as SessionAgent) : null,
    environment_id: row.environment_id,
    archived_at: row.archived_at,
    vault_ids: extra.vault_ids ?? [],
    resources: extra.resources ?? [],
  };
}

export type CursorDir = 'next' | 'prev';

/** Opaque to clients: the ordering it belongs to, the row's key, and which way to walk from it. */
export function encodeCursor(by: string, key: string, id: string, dir: CursorDir): string {
  return Buffer.from(JSON.stringify([by, key, id, dir])).toString('base64url');
}

export function decodeCursor(cursor: string, by: string): { key: string; id: string; dir: CursorDir } {
  try {
    const v: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(v) && v.length === 4) {
      const [b, key, id, dir] = v as unknown[];
      if (b === by && typeof key === 'string' && typeof id === 'string' && (dir === 'next' || dir === 'prev')) return { key, id, dir };
    }
  } catch {
    // Fall through: any undecodable cursor gets the same message.
  }
  throw new InvalidInputError('page: not a cursor returned by this list');
}

export function integer(name: string, n: number): number {
  if (!Number.isInteger(n)) throw new InvalidInputError(`${name}: must be an integer`);
  return n;
}

export function positiveInt(name: string, n: number): number {
  if (!Number.isInteger(n) || n < 1) throw new InvalidInputError(`${name}: must be a positive integer`);
  return n;
}

export function nonNegativeInt(name: string, n: number): number {
  if (!Number.isInteger(n) || n < 0) throw new InvalidInputError(`${name}: must be a non-negative integer`);
  return n;
}

export function ttl(ttlMs: number): number {
  if (!Number.isFinite(ttlMs) || ttlMs <= 0) throw new InvalidInputError('ttlMs: must be a positive number');
  return Math.ceil(ttlMs);
}
