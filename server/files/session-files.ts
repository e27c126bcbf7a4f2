import 'server-only';
import type { Kysely } from 'kysely';
import { type FileResourceParams, MAX_SESSION_FILES } from '~/lib/agent';
import { InvalidInputError, NotFoundError } from '~/lib/errors';
import { ID_PATTERN, newId } from '~/lib/ids';
import type { Database } from '~/server/session/schema';

/** A file resource as the API shows it (`BetaManagedAgentsFileResource`). */
export interface FileResource {
  id: string;
  type: 'file';
  file_id: string;
  mount_path: string;
  created_at: string;
  updated_at: string;
}

type Row = { id: string; body: string; created_at: string; updated_at: string };

/** The body of a `session_resources` row, whatever its kind: each store reads only its own. */
export const resourceType = (row: Pick<Row, 'body'>): string => (JSON.parse(row.body) as { type: string }).type;

function fileOf(row: Row): FileResource {
  const b = JSON.parse(row.body) as { file_id: string; mount_path: string };
  return { id: row.id, type: 'file', file_id: b.file_id, mount_path: b.mount_path, created_at: row.created_at, updated_at: row.updated_at };
}

/**
 * A session's file resources, in the same `session_resources` table as its repositories (one id
 * space, one list). Adding checks, in one transaction, that every file exists (unexpired), that no
 * two resources share a mount path, and the cap of MAX_SESSION_FILES: all or none is added.
 */
export class SessionFileStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** NotFoundError naming the first file id that is not a live file. */
  async requireFiles(fileIds: readonly string[], db: Kysely<Database> = this.db): Promise<void> {
    const unique = [...new Set(fileIds)];
    if (unique.length === 0) return;
    const now = new Date().toISOString();
    const found = new Set<string>();
    for (let i = 0; i < unique.length; i += 200) {
      const rows = await db
        .selectFrom('files')
        .select('id')
        .where('id', 'in', unique.slice(i, i + 200))
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
        .execute();
      for (const r of rows) found.add(r.id);
    }
    const missing = unique.find((id) => !found.has(id));
    if (missing !== undefined) throw new NotFoundError('file', missing);
  }

  async add(sessionId: string, params: readonly FileResourceParams[]): Promise<FileResource[]> {
    if (params.length === 0) return [];
    const now = new Date().toISOString();
    const made: FileResource[] = params.map((p) => ({ id: newId('sesrsc'), type: 'file', file_id: p.file_id, mount_path: p.mount_path, created_at: now, updated_at: now }));
    await this.db.transaction().execute(async (trx) => {
      // The session's row locked first (a no-op write): concurrent adds, from any instance, then
      // take turns, so the cap and the mount paths are checked against what the other one added.
      await trx.updateTable('sessions').set((eb) => ({ updated_at: eb.ref('updated_at') })).where('id', '=', sessionId).execute();
      await this.requireFiles(made.map((m) => m.file_id), trx);
      const existing = (await trx.selectFrom('session_resources').selectAll().where('session_id', '=', sessionId).execute()).filter((r) => resourceType(r) === 'file').map(fileOf);
      if (existing.length + made.length > MAX_SESSION_FILES) {
        throw new InvalidInputError(`resources: a session has at most ${MAX_SESSION_FILES} files (session ${sessionId} has ${existing.length}, ${made.length} more asked)`);
      }
      const taken = new Map(existing.map((r) => [r.mount_path, r.id]));
      for (const m of made) {
        const other = taken.get(m.mount_path);
        if (other !== undefined) throw new InvalidInputError(`mount_path: ${m.mount_path} is already the mount path of ${other.startsWith('sesrsc_') ? `resource ${other}` : other}`);
        taken.set(m.mount_path, `another file of this request (${m.file_id})`);
      }
      // One insert (at most 500 rows of 5 parameters: far below either database's limit).
      await trx.insertInto('session_resources').values(made.map((m) => ({ id: m.id, session_id: sessionId, body: JSON.stringify({ type: 'file', file_id: m.file_id, mount_path: m.mount_path }), created_at: now, updated_at: now }))).execute();
    });
    return made;
  }

  async list(sessionId: string): Promise<FileResource[]> {
    const rows = await this.db.selectFrom('session_resources').selectAll().where('session_id', '=', sessionId).orderBy('id').execute();
    return rows.filter((r) => resourceType(r) === 'file').map(fileOf);
  }

  /** The file resource, or null when the id is not one of this session's files. */
  async find(sessionId: string, resourceId: string): Promise<FileResource | null> {
    if (!ID_PATTERN.resource.test(resourceId)) return null;
    const row = await this.db.selectFrom('session_resources').selectAll().where('session_id', '=', sessionId).where('id', '=', resourceId).executeTakeFirst();
    return row && resourceType(row) === 'file' ? fileOf(row) : null;
  }

  async get(sessionId: string, resourceId: string): Promise<FileResource> {
    const r = await this.find(sessionId, resourceId);
    if (!r) throw new NotFoundError('resource', `${resourceId.slice(0, 80)} of session ${sessionId}`);
    return r;
  }

  async remove(sessionId: string, resourceId: string): Promise<FileResource> {
    const r = await this.get(sessionId, resourceId);
    await this.db.deleteFrom('session_resources').where('session_id', '=', sessionId).where('id', '=', resourceId).execute();
    return r;
  }
}
