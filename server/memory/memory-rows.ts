import 'server-only';
import { createHash } from 'node:crypto';
import type { ExpressionBuilder, Kysely, Selectable } from 'kysely';
import { InvalidInputError, NotFoundError, TooLargeError } from '~/lib/errors';
import { MemoryConflictError } from '~/lib/memory-errors';
import { MAX_MEMORY_BYTES, utf8Length } from '~/lib/memory-path';
import { type Memory, type MemoryStore, type MemoryVersion, type MemoryView, actorOf } from '~/server/memory/memory-types';
import type { Database, MemoriesTable, MemoryStoresTable, MemoryVersionsTable, Tx } from '~/server/session/schema';

/** The memory tables' rows as the API shapes them, and the errors and checks the repository shares. */

export const sha256Hex = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');

/**
 * `path` starts with `prefix`, the same on both databases: a comparison of the first characters
 * (code points in both), where a range or LIKE would follow PostgreSQL's collation or SQLite's
 * case folding.
 */
export const startsWith =
  (prefix: string) =>
  (eb: ExpressionBuilder<Database, 'memories'>) =>
    eb(eb.fn<string>('substr', ['path', eb.val(1), eb.val([...prefix].length)]), '=', prefix);

export function isUniqueViolation(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === '23505';
}

export function storeOf(r: Selectable<MemoryStoresTable>): MemoryStore {
  return { id: r.id, type: 'memory_store', name: r.name, description: r.description, metadata: JSON.parse(r.metadata) as Record<string, string>, created_at: r.created_at, updated_at: r.updated_at, archived_at: r.archived_at };
}

export function memoryOf(r: Selectable<MemoriesTable>, view: MemoryView): Memory {
  const m: Memory = { id: r.id, type: 'memory', memory_store_id: r.store_id, memory_version_id: r.version_id, path: r.path, content_sha256: r.content_sha256, content_size_bytes: Number(r.size_bytes), created_at: r.created_at, updated_at: r.updated_at };
  return view === 'full' ? { ...m, content: r.content } : m;
}

export function versionOf(r: Selectable<MemoryVersionsTable>, view: MemoryView): MemoryVersion {
  const v: MemoryVersion = {
    id: r.id,
    type: 'memory_version',
    memory_id: r.memory_id,
    memory_store_id: r.store_id,
    operation: r.operation,
    created_at: r.created_at,
    created_by: actorOf(r.actor_type, r.actor_id),
    path: r.path,
    content_sha256: r.content_sha256,
    content_size_bytes: r.size_bytes === null ? null : Number(r.size_bytes),
    redacted_at: r.redacted_at,
    ...(r.redacted_by_type && r.redacted_by_id ? { redacted_by: actorOf(r.redacted_by_type, r.redacted_by_id) } : {}),
  };
  return view === 'full' ? { ...v, content: r.content } : v;
}

export function checkContent(content: string): void {
  if (content.includes('\0')) throw new InvalidInputError('content: must be text without NUL');
  if (utf8Length(content) > MAX_MEMORY_BYTES) throw new TooLargeError(`content: over the limit of ${MAX_MEMORY_BYTES} bytes (UTF-8)`);
}

/** Within a transaction, its own connection (SQLite's one connection is the transaction's). */
export async function mustExist(db: Kysely<Database> | Tx, storeId: string): Promise<void> {
  const s = await db.selectFrom('memory_stores').select('id').where('id', '=', storeId).executeTakeFirst();
  if (!s) throw new NotFoundError('memory store', storeId);
}

export function preconditionFailed(id: string, current: string | null): MemoryConflictError {
  return new MemoryConflictError('memory_precondition_failed_error', `memory ${id} changed: its content_sha256 ${current ? `is ${current}, ` : ''}not the one expected; read it again and retry`);
}

export function pathConflict(path: string, clash: { id: string; path: string } | null): MemoryConflictError {
  const where = clash ? (clash.path === path ? `memory ${clash.id} is at ${JSON.stringify(path)}` : `memory ${clash.id} at ${JSON.stringify(clash.path)} overlaps ${JSON.stringify(path)} (a path cannot be both a memory and a directory)`) : `another memory took ${JSON.stringify(path)}`;
  return new MemoryConflictError('memory_path_conflict_error', `path conflict: ${where}`, clash ? { conflicting_memory_id: clash.id, conflicting_path: clash.path } : {});
}
