import 'server-only';
import type { Kysely, Selectable } from 'kysely';
import { monotonicFactory } from 'ulid';
import type { z } from 'zod';
import { patchMetadata } from '~/lib/agent';
import { ConflictError, InvalidInputError, NotFoundError } from '~/lib/errors';
import { describeZodError } from '~/lib/events';
import {
  type Credential,
  type CredentialAuth,
  CredentialCreateParams,
  CredentialUpdateParams,
  type SecretField,
  type Vault,
  VaultCreateParams,
  VaultUpdateParams,
  credentialKey,
  describeCredentialKey,
} from '~/lib/vault';
import { logger } from '~/server/log';
import type { Database, VaultCredentialsTable, VaultsTable } from '~/server/session/schema';
import { type MasterKey, type Sealed, seal } from '~/server/vault/envelope';
import { sealContext } from '~/server/vault/seal-contexts';
import { type ListPage, newestFirst } from '~/server/session/keyset-page';

const ulid = monotonicFactory();
// An audit trail of ids and types only: never a value, a URL's query or a request body.
const log = logger('vault');
const MAX_PAGE = 100;

export type SealedFields = Partial<Record<SecretField, Sealed>>;

function parse<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const r = schema.safeParse(input);
  if (!r.success) throw new InvalidInputError(describeZodError(r.error));
  return r.data;
}

function isUniqueViolation(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === '23505';
}

function vaultOf(r: Selectable<VaultsTable>): Vault {
  return { id: r.id, type: 'vault', display_name: r.display_name, metadata: JSON.parse(r.metadata) as Record<string, string>, created_at: r.created_at, updated_at: r.updated_at, archived_at: r.archived_at };
}

function credentialOf(r: Selectable<VaultCredentialsTable>): Credential {
  return {
    id: r.id,
    type: 'vault_credential',
    vault_id: r.vault_id,
    display_name: r.display_name,
    metadata: JSON.parse(r.metadata) as Record<string, string>,
    auth: JSON.parse(r.auth) as CredentialAuth,
    created_at: r.created_at,
    updated_at: r.updated_at,
    archived_at: r.archived_at,
  };
}

type CreateAuth = z.output<typeof CredentialCreateParams>['auth'];
type UpdateAuth = NonNullable<z.output<typeof CredentialUpdateParams>['auth']>;

/** `header_names` appears only when a credential names its headers: the API's own shape otherwise. */
function injectionLocation(header: boolean, body: boolean, names: readonly string[] | undefined): { header: boolean; body: boolean; header_names?: string[] } {
  return names ? { header, body, header_names: [...new Set(names)] } : { header, body };
}

/** What an update may not change without the value: where and how an env secret is sent. */
function sendingOf(a: CredentialAuth): Record<string, string> {
  if (a.type !== 'environment_variable') return {};
  const networking = a.networking.type === 'unrestricted' ? a.networking : { type: a.networking.type, allowed_hosts: [...new Set(a.networking.allowed_hosts.map((h) => h.toLowerCase()))].sort() };
  const { header, body, header_names } = a.injection_location;
  return { networking: JSON.stringify(networking), injection_location: JSON.stringify({ header, body, header_names: [...new Set(header_names ?? ['authorization'])].sort() }) };
}

/**
 * The redirect rule (issue 22, H2), the one place both edges pass through: changing where or how
 * a credential's secret is sent needs the secret in the same request, or anyone holding an API key
 * could point a stored value they never knew at a host of theirs. The MCP server URL, the token
 * endpoint, the client id and the resource are not updatable at all (the update schemas have no
 * such fields, so a request naming one is refused), and token_endpoint_auth keeps its type.
 */
function requireValueToRedirect(id: string, prev: CredentialAuth, next: CredentialAuth, valueSent: boolean): void {
  if (valueSent) return;
  const before = sendingOf(prev);
  const after = sendingOf(next);
  const changed = Object.keys(after).filter((k) => after[k] !== before[k]);
  if (changed.length === 0) return;
  const fields = changed.map((k) => `auth.${k}`).join(', ');
  throw new InvalidInputError(
    `${fields}: changing where or how credential ${id}'s secret is sent needs the secret in the same request: send auth.secret_value with it`,
  );
}

/**
 * Vaults and their credentials in the session database. Values are sealed here (a fresh data key
 * each time one is written) and never read back: nothing in this class opens a value, and every
 * object it returns is built field by field from the non-secret part (`auth`).
 */
export class VaultStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly master: MasterKey,
  ) {}

  // ── vaults ──
  async createVault(input: unknown): Promise<Vault> {
    const p = parse(VaultCreateParams, input);
    const now = new Date().toISOString();
    const row = { id: `vlt_${ulid()}`, display_name: p.display_name, metadata: JSON.stringify(p.metadata ?? {}), created_at: now, updated_at: now, archived_at: null };
    await this.db.insertInto('vaults').values(row).execute();
    return vaultOf(row);
  }

  async getVault(id: string): Promise<Vault> {
    const row = await this.db.selectFrom('vaults').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) throw new NotFoundError('vault', id);
    return vaultOf(row);
  }

  async updateVault(id: string, input: unknown): Promise<Vault> {
    const p = parse(VaultUpdateParams, input);
    const prev = await this.getVault(id);
    if (prev.archived_at !== null) throw new InvalidInputError(`vault ${id} is archived: it is read-only`);
    const now = new Date().toISOString();
    const display_name = p.display_name ?? prev.display_name;
    const metadata = patchMetadata(prev.metadata, p.metadata);
    await this.db.updateTable('vaults').set({ display_name, metadata: JSON.stringify(metadata), updated_at: now }).where('id', '=', id).execute();
    return { ...prev, display_name, metadata, updated_at: now };
  }

  async listVaults(q: { limit?: number; page?: string | null; includeArchived?: boolean }): Promise<ListPage<Vault>> {
    const limit = Math.min(q.limit ?? 20, MAX_PAGE);
    let query = this.db.selectFrom('vaults').selectAll();
    if (!q.includeArchived) query = query.where('archived_at', 'is', null);
    const page = await newestFirst(query, 'vaults', q.page, limit);
    return { data: page.data.map(vaultOf), next_page: page.next_page };
  }

  /** Read-only from now on, with its credentials: sessions can no longer use them. */
  async archiveVault(id: string): Promise<Vault> {
    const now = new Date().toISOString();
    await this.db.transaction().execute(async (trx) => {
      const r = await trx.updateTable('vaults').set((eb) => ({ archived_at: eb.fn.coalesce('archived_at', eb.val(now)) })).where('id', '=', id).executeTakeFirst();
      if (Number(r.numUpdatedRows) === 0) throw new NotFoundError('vault', id);
      await trx.updateTable('vault_credentials').set({ archived_at: now }).where('vault_id', '=', id).where('archived_at', 'is', null).execute();
    });
    return this.getVault(id);
  }

  async deleteVault(id: string): Promise<{ id: string; type: 'vault_deleted' }> {
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('vault_credentials').where('vault_id', '=', id).execute();
      const r = await trx.deleteFrom('vaults').where('id', '=', id).executeTakeFirst();
      if (Number(r.numDeletedRows) === 0) throw new NotFoundError('vault', id);
    });
    return { id, type: 'vault_deleted' };
  }

  /** A session's `vault_ids`: each must exist and not be archived. */
  async requireUsableVaults(ids: readonly string[]): Promise<void> {
    for (const id of ids) {
      const row = await this.db.selectFrom('vaults').select(['id', 'archived_at']).where('id', '=', id).executeTakeFirst();
      if (!row) throw new InvalidInputError(`vault_ids: vault ${id} does not exist`);
      if (row.archived_at !== null) throw new InvalidInputError(`vault_ids: vault ${id} is archived`);
    }
  }

  // ── credentials ──
  async createCredential(vaultId: string, input: unknown): Promise<Credential> {
    const p = parse(CredentialCreateParams, input);
    const vault = await this.getVault(vaultId);
    if (vault.archived_at !== null) throw new InvalidInputError(`vault ${vaultId} is archived: it is read-only`);
    const id = `vcrd_${ulid()}`;
    const { auth, secrets } = this.#sealNew(id, p.auth);
    const now = new Date().toISOString();
    const row = {
      id,
      vault_id: vaultId,
      match_key: credentialKey(auth),
      display_name: p.display_name ?? null,
      metadata: JSON.stringify(p.metadata ?? {}),
      auth: JSON.stringify(auth),
      secrets: JSON.stringify(secrets),
      created_at: now,
      updated_at: now,
      archived_at: null,
    };
    try {
      await this.db.insertInto('vault_credentials').values(row).execute();
    } catch (e) {
      if (isUniqueViolation(e)) throw new ConflictError(`vault ${vaultId} already has a live credential for ${describeCredentialKey(auth)}: update or archive it`);
      throw e;
    }
    log.info('credential created', { vault_id: vaultId, credential_id: id, type: auth.type });
    return credentialOf(row);
  }

  async getCredential(vaultId: string, id: string): Promise<Credential> {
    return credentialOf(await this.#row(vaultId, id));
  }

  async updateCredential(vaultId: string, id: string, input: unknown): Promise<Credential> {
    const p = parse(CredentialUpdateParams, input);
    return this.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('vault_credentials').selectAll().where('id', '=', id).where('vault_id', '=', vaultId).executeTakeFirst();
      if (!row) throw new NotFoundError('credential', id);
      if (row.archived_at !== null) throw new InvalidInputError(`credential ${id} is archived: it is read-only`);
      const prev = credentialOf(row);
      let auth = prev.auth;
      let secrets = JSON.parse(row.secrets) as SealedFields;
      if (p.auth) {
        if (p.auth.type !== prev.auth.type) throw new InvalidInputError(`auth.type: credential ${id} is ${prev.auth.type}; a credential's type cannot change (make a new one)`);
        ({ auth, secrets } = this.#applyUpdate(id, prev.auth, secrets, p.auth));
      }
      const now = new Date().toISOString();
      const next: Credential = {
        ...prev,
        auth,
        display_name: p.display_name === undefined ? prev.display_name : p.display_name,
        metadata: patchMetadata(prev.metadata, p.metadata),
        updated_at: now,
      };
      await trx
        .updateTable('vault_credentials')
        .set({ auth: JSON.stringify(next.auth), secrets: JSON.stringify(secrets), display_name: next.display_name, metadata: JSON.stringify(next.metadata), updated_at: now })
        .where('id', '=', id)
        .execute();
      log.info('credential updated', { vault_id: vaultId, credential_id: id, type: auth.type, values: Object.keys(p.auth ?? {}).filter((k) => k !== 'type') });
      return next;
    });
  }

  async listCredentials(vaultId: string, q: { limit?: number; page?: string | null; includeArchived?: boolean }): Promise<ListPage<Credential>> {
    await this.getVault(vaultId);
    const limit = Math.min(q.limit ?? 20, MAX_PAGE);
    let query = this.db.selectFrom('vault_credentials').selectAll().where('vault_id', '=', vaultId);
    if (!q.includeArchived) query = query.where('archived_at', 'is', null);
    const page = await newestFirst(query, `credentials:${vaultId}`, q.page, limit);
    return { data: page.data.map(credentialOf), next_page: page.next_page };
  }

  async archiveCredential(vaultId: string, id: string): Promise<Credential> {
    const now = new Date().toISOString();
    const r = await this.db
      .updateTable('vault_credentials')
      .set((eb) => ({ archived_at: eb.fn.coalesce('archived_at', eb.val(now)) }))
      .where('id', '=', id)
      .where('vault_id', '=', vaultId)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) throw new NotFoundError('credential', id);
    return this.getCredential(vaultId, id);
  }

  /** Removes the row: its ciphertexts are gone with it. */
  async deleteCredential(vaultId: string, id: string): Promise<{ id: string; type: 'vault_credential_deleted' }> {
    const r = await this.db.deleteFrom('vault_credentials').where('id', '=', id).where('vault_id', '=', vaultId).executeTakeFirst();
    if (Number(r.numDeletedRows) === 0) throw new NotFoundError('credential', id);
    log.info('credential deleted', { vault_id: vaultId, credential_id: id });
    return { id, type: 'vault_credential_deleted' };
  }

  async #row(vaultId: string, id: string): Promise<Selectable<VaultCredentialsTable>> {
    const row = await this.db.selectFrom('vault_credentials').selectAll().where('id', '=', id).where('vault_id', '=', vaultId).executeTakeFirst();
    if (!row) throw new NotFoundError('credential', id);
    return row;
  }

  #seal(id: string, field: SecretField, value: string): Sealed {
    return seal(this.master, value, sealContext(id, field));
  }

  #sealNew(id: string, a: CreateAuth): { auth: CredentialAuth; secrets: SealedFields } {
    switch (a.type) {
      case 'static_bearer':
        return { auth: { type: 'static_bearer', mcp_server_url: a.mcp_server_url }, secrets: { token: this.#seal(id, 'token', a.token) } };
      case 'mcp_oauth': {
        const secrets: SealedFields = { access_token: this.#seal(id, 'access_token', a.access_token) };
        const r = a.refresh ?? null;
        if (r) {
          secrets.refresh_token = this.#seal(id, 'refresh_token', r.refresh_token);
          if (r.token_endpoint_auth.type !== 'none') secrets.client_secret = this.#seal(id, 'client_secret', r.token_endpoint_auth.client_secret);
        }
        return {
          auth: {
            type: 'mcp_oauth',
            mcp_server_url: a.mcp_server_url,
            expires_at: a.expires_at ?? null,
            refresh: r ? { client_id: r.client_id, token_endpoint: r.token_endpoint, token_endpoint_auth: { type: r.token_endpoint_auth.type }, resource: r.resource ?? null, scope: r.scope ?? null } : null,
          },
          secrets,
        };
      }
      case 'environment_variable':
        return {
          auth: {
            type: 'environment_variable',
            secret_name: a.secret_name,
            networking: a.networking,
            // Header by default: where an API key usually goes; the body only when asked.
            injection_location: injectionLocation(a.injection_location?.header ?? true, a.injection_location?.body ?? false, a.injection_location?.header_names),
          },
          secrets: { secret_value: this.#seal(id, 'secret_value', a.secret_value) },
        };
    }
  }

  /** Only the fields given change; a new value is sealed under a new data key. */
  #applyUpdate(id: string, prev: CredentialAuth, prevSecrets: SealedFields, u: UpdateAuth): { auth: CredentialAuth; secrets: SealedFields } {
    const secrets: SealedFields = { ...prevSecrets };
    if (u.type === 'static_bearer' && prev.type === 'static_bearer') {
      if (u.token) secrets.token = this.#seal(id, 'token', u.token);
      return { auth: prev, secrets };
    }
    if (u.type === 'environment_variable' && prev.type === 'environment_variable') {
      const next: CredentialAuth = {
        ...prev,
        networking: u.networking ?? prev.networking,
        injection_location: injectionLocation(
          u.injection_location?.header ?? prev.injection_location.header,
          u.injection_location?.body ?? prev.injection_location.body,
          u.injection_location?.header_names ?? prev.injection_location.header_names,
        ),
      };
      requireValueToRedirect(id, prev, next, Boolean(u.secret_value));
      if (u.secret_value) secrets.secret_value = this.#seal(id, 'secret_value', u.secret_value);
      return { auth: next, secrets };
    }
    if (u.type === 'mcp_oauth' && prev.type === 'mcp_oauth') {
      if (u.access_token) secrets.access_token = this.#seal(id, 'access_token', u.access_token);
      let refresh = prev.refresh;
      if (u.refresh === null) {
        refresh = null;
        delete secrets.refresh_token;
        delete secrets.client_secret;
      } else if (u.refresh) {
        if (!prev.refresh) throw new InvalidInputError(`auth.refresh: credential ${id} has no refresh settings to update (make a new credential with them)`);
        refresh = { ...prev.refresh, scope: u.refresh.scope === undefined ? prev.refresh.scope : u.refresh.scope };
        if (u.refresh.refresh_token) secrets.refresh_token = this.#seal(id, 'refresh_token', u.refresh.refresh_token);
        const tea = u.refresh.token_endpoint_auth;
        if (tea) {
          // As the API documents: only a new client_secret, under the type the credential already
          // has (the type sent is ignored). Switching how the secret is sent is for a new credential.
          if (prev.refresh.token_endpoint_auth.type === 'none') {
            throw new InvalidInputError(`auth.refresh.token_endpoint_auth: credential ${id} sends no client secret (token_endpoint_auth none); how a token endpoint authenticates cannot change on update (make a new credential)`);
          }
          if (tea.client_secret) secrets.client_secret = this.#seal(id, 'client_secret', tea.client_secret);
        }
      }
      return { auth: { ...prev, expires_at: u.expires_at === undefined ? prev.expires_at : u.expires_at, refresh }, secrets };
    }
    throw new InvalidInputError(`auth.type: credential ${id} is ${prev.type}; a credential's type cannot change`);
  }
}
