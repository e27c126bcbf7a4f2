import 'server-only';
import { repositoryTokenContext } from '~/server/vault/seal-contexts';
import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { type RepositoryResourceParams, WORKSPACE_ROOT } from '~/lib/agent';
import { NotFoundError } from '~/lib/errors';
import { ID_PATTERN, newId } from '~/lib/ids';
import { type MasterKey, type Sealed, open, seal } from '~/server/vault/envelope';
import type { Database } from '~/server/session/schema';

/** A repository resource as the API shows it (`BetaManagedAgentsGitHubRepositoryResource`): never its token. */
export interface RepositoryResource {
  id: string;
  type: 'github_repository';
  url: string;
  mount_path: string;
  checkout: { type: 'branch'; name: string } | { type: 'commit'; sha: string } | null;
  created_at: string;
  updated_at: string;
}

/** What a capability opens: one repository of one session, for one hand. */
export interface CapabilityGrant {
  sessionId: string;
  resourceId: string;
  hand: string;
  url: string;
}

/** The default mount path the SDK documents: `/workspace/<repo-name>`. */
export function defaultMountPath(url: string): string {
  const last = new URL(url).pathname.replace(/\/+$/, '').split('/').pop() ?? 'repository';
  const name = decodeURIComponent(last).replace(/\.git$/i, '').replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_');
  return `${WORKSPACE_ROOT}/${name || 'repository'}`;
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
/** What a repository token's envelope is bound to (the vault's key rotation re-wraps under it too). */
const context = repositoryTokenContext;

/** A capability: 256 random bits, URL-safe. Only its SHA-256 is stored. */
export function newCapability(): string {
  return randomBytes(32).toString('base64url');
}

export const CAPABILITY_PATTERN = /^[A-Za-z0-9_-]{43}$/;

type Db = Kysely<Database>;

/**
 * A session's resources, their tokens sealed under the master key (envelope encryption) in their
 * own table, and the git proxy's capabilities. A token goes in and is opened only by the git proxy,
 * per request, so a rotated token takes effect at the next clone, fetch or push.
 */
export class RepositoryStore {
  constructor(
    private readonly db: Db,
    private readonly master: MasterKey,
  ) {}

  /** Adds resources to a session, all or none (tokens sealed in the same transaction). */
  async add(sessionId: string, params: readonly RepositoryResourceParams[]): Promise<RepositoryResource[]> {
    if (params.length === 0) return [];
    const now = new Date().toISOString();
    const made = params.map((p) => {
      const r: RepositoryResource = { id: newId('sesrsc'), type: 'github_repository', url: p.url, mount_path: p.mount_path ?? defaultMountPath(p.url), checkout: p.checkout ?? null, created_at: now, updated_at: now };
      return { r, token: p.authorization_token };
    });
    await this.db.transaction().execute(async (trx) => {
      for (const { r, token } of made) {
        await trx.insertInto('session_resources').values({ id: r.id, session_id: sessionId, body: JSON.stringify(bodyOf(r)), created_at: now, updated_at: now }).execute();
        if (token !== undefined) await trx.insertInto('repository_tokens').values({ session_id: sessionId, resource_id: r.id, sealed: JSON.stringify(seal(this.master, token, context(sessionId, r.id))) }).execute();
      }
    });
    return made.map((m) => m.r);
  }

  async list(sessionId: string): Promise<RepositoryResource[]> {
    const rows = await this.db.selectFrom('session_resources').selectAll().where('session_id', '=', sessionId).orderBy('id').execute();
    // The table holds a session's files too (server/files/session-files.ts): only repositories here.
    return rows.filter(isRepository).map(resourceOf);
  }

  async get(sessionId: string, resourceId: string): Promise<RepositoryResource> {
    const row = ID_PATTERN.resource.test(resourceId) ? await this.db.selectFrom('session_resources').selectAll().where('session_id', '=', sessionId).where('id', '=', resourceId).executeTakeFirst() : undefined;
    if (!row || !isRepository(row)) throw new NotFoundError('resource', `${resourceId.slice(0, 80)} of session ${sessionId}`);
    return resourceOf(row);
  }

  /** A new token (rotation): the git proxy uses it from its next request on. */
  async setToken(sessionId: string, resourceId: string, token: string): Promise<RepositoryResource> {
    await this.get(sessionId, resourceId);
    const now = new Date().toISOString();
    const sealed = JSON.stringify(seal(this.master, token, context(sessionId, resourceId)));
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('repository_tokens').where('session_id', '=', sessionId).where('resource_id', '=', resourceId).execute();
      await trx.insertInto('repository_tokens').values({ session_id: sessionId, resource_id: resourceId, sealed }).execute();
      await trx.updateTable('session_resources').set({ updated_at: now }).where('session_id', '=', sessionId).where('id', '=', resourceId).execute();
    });
    return this.get(sessionId, resourceId);
  }

  /** Removes a resource, its token and every capability to it. */
  async remove(sessionId: string, resourceId: string): Promise<void> {
    await this.get(sessionId, resourceId);
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('git_capabilities').where('session_id', '=', sessionId).where('resource_id', '=', resourceId).execute();
      await trx.deleteFrom('repository_tokens').where('session_id', '=', sessionId).where('resource_id', '=', resourceId).execute();
      await trx.deleteFrom('session_resources').where('session_id', '=', sessionId).where('id', '=', resourceId).execute();
    });
  }

  /** Everything of a deleted session: resources, tokens, capabilities. */
  async removeSession(sessionId: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('git_capabilities').where('session_id', '=', sessionId).execute();
      await trx.deleteFrom('repository_tokens').where('session_id', '=', sessionId).execute();
      await trx.deleteFrom('session_resources').where('session_id', '=', sessionId).execute();
    });
  }

  /** The token, opened; only the git proxy calls this, per request. */
  async token(sessionId: string, resourceId: string): Promise<string | null> {
    const row = await this.db.selectFrom('repository_tokens').select('sealed').where('session_id', '=', sessionId).where('resource_id', '=', resourceId).executeTakeFirst();
    if (!row) return null;
    return open(this.master, JSON.parse(row.sealed) as Sealed, context(sessionId, resourceId));
  }

  /** A new capability for one hand to reach one repository; returned once, kept hashed. */
  async issueCapability(sessionId: string, resourceId: string, hand: string): Promise<string> {
    await this.get(sessionId, resourceId);
    const capability = newCapability();
    await this.db.insertInto('git_capabilities').values({ hash: sha256(capability), session_id: sessionId, resource_id: resourceId, hand, created_at: new Date().toISOString() }).execute();
    return capability;
  }

  /** What a capability opens, or null (unknown, revoked, or its resource gone). */
  async resolveCapability(capability: string): Promise<CapabilityGrant | null> {
    if (!CAPABILITY_PATTERN.test(capability)) return null;
    const row = await this.db
      .selectFrom('git_capabilities as c')
      .innerJoin('session_resources as r', (j) => j.onRef('r.id', '=', 'c.resource_id').onRef('r.session_id', '=', 'c.session_id'))
      .select(['c.session_id', 'c.resource_id', 'c.hand', 'r.body'])
      .where('c.hash', '=', sha256(capability))
      .executeTakeFirst();
    if (!row) return null;
    const body = JSON.parse(row.body) as { url: string };
    return { sessionId: row.session_id, resourceId: row.resource_id, hand: row.hand, url: body.url };
  }

  /** Revokes the capabilities issued for a hand (released or lost). */
  async revokeHand(sessionId: string, hand: string): Promise<void> {
    await this.db.deleteFrom('git_capabilities').where('session_id', '=', sessionId).where('hand', '=', hand).execute();
  }
}

function bodyOf(r: RepositoryResource) {
  return { type: r.type, url: r.url, mount_path: r.mount_path, checkout: r.checkout };
}

const isRepository = (row: { body: string }) => (JSON.parse(row.body) as { type: string }).type === 'github_repository';

function resourceOf(row: { id: string; body: string; created_at: string; updated_at: string }): RepositoryResource {
  const b = JSON.parse(row.body) as Omit<RepositoryResource, 'id' | 'created_at' | 'updated_at'>;
  return { id: row.id, type: 'github_repository', url: b.url, mount_path: b.mount_path, checkout: b.checkout ?? null, created_at: row.created_at, updated_at: row.updated_at };
}
