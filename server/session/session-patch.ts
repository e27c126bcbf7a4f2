import 'server-only';
import type { Kysely } from 'kysely';
import { InvalidInputError, NotFoundError } from '~/lib/errors';
import type { Database } from '~/server/session/schema';
import { type SessionExtra, toSession } from '~/server/session/session-rows';
import type { Session, SessionPatch } from '~/server/session/store';

/** A patch's own checks, before any database is touched. */
export function checkPatch(patch: SessionPatch): void {
  if (patch.title !== undefined && patch.title.trim() === '') throw new InvalidInputError('title: must not be empty');
}

/**
 * Writes a patch to a session's row through `db`: vault ids and the budget live in `extra`
 * beside the resources, so that column is read and written back, which the caller runs in a
 * transaction (the store's own, or the append batch's when the patch goes with its event).
 */
export async function writePatch(db: Kysely<Database>, id: string, patch: SessionPatch, now: string): Promise<Session> {
  let extra: string | undefined;
  if (patch.vault_ids !== undefined || patch.budget !== undefined) {
    const cur = await db.selectFrom('sessions').select('extra').where('id', '=', id).executeTakeFirst();
    if (!cur) throw new NotFoundError('session', id);
    extra = JSON.stringify({
      ...(JSON.parse(cur.extra) as SessionExtra),
      ...(patch.vault_ids !== undefined ? { vault_ids: patch.vault_ids } : {}),
      ...(patch.budget !== undefined ? { budget: patch.budget } : {}),
    });
  }
  const row = await db
    .updateTable('sessions')
    .set((eb) => ({
      ...(patch.title !== undefined ? { title: patch.title.trim() } : {}),
      ...(patch.metadata !== undefined ? { metadata: JSON.stringify(patch.metadata) } : {}),
      ...(patch.agent !== undefined ? { agent: JSON.stringify(patch.agent) } : {}),
      ...(extra !== undefined ? { extra } : {}),
      // Archiving twice keeps the first time.
      ...(patch.archived === true ? { archived_at: eb.fn.coalesce('archived_at', eb.val(now)) } : patch.archived === false ? { archived_at: null } : {}),
      updated_at: now,
    }))
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
  if (!row) throw new NotFoundError('session', id);
  return toSession(row);
}
