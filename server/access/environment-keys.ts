import 'server-only';
import type { Kysely } from 'kysely';
import { NotFoundError } from '~/lib/errors';
import { newId } from '~/lib/ids';
import { hashSecret, newSecret } from '~/server/access/secrets';
import type { Database } from '~/server/session/schema';

/** What is shown of an environment key: never the key, once made. */
export interface EnvironmentKeyInfo {
  type: 'environment_key';
  id: string;
  environment_id: string;
  name: string;
  /** The key's first characters (`pdek_AbC1…`). */
  prefix: string;
  created_at: string;
  last_used_at: string | null;
}

export const ENVIRONMENT_KEY_PREFIX = 'pdek_';
const LAST_USED_EVERY_MS = 60_000;

function info(r: { id: string; environment_id: string; name: string; prefix: string; created_at: string; last_used_at: string | null }): EnvironmentKeyInfo {
  return { type: 'environment_key', id: r.id, environment_id: r.environment_id, name: r.name, prefix: r.prefix, created_at: r.created_at, last_used_at: r.last_used_at };
}

/**
 * Keys of self-hosted environments, stored hashed: a worker polls its environment's work queue
 * with one, and it opens nothing else (server/access/work-callers.ts).
 */
export class EnvironmentKeys {
  constructor(private readonly db: Kysely<Database>) {}

  /** Makes a key: the key itself is returned this once. */
  async create(environmentId: string, name: string): Promise<EnvironmentKeyInfo & { key: string }> {
    const key = newSecret(ENVIRONMENT_KEY_PREFIX);
    const row = { id: newId('envkey'), environment_id: environmentId, name, hash: hashSecret(key), prefix: key.slice(0, ENVIRONMENT_KEY_PREFIX.length + 6), created_at: new Date().toISOString(), last_used_at: null, revoked_at: null };
    await this.db.insertInto('environment_keys').values(row).execute();
    return { ...info(row), key };
  }

  async list(environmentId: string): Promise<EnvironmentKeyInfo[]> {
    const rows = await this.db.selectFrom('environment_keys').selectAll().where('environment_id', '=', environmentId).where('revoked_at', 'is', null).orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
    return rows.map(info);
  }

  async revoke(environmentId: string, id: string): Promise<EnvironmentKeyInfo> {
    const row = await this.db.updateTable('environment_keys').set({ revoked_at: new Date().toISOString() }).where('id', '=', id).where('environment_id', '=', environmentId).where('revoked_at', 'is', null).returningAll().executeTakeFirst();
    if (!row) throw new NotFoundError('environment key', id);
    return info(row);
  }

  /** The live key with this value, its use recorded (at most once a minute); null for anything else. */
  async use(key: string): Promise<EnvironmentKeyInfo | null> {
    if (!key.startsWith(ENVIRONMENT_KEY_PREFIX) || key.length > 200) return null;
    const row = await this.db.selectFrom('environment_keys').selectAll().where('hash', '=', hashSecret(key)).where('revoked_at', 'is', null).executeTakeFirst();
    if (!row) return null;
    const t = new Date();
    if (!row.last_used_at || t.getTime() - Date.parse(row.last_used_at) > LAST_USED_EVERY_MS) {
      row.last_used_at = t.toISOString();
      await this.db.updateTable('environment_keys').set({ last_used_at: row.last_used_at }).where('id', '=', row.id).execute();
    }
    return info(row);
  }
}
