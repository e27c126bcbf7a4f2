import 'server-only';
import type { Kysely, Selectable } from 'kysely';
import { randomBytes } from 'node:crypto';
import { InvalidInputError, NotFoundError } from '~/lib/errors';
import { newId } from '~/lib/ids';
import { SHARE_TOKEN_PREFIX, isShareTokenShape } from '~/lib/share-token';
import { hashSecret } from '~/server/access/secrets';
import type { Database, ShareLinksTable } from '~/server/session/schema';

/** A share link as the owner's list shows it: never its token (only the hash is kept). */
export interface ShareLink {
  id: string;
  session_id: string;
  label: string;
  hide_files: boolean;
  created_at: string;
  /** ISO time, or null: never expires. */
  expires_at: string | null;
  expired: boolean;
}

/** What a token names: a link a viewer may use, one that expired (410), or nothing (404: unknown or revoked). */
export type ShareLookup = { state: 'live'; link: ShareLink } | { state: 'expired'; link: ShareLink } | { state: 'gone' };

/** Live (unrevoked) links a session may have at once. */
export const MAX_LINKS_PER_SESSION = 50;

/**
 * Read-only links to a session (`/share/<token>`). The token is 256 random bits shown once at
 * creation; the table keeps its SHA-256, so a database leak opens no session.
 */
export class ShareLinks {
  constructor(private readonly db: Kysely<Database>) {}

  async create(sessionId: string, o: { label: string; expiresAt: number | null; hideFiles: boolean }, now = Date.now()): Promise<{ token: string; link: ShareLink }> {
    if (o.expiresAt !== null && o.expiresAt <= now) throw new InvalidInputError('expiresAt: must be in the future');
    const session = await this.db.selectFrom('sessions').select('id').where('id', '=', sessionId).executeTakeFirst();
    if (!session) throw new NotFoundError('session', sessionId);
    const live = await this.db
      .selectFrom('share_links')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('session_id', '=', sessionId)
      .where('revoked_at', 'is', null)
      .executeTakeFirstOrThrow();
    if (Number(live.n) >= MAX_LINKS_PER_SESSION) throw new InvalidInputError(`a session has at most ${MAX_LINKS_PER_SESSION} share links: revoke one first`);
    const token = `${SHARE_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}${o.expiresAt === null ? '' : `.${o.expiresAt.toString(36)}`}`;
    const row = {
      id: newId('shr'),
      session_id: sessionId,
      hash: hashSecret(token),
      label: o.label,
      hide_files: o.hideFiles ? 1 : 0,
      created_at: new Date(now).toISOString(),
      expires_at: o.expiresAt,
      revoked_at: null,
    };
    await this.db.insertInto('share_links').values(row).execute();
    return { token, link: toLink(row, now) };
  }

  /** The session's unrevoked links, newest first (expired ones too, marked: the owner revokes them). */
  async list(sessionId: string, now = Date.now()): Promise<ShareLink[]> {
    const rows = await this.db.selectFrom('share_links').selectAll().where('session_id', '=', sessionId).where('revoked_at', 'is', null).orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
    return rows.map((r) => toLink(r, now));
  }

  /** Ends a link at once, on every instance (each re-reads the row). False when the session has no such live link. */
  async revoke(sessionId: string, id: string): Promise<boolean> {
    const r = await this.db.updateTable('share_links').set({ revoked_at: new Date().toISOString() }).where('id', '=', id).where('session_id', '=', sessionId).where('revoked_at', 'is', null).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Whether the link may still be used (not revoked, not expired): what an open follow re-reads. */
  async isLive(id: string, now = Date.now()): Promise<boolean> {
    const row = await this.db.selectFrom('share_links').select(['revoked_at', 'expires_at']).where('id', '=', id).executeTakeFirst();
    return row !== undefined && row.revoked_at === null && (row.expires_at === null || Number(row.expires_at) > now);
  }

  async lookup(token: string, now = Date.now()): Promise<ShareLookup> {
    if (!isShareTokenShape(token)) return { state: 'gone' };
    const row = await this.db.selectFrom('share_links').selectAll().where('hash', '=', hashSecret(token)).executeTakeFirst();
    if (!row || row.revoked_at !== null) return { state: 'gone' };
    const link = toLink(row, now);
    return link.expired ? { state: 'expired', link } : { state: 'live', link };
  }
}

function toLink(r: Selectable<ShareLinksTable>, now: number): ShareLink {
  const expires = r.expires_at === null ? null : Number(r.expires_at);
  return {
    id: r.id,
    session_id: r.session_id,
    label: r.label,
    hide_files: r.hide_files === 1,
    created_at: r.created_at,
    expires_at: expires === null ? null : new Date(expires).toISOString(),
    expired: expires !== null && expires <= now,
  };
}
