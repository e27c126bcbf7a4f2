import 'server-only';
import type { Kysely, Selectable } from 'kysely';
import { z } from 'zod';
import { patchMetadata } from '~/lib/agent';
import { ConflictError, NotFoundError } from '~/lib/errors';
import { newId } from '~/lib/ids';
import { rollUp, utf8Length } from '~/lib/memory-path';
import { decodeCursor, encodeCursor } from '~/lib/page-cursor';
import { checkContent, isUniqueViolation, memoryOf, mustExist, pathConflict, preconditionFailed, sha256Hex, startsWith, storeOf, versionOf } from '~/server/memory/memory-rows';
import type { Actor, Memory, MemoryOperation, MemoryPrefix, MemoryStore, MemoryVersion, MemoryView } from '~/server/memory/memory-types';
import { actorId } from '~/server/memory/memory-types';
import { type ListPage, type TimeRange, keysetWalk, newestFirst, pageOf, whereTimeRange } from '~/server/session/keyset-page';
import type { Database, MemoriesTable, Tx } from '~/server/session/schema';

export { sha256Hex } from '~/server/memory/memory-rows';

/** A store's memories listed in one list call at most (rolled up or not); a bigger store pages by prefix. */
const MAX_LISTED_PATHS = 10_000;

export interface StoreInput {
  name?: string | null;
  description?: string | null;
  metadata?: Record<string, string | null> | null;
}

export interface MemoryListQuery {
  pathPrefix?: string | undefined;
  depth?: number | undefined;
  view: MemoryView;
  limit: number;
  page?: string | undefined;
}

export interface VersionListQuery {
  memoryId?: string | undefined;
  operation?: MemoryOperation | undefined;
  sessionId?: string | undefined;
  apiKeyId?: string | undefined;
  createdAt?: TimeRange | undefined;
  view: MemoryView;
  limit: number;
  page?: string | undefined;
}

/**
 * Memory stores in the session database, on SQLite and PostgreSQL alike. Every write to a memory
 * is one transaction that also appends its version, so the history never misses a change; a
 * precondition is checked by the UPDATE itself (`where content_sha256 = expected`), so two writers
 * racing on one memory cannot both win.
 */
export class MemoryRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async createStore(input: { name: string; description?: string | undefined; metadata?: Record<string, string> | undefined }): Promise<MemoryStore> {
    const now = new Date().toISOString();
    const row = { id: newId('memstore'), name: input.name, description: input.description ?? '', metadata: JSON.stringify(input.metadata ?? {}), created_at: now, updated_at: now, archived_at: null };
    await this.db.insertInto('memory_stores').values(row).execute();
    return storeOf(row);
  }

  async getStore(id: string): Promise<MemoryStore> {
    const r = await this.db.selectFrom('memory_stores').selectAll().where('id', '=', id).executeTakeFirst();
    if (!r) throw new NotFoundError('memory store', id);
    return storeOf(r);
  }

  /** Stores by id (unknown ones left out): what a session's resources name. */
  async getStores(ids: readonly string[]): Promise<MemoryStore[]> {
    if (ids.length === 0) return [];
    return (await this.db.selectFrom('memory_stores').selectAll().where('id', 'in', [...ids]).execute()).map(storeOf);
  }

  async updateStore(id: string, p: StoreInput): Promise<MemoryStore> {
    const prev = await this.getStore(id);
    if (prev.archived_at !== null) throw new ConflictError(`memory store ${id} is archived: it is read-only`);
    const now = new Date().toISOString();
    const next = { name: p.name ?? prev.name, description: p.description === undefined ? prev.description : (p.description ?? ''), metadata: patchMetadata(prev.metadata, p.metadata) };
    await this.db.updateTable('memory_stores').set({ ...next, metadata: JSON.stringify(next.metadata), updated_at: now }).where('id', '=', id).execute();
    return { ...prev, ...next, updated_at: now };
  }

  async listStores(q: { limit: number; page?: string | undefined; includeArchived: boolean; createdAt?: TimeRange }): Promise<ListPage<MemoryStore>> {
    let query = this.db.selectFrom('memory_stores').selectAll();
    if (!q.includeArchived) query = query.where('archived_at', 'is', null);
    query = whereTimeRange(query, 'created_at', 'created_at', q.createdAt);
    const page = await newestFirst(query, `memory_stores:${q.includeArchived ? 'all' : 'live'}`, q.page, q.limit);
    return { data: page.data.map(storeOf), next_page: page.next_page };
  }

  /** Read-only from now on (its memories stay readable; sessions can no longer attach it). */
  async archiveStore(id: string): Promise<MemoryStore> {
    const now = new Date().toISOString();
    const r = await this.db
      .updateTable('memory_stores')
      .set((eb) => ({ archived_at: eb.fn.coalesce('archived_at', eb.val(now)), updated_at: now }))
      .where('id', '=', id)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) throw new NotFoundError('memory store', id);
    return this.getStore(id);
  }

  /** The store, its memories and all their versions. */
  async deleteStore(id: string): Promise<{ id: string; type: 'memory_store_deleted' }> {
    await this.db.transaction().execute(async (trx) => {
      const r = await trx.deleteFrom('memory_stores').where('id', '=', id).executeTakeFirst();
      if (Number(r.numDeletedRows) === 0) throw new NotFoundError('memory store', id);
      await trx.deleteFrom('memories').where('store_id', '=', id).execute();
      await trx.deleteFrom('memory_versions').where('store_id', '=', id).execute();
    });
    return { id, type: 'memory_store_deleted' };
  }

  /** The store, writable: unknown is 404, archived is 409. */
  private async writable(trx: Tx, storeId: string): Promise<void> {
    const s = await trx.selectFrom('memory_stores').select('archived_at').where('id', '=', storeId).executeTakeFirst();
    if (!s) throw new NotFoundError('memory store', storeId);
    if (s.archived_at !== null) throw new ConflictError(`memory store ${storeId} is archived: it is read-only`);
  }

  /**
   * A path is taken when a memory has it, or when it would turn a memory into a directory or a
   * directory into a memory (`/a` beside `/a/b`): the store must stay mountable as a file tree.
   */
  private async checkPathFree(trx: Tx, storeId: string, path: string, self: string | null): Promise<void> {
    const ancestors: string[] = [];
    for (let i = path.indexOf('/', 1); i > 0; i = path.indexOf('/', i + 1)) ancestors.push(path.slice(0, i));
    const clash = await trx
      .selectFrom('memories')
      .select(['id', 'path'])
      .where('store_id', '=', storeId)
      .where((eb) => eb.or([eb('path', '=', path), ...(ancestors.length > 0 ? [eb('path', 'in', ancestors)] : []), startsWith(`${path}/`)(eb)]))
      .$if(self !== null, (q) => q.where('id', '!=', self!))
      .limit(1)
      .executeTakeFirst();
    if (clash) throw pathConflict(path, clash);
  }

  private async addVersion(trx: Tx, v: { storeId: string; memoryId: string; operation: MemoryOperation; path: string | null; content: string | null; actor: Actor; at: string }): Promise<string> {
    const id = newId('memver');
    await trx
      .insertInto('memory_versions')
      .values({
        id,
        store_id: v.storeId,
        memory_id: v.memoryId,
        operation: v.operation,
        path: v.path,
        content: v.content,
        content_sha256: v.content === null ? null : sha256Hex(v.content),
        size_bytes: v.content === null ? null : utf8Length(v.content),
        created_at: v.at,
        actor_type: v.actor.type,
        actor_id: actorId(v.actor),
        redacted_at: null,
        redacted_by_type: null,
        redacted_by_id: null,
      })
      .execute();
    return id;
  }

  async createMemory(storeId: string, input: { path: string; content: string }, actor: Actor, view: MemoryView = 'basic'): Promise<Memory> {
    checkContent(input.content);
    try {
      return await this.db.transaction().execute(async (trx) => {
        await this.writable(trx, storeId);
        await this.checkPathFree(trx, storeId, input.path, null);
        const at = new Date().toISOString();
        const id = newId('mem');
        const versionId = await this.addVersion(trx, { storeId, memoryId: id, operation: 'created', path: input.path, content: input.content, actor, at });
        const row = { id, store_id: storeId, path: input.path, content: input.content, content_sha256: sha256Hex(input.content), size_bytes: utf8Length(input.content), version_id: versionId, created_at: at, updated_at: at };
        await trx.insertInto('memories').values(row).execute();
        return memoryOf(row, view);
      });
    } catch (e) {
      // Another writer took the path between the check and the insert.
      if (isUniqueViolation(e)) throw pathConflict(input.path, null);
      throw e;
    }
  }

  private async row(db: Kysely<Database> | Tx, storeId: string, id: string): Promise<Selectable<MemoriesTable>> {
    const r = await db.selectFrom('memories').selectAll().where('id', '=', id).where('store_id', '=', storeId).executeTakeFirst();
    if (!r) {
      await mustExist(db, storeId);
      throw new NotFoundError('memory', id);
    }
    return r;
  }

  async getMemory(storeId: string, id: string, view: MemoryView = 'full'): Promise<Memory> {
    return memoryOf(await this.row(this.db, storeId, id), view);
  }

  /** The memory at a path, or null. */
  async memoryAt(storeId: string, path: string): Promise<Memory | null> {
    const r = await this.db.selectFrom('memories').selectAll().where('store_id', '=', storeId).where('path', '=', path).executeTakeFirst();
    return r ? memoryOf(r, 'full') : null;
  }

  /**
   * A new content and/or path. `expectedSha256` (the `content_sha256` precondition) must match the
   * memory's current content or nothing changes (409 memory_precondition_failed_error). An update
   * that changes nothing writes no version.
   */
  async updateMemory(storeId: string, id: string, p: { content?: string | null | undefined; path?: string | null | undefined; expectedSha256?: string | undefined }, actor: Actor, view: MemoryView = 'basic'): Promise<Memory> {
    if (typeof p.content === 'string') checkContent(p.content);
    try {
      return await this.db.transaction().execute(async (trx) => {
        await this.writable(trx, storeId);
        const prev = await this.row(trx, storeId, id);
        if (p.expectedSha256 !== undefined && prev.content_sha256 !== p.expectedSha256) throw preconditionFailed(id, prev.content_sha256);
        const content = p.content ?? prev.content;
        const path = p.path ?? prev.path;
        if (content === prev.content && path === prev.path) return memoryOf(prev, view);
        if (path !== prev.path) await this.checkPathFree(trx, storeId, path, id);
        const at = new Date().toISOString();
        const versionId = await this.addVersion(trx, { storeId, memoryId: id, operation: 'modified', path, content, actor, at });
        const next = { path, content, content_sha256: sha256Hex(content), size_bytes: utf8Length(content), version_id: versionId, updated_at: at };
        // Guarded by the version read above: a writer that committed since makes this match nothing.
        const r = await trx.updateTable('memories').set(next).where('id', '=', id).where('version_id', '=', prev.version_id).executeTakeFirst();
        if (Number(r.numUpdatedRows) === 0) throw preconditionFailed(id, null);
        return memoryOf({ ...prev, ...next }, view);
      });
    } catch (e) {
      if (isUniqueViolation(e)) throw pathConflict(p.path ?? '', null);
      throw e;
    }
  }

  async deleteMemory(storeId: string, id: string, expectedSha256: string | undefined, actor: Actor): Promise<{ id: string; type: 'memory_deleted' }> {
    await this.db.transaction().execute(async (trx) => {
      await this.writable(trx, storeId);
      const prev = await this.row(trx, storeId, id);
      if (expectedSha256 !== undefined && prev.content_sha256 !== expectedSha256) throw preconditionFailed(id, prev.content_sha256);
      const r = await trx.deleteFrom('memories').where('id', '=', id).where('version_id', '=', prev.version_id).executeTakeFirst();
      if (Number(r.numDeletedRows) === 0) throw preconditionFailed(id, null);
      await this.addVersion(trx, { storeId, memoryId: id, operation: 'deleted', path: prev.path, content: null, actor, at: new Date().toISOString() });
    });
    return { id, type: 'memory_deleted' };
  }

  /** By path; `depth` rolls deeper subtrees up into `memory_prefix` items. Pages by path. */
  async listMemories(storeId: string, q: MemoryListQuery): Promise<ListPage<Memory | MemoryPrefix>> {
    await this.getStore(storeId);
    const prefix = q.pathPrefix ?? '/';
    const scope = `memories:${storeId}:${prefix}:${q.depth ?? 0}`;
    const after = q.page ? decodeCursor(q.page, scope, [z.string()])[0] : null;
    const paths = await this.db
      .selectFrom('memories')
      .select('path')
      .where('store_id', '=', storeId)
      .where(startsWith(prefix))
      .orderBy('path')
      .limit(MAX_LISTED_PATHS)
      .execute();
    const items = rollUp(
      paths.map((r) => r.path),
      prefix,
      q.depth ?? 0,
    ).filter((i) => after === null || (i.path > after && !(after.endsWith('/') && i.path.startsWith(after))));
    const limit = q.view === 'full' ? Math.min(q.limit, 20) : q.limit;
    const page = pageOf(items, limit, (last) => encodeCursor(scope, [last.path]));
    const wanted = page.data.filter((i) => !i.prefix).map((i) => i.path);
    const rows = wanted.length === 0 ? [] : await this.db.selectFrom('memories').selectAll().where('store_id', '=', storeId).where('path', 'in', wanted).execute();
    const byPath = new Map(rows.map((r) => [r.path, r]));
    const data = page.data.flatMap((i): Array<Memory | MemoryPrefix> => {
      if (i.prefix) return [{ type: 'memory_prefix', path: i.path }];
      const r = byPath.get(i.path);
      return r ? [memoryOf(r, q.view)] : [];
    });
    return { data, next_page: page.next_page };
  }

  /** Every live memory of a store with its content, by path: what a mount copies out. */
  async allMemories(storeId: string): Promise<Memory[]> {
    return (await this.db.selectFrom('memories').selectAll().where('store_id', '=', storeId).orderBy('path').limit(MAX_LISTED_PATHS).execute()).map((r) => memoryOf(r, 'full'));
  }

  async listVersions(storeId: string, q: VersionListQuery): Promise<ListPage<MemoryVersion>> {
    await this.getStore(storeId);
    let query = this.db.selectFrom('memory_versions').selectAll().where('store_id', '=', storeId);
    if (q.memoryId !== undefined) query = query.where('memory_id', '=', q.memoryId);
    if (q.operation !== undefined) query = query.where('operation', '=', q.operation);
    if (q.sessionId !== undefined) query = query.where('actor_type', '=', 'session_actor').where('actor_id', '=', q.sessionId);
    if (q.apiKeyId !== undefined) query = query.where('actor_type', '=', 'api_actor').where('actor_id', '=', q.apiKeyId);
    query = whereTimeRange(query, 'created_at', 'created_at', q.createdAt);
    const scope = `memory_versions:${storeId}`;
    const after = q.page ? decodeCursor(q.page, scope, [z.string()]) : null;
    const limit = q.view === 'full' ? Math.min(q.limit, 20) : q.limit;
    // Version ids are ULIDs: by id is by creation, newest first.
    const rows = await keysetWalk(query, { key: 'id', walk: 'desc', after: after && { key: after[0] }, limit }).execute();
    const page = pageOf(rows, limit, (last) => encodeCursor(scope, [last.id]));
    return { data: page.data.map((r) => versionOf(r, q.view)), next_page: page.next_page };
  }

  async getVersion(storeId: string, id: string, view: MemoryView = 'full'): Promise<MemoryVersion> {
    const r = await this.db.selectFrom('memory_versions').selectAll().where('id', '=', id).where('store_id', '=', storeId).executeTakeFirst();
    if (!r) {
      await this.getStore(storeId);
      throw new NotFoundError('memory version', id);
    }
    return versionOf(r, view);
  }

  /**
   * Blanks what a version held (content, path, hash, size) for good, keeping that it happened and
   * who did it. The memory's current version is refused: its content is still the memory's, so
   * update or delete the memory first.
   */
  async redactVersion(storeId: string, id: string, actor: Actor): Promise<MemoryVersion> {
    await this.db.transaction().execute(async (trx) => {
      const v = await trx.selectFrom('memory_versions').select(['id', 'memory_id', 'redacted_at']).where('id', '=', id).where('store_id', '=', storeId).executeTakeFirst();
      if (!v) {
        await mustExist(trx, storeId);
        throw new NotFoundError('memory version', id);
      }
      if (v.redacted_at !== null) return;
      const live = await trx.selectFrom('memories').select('id').where('version_id', '=', id).executeTakeFirst();
      if (live) throw new ConflictError(`memory version ${id} is the current content of memory ${v.memory_id}: update or delete the memory before redacting it`);
      await trx
        .updateTable('memory_versions')
        .set({ content: null, path: null, content_sha256: null, size_bytes: null, redacted_at: new Date().toISOString(), redacted_by_type: actor.type, redacted_by_id: actorId(actor) })
        .where('id', '=', id)
        .execute();
    });
    return this.getVersion(storeId, id);
  }
}

