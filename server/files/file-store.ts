import 'server-only';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import { NotFoundError } from '~/lib/errors';
import { newId } from '~/lib/ids';
import { decodeCursor, encodeCursor } from '~/lib/page-cursor';
import { type ListPage, keysetWalk, pageOf } from '~/server/session/keyset-page';
import type { Database, FilesTable } from '~/server/session/schema';

/** A file as the Managed Agents API describes it (`BetaFileMetadata`). */
export interface FileMetadata {
  id: string;
  type: 'file';
  filename: string;
  mime_type: string;
  size_bytes: number;
  created_at: string;
  expires_at: string | null;
  downloadable: boolean;
  scope: { type: 'session'; id: string } | null;
}

export interface NewFile {
  filename: string;
  mimeType: string;
  size: number;
  sha256: string;
  expiresAt: string | null;
  scopeId: string | null;
}

function metadataOf(r: FilesTable): FileMetadata {
  return {
    id: r.id,
    type: 'file',
    filename: r.filename,
    mime_type: r.mime_type,
    size_bytes: Number(r.size_bytes),
    created_at: r.created_at,
    expires_at: r.expires_at,
    downloadable: r.downloadable === 1,
    scope: r.scope_id ? { type: 'session', id: r.scope_id } : null,
  };
}

/**
 * Files' metadata in the session database. An expired file is as good as gone: reads and lists
 * leave it out (its row and bytes go with the next delete or sweep).
 */
export class FileStore {
  constructor(private readonly db: Kysely<Database>) {}

  async create(f: NewFile): Promise<{ metadata: FileMetadata; sha256: string }> {
    const row: FilesTable = {
      id: newId('file'),
      filename: f.filename,
      mime_type: f.mimeType,
      size_bytes: f.size,
      sha256: f.sha256,
      created_at: new Date().toISOString(),
      expires_at: f.expiresAt,
      scope_id: f.scopeId,
      downloadable: 1,
    };
    await this.db.insertInto('files').values(row).execute();
    return { metadata: metadataOf(row), sha256: row.sha256 };
  }

  /** A live (unexpired) file's row, or NotFoundError naming it. */
  async row(id: string): Promise<FilesTable> {
    const r = await this.db.selectFrom('files').selectAll().where('id', '=', id).executeTakeFirst();
    if (!r || (r.expires_at !== null && r.expires_at <= new Date().toISOString())) throw new NotFoundError('file', id);
    return r;
  }

  /** A file's content address, expired or not; null when there is no such file. */
  async contentOf(id: string): Promise<string | null> {
    return (await this.db.selectFrom('files').select('sha256').where('id', '=', id).executeTakeFirst())?.sha256 ?? null;
  }

  async get(id: string): Promise<FileMetadata> {
    return metadataOf(await this.row(id));
  }

  /** Newest first; `ids` and `scopeId` narrow it. */
  async list(q: { limit: number; page?: string | undefined; ids?: readonly string[] | undefined; scopeId?: string | undefined }): Promise<ListPage<FileMetadata>> {
    const scope = `files:${q.scopeId ?? ''}`;
    let query = this.db.selectFrom('files').selectAll();
    query = query.where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', new Date().toISOString())]));
    if (q.ids && q.ids.length > 0) query = query.where('id', 'in', [...q.ids]);
    if (q.scopeId !== undefined) query = query.where('scope_id', '=', q.scopeId);
    const after = q.page ? decodeCursor(q.page, scope, [z.string()]) : null;
    // File ids are ULIDs: by id is by creation.
    const rows = await keysetWalk(query, { key: 'id', walk: 'desc', after: after && { key: after[0] }, limit: q.limit }).execute();
    const page = pageOf(rows, q.limit, (last) => encodeCursor(scope, [last.id]));
    return { data: page.data.map(metadataOf), next_page: page.next_page };
  }

  /** The content address of each live (unexpired) file among `ids`; a missing one is left out. */
  async contentsOf(ids: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    const unique = [...new Set(ids)];
    const now = new Date().toISOString();
    for (let i = 0; i < unique.length; i += 200) {
      const rows = await this.db
        .selectFrom('files')
        .select(['id', 'sha256'])
        .where('id', 'in', unique.slice(i, i + 200))
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
        .execute();
      for (const r of rows) out.set(r.id, r.sha256);
    }
    return out;
  }

  /** The live files of a scope with this name (a session's outputs), oldest first. */
  async named(scopeId: string, filename: string): Promise<{ id: string; sha256: string }[]> {
    const now = new Date().toISOString();
    return this.db
      .selectFrom('files')
      .select(['id', 'sha256'])
      .where('scope_id', '=', scopeId)
      .where('filename', '=', filename)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
      .orderBy('id')
      .execute();
  }

  /** Removes a file's row; returns its content address and whether any other file still has those bytes. */
  async delete(id: string): Promise<{ sha256: string; shared: boolean }> {
    return this.db.transaction().execute(async (trx) => {
      const r = await trx.deleteFrom('files').where('id', '=', id).returning(['sha256']).executeTakeFirst();
      if (!r) throw new NotFoundError('file', id);
      const other = await trx.selectFrom('files').select('id').where('sha256', '=', r.sha256).limit(1).executeTakeFirst();
      // A skill version's archive may be the same bytes (a downloaded skill uploaded as a file).
      const skill = other ? undefined : await trx.selectFrom('skill_versions').select('skill_id').where('sha256', '=', r.sha256).limit(1).executeTakeFirst();
      return { sha256: r.sha256, shared: other !== undefined || skill !== undefined };
    });
  }
}
