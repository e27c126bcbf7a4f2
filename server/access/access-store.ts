import 'server-only';
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { newId } from '~/lib/ids';
import type { Database } from '~/server/session/schema';

export interface ApiKeyInfo {
  id: string;
  name: string;
  /** The key's first characters (`pdk_AbC1…`), never the key. */
  prefix: string;
  created_at: string;
  last_used_at: string | null;
}

/** Access rows (API keys, signed-in browsers, sign-in tokens, the shared signing key) in the session database. */
export interface AccessStore {
  /** The key that signs cookies and tab secrets: made once, shared by every instance. */
  signingKey(): Promise<Uint8Array>;
  addSigninToken(hash: string, expiresAt: number): Promise<void>;
  /** Deletes the token and says whether it was there and unexpired: a token signs in once. */
  takeSigninToken(hash: string, now: number): Promise<boolean>;
  addOwnerSession(idHash: string, expiresAt: number): Promise<void>;
  ownerSessionValid(idHash: string, now: number): Promise<boolean>;
  deleteOwnerSession(idHash: string): Promise<void>;
  addApiKey(key: { name: string; hash: string; prefix: string }): Promise<ApiKeyInfo>;
  listApiKeys(): Promise<ApiKeyInfo[]>;
  /** False when no such live key exists. */
  revokeApiKey(id: string): Promise<boolean>;
  /** The live key with this hash, its use recorded (at most once a minute). */
  useApiKey(hash: string): Promise<ApiKeyInfo | null>;
}

const SIGNING_KEY = 'cookie_signing_key';
const LAST_USED_EVERY_MS = 60_000;

export class KyselyAccessStore implements AccessStore {
  #key: Uint8Array | null = null;

  constructor(private readonly db: Kysely<Database>) {}

  async signingKey(): Promise<Uint8Array> {
    if (this.#key) return this.#key;
    // Whoever inserts first wins; everyone then reads the same row.
    await this.db
      .insertInto('server_secrets')
      .values({ name: SIGNING_KEY, value: randomBytes(32).toString('base64') })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
    const row = await this.db.selectFrom('server_secrets').select('value').where('name', '=', SIGNING_KEY).executeTakeFirstOrThrow();
    this.#key = new Uint8Array(Buffer.from(row.value, 'base64'));
    return this.#key;
  }

  async addSigninToken(hash: string, expiresAt: number): Promise<void> {
    await this.db.deleteFrom('signin_tokens').where('expires_at', '<', Date.now()).execute();
    await this.db.insertInto('signin_tokens').values({ hash, expires_at: expiresAt }).execute();
  }

  async takeSigninToken(hash: string, now: number): Promise<boolean> {
    const gone = await this.db.deleteFrom('signin_tokens').where('hash', '=', hash).returning('expires_at').executeTakeFirst();
    return gone !== undefined && Number(gone.expires_at) > now;
  }

  async addOwnerSession(idHash: string, expiresAt: number): Promise<void> {
    await this.db.deleteFrom('owner_sessions').where('expires_at', '<', Date.now()).execute();
    await this.db.insertInto('owner_sessions').values({ id_hash: idHash, created_at: new Date().toISOString(), expires_at: expiresAt }).execute();
  }

  async ownerSessionValid(idHash: string, now: number): Promise<boolean> {
    const row = await this.db.selectFrom('owner_sessions').select('expires_at').where('id_hash', '=', idHash).executeTakeFirst();
    return row !== undefined && Number(row.expires_at) > now;
  }

  async deleteOwnerSession(idHash: string): Promise<void> {
    await this.db.deleteFrom('owner_sessions').where('id_hash', '=', idHash).execute();
  }

  async addApiKey(key: { name: string; hash: string; prefix: string }): Promise<ApiKeyInfo> {
    const row = { id: newId('apik'), name: key.name, hash: key.hash, prefix: key.prefix, created_at: new Date().toISOString(), last_used_at: null, revoked_at: null };
    await this.db.insertInto('api_keys').values(row).execute();
    return info(row);
  }

  async listApiKeys(): Promise<ApiKeyInfo[]> {
    const rows = await this.db.selectFrom('api_keys').selectAll().where('revoked_at', 'is', null).orderBy('created_at', 'desc').execute();
    return rows.map(info);
  }

  async revokeApiKey(id: string): Promise<boolean> {
    const r = await this.db.updateTable('api_keys').set({ revoked_at: new Date().toISOString() }).where('id', '=', id).where('revoked_at', 'is', null).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async useApiKey(hash: string): Promise<ApiKeyInfo | null> {
    const row = await this.db.selectFrom('api_keys').selectAll().where('hash', '=', hash).where('revoked_at', 'is', null).executeTakeFirst();
    if (!row) return null;
    const now = new Date();
    if (!row.last_used_at || now.getTime() - Date.parse(row.last_used_at) > LAST_USED_EVERY_MS) {
      row.last_used_at = now.toISOString();
      await this.db.updateTable('api_keys').set({ last_used_at: row.last_used_at }).where('id', '=', row.id).execute();
    }
    return info(row);
  }
}

function info(r: { id: string; name: string; prefix: string; created_at: string; last_used_at: string | null }): ApiKeyInfo {
  return { id: r.id, name: r.name, prefix: r.prefix, created_at: r.created_at, last_used_at: r.last_used_at };
}
