import 'server-only';
import type { SessionAgent } from '~/lib/agent';
import type { BudgetLimit } from '~/lib/budget-limit';
import { InvalidInputError } from '~/lib/errors';
import type { SessionRow } from '~/server/session/schema';
import type { Session } from '~/server/session/store';

/** What a session row keeps as JSON beside its columns. */
export interface SessionExtra {
  vault_ids?: string[];
  resources?: unknown[];
  budget?: BudgetLimit | null;
}

/** A session row as the store answers it. */
export function toSession(row: SessionRow): Session {
  const extra = JSON.parse(row.extra) as SessionExtra;
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
    budget: extra.budget ?? null,
    waiting_on: row.waiting_on ?? null,
    last_message: row.last_message ?? null,
  };
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
