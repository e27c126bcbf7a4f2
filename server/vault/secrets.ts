import 'server-only';
import type { Kysely } from 'kysely';
import type { CredentialAuth } from '~/lib/vault';
import type { HandSecret } from '~/server/hands/sandbox/hand-secret';
import type { Database } from '~/server/session/schema';
import { type MasterKey, type Sealed, open, seal } from '~/server/vault/envelope';
import type { McpSecret, McpSecretSource } from '~/server/vault/mcp-secret';
import type { SealedFields } from '~/server/vault/vault-store';
import { sealContext } from '~/server/vault/seal-contexts';

/**
 * The decrypting side of the vault: the only code that opens a sealed value. Only `server/proxy`
 * (and the vault itself) may import it; `server/harness` and `server/hands` may not (lint rule,
 * checked by `boundary.test.ts`).
 */

/** Seals a value bound to `context` (e.g. `<id>:<field>`), for stores of the proxies to come. */
export function sealSecret(master: MasterKey, value: string, context: string): Sealed {
  return seal(master, value, context);
}

export function openSecret(master: MasterKey, sealed: Sealed, context: string): string {
  return open(master, sealed, context);
}

export class VaultSecrets implements McpSecretSource {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly master: MasterKey,
  ) {}

  async mcpSecret(vaultIds: readonly string[], serverUrl: string): Promise<McpSecret | null> {
    for (const vaultId of vaultIds) {
      const row = await this.db
        .selectFrom('vault_credentials')
        .innerJoin('vaults', 'vaults.id', 'vault_credentials.vault_id')
        .select(['vault_credentials.id', 'vault_credentials.vault_id', 'vault_credentials.auth', 'vault_credentials.secrets'])
        .where('vault_credentials.vault_id', '=', vaultId)
        .where('vault_credentials.match_key', '=', `mcp:${serverUrl}`)
        .where('vault_credentials.archived_at', 'is', null)
        .where('vaults.archived_at', 'is', null)
        .executeTakeFirst();
      const secret = row ? this.toMcpSecret(row) : null;
      if (secret) return secret;
    }
    return null;
  }

  async mcpSecretById(credentialId: string): Promise<McpSecret | null> {
    const row = await this.db.selectFrom('vault_credentials').select(['id', 'vault_id', 'auth', 'secrets']).where('id', '=', credentialId).executeTakeFirst();
    return row ? this.toMcpSecret(row) : null;
  }

  private toMcpSecret(row: { id: string; vault_id: string; auth: string; secrets: string }): McpSecret | null {
    const auth = JSON.parse(row.auth) as CredentialAuth;
    const secrets = JSON.parse(row.secrets) as SealedFields;
    const read = (field: keyof SealedFields): string => {
      const s = secrets[field];
      if (!s) throw new Error(`credential ${row.id}: ${field} is missing`);
      return open(this.master, s, sealContext(row.id, field));
    };
    const vaultId = row.vault_id;
    if (auth.type === 'static_bearer') return { credentialId: row.id, vaultId, type: 'static_bearer', token: read('token') };
    if (auth.type !== 'mcp_oauth') return null;
    const r = auth.refresh;
    return {
      credentialId: row.id,
      vaultId,
      type: 'mcp_oauth',
      accessToken: read('access_token'),
      expiresAt: auth.expires_at,
      refresh: r
        ? {
            clientId: r.client_id,
            refreshToken: read('refresh_token'),
            tokenEndpoint: r.token_endpoint,
            tokenEndpointAuth: r.token_endpoint_auth.type === 'none' ? { type: 'none' } : { type: r.token_endpoint_auth.type, clientSecret: read('client_secret') },
            resource: r.resource,
            scope: r.scope,
          }
        : null,
    };
  }

  /**
   * A session's `environment_variable` credentials for its sandbox hands' egress proxies: one per
   * `secret_name`, the first vault in `vault_ids` order winning; archived ones left out. Hosts keep
   * their ports: a host listed without one gets the value on 443 only (secret-injection.ts).
   */
  async handSecrets(vaultIds: readonly string[]): Promise<HandSecret[]> {
    const byName = new Map<string, HandSecret>();
    for (const vaultId of vaultIds) {
      const rows = await this.db
        .selectFrom('vault_credentials')
        .innerJoin('vaults', 'vaults.id', 'vault_credentials.vault_id')
        .select(['vault_credentials.id', 'vault_credentials.auth', 'vault_credentials.secrets'])
        .where('vault_credentials.vault_id', '=', vaultId)
        .where('vault_credentials.match_key', 'like', 'env:%')
        .where('vault_credentials.archived_at', 'is', null)
        .where('vaults.archived_at', 'is', null)
        .orderBy('vault_credentials.id')
        .execute();
      for (const row of rows) {
        const auth = JSON.parse(row.auth) as CredentialAuth;
        if (auth.type !== 'environment_variable' || byName.has(auth.secret_name)) continue;
        const sealed = (JSON.parse(row.secrets) as SealedFields).secret_value;
        if (!sealed) throw new Error(`credential ${row.id}: secret_value is missing`);
        byName.set(auth.secret_name, {
          name: auth.secret_name,
          value: open(this.master, sealed, sealContext(row.id, 'secret_value')),
          hosts: auth.networking.type === 'unrestricted' ? ['*'] : [...new Set(auth.networking.allowed_hosts.map((h) => h.toLowerCase()))],
          header: auth.injection_location.header,
          ...(auth.injection_location.header_names ? { headerNames: auth.injection_location.header_names } : {}),
          body: auth.injection_location.body,
        });
      }
    }
    return [...byName.values()];
  }

  async saveRefreshedToken(credentialId: string, next: { accessToken: string; expiresAt: string | null; refreshToken?: string }): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('vault_credentials').select(['auth', 'secrets']).where('id', '=', credentialId).executeTakeFirst();
      if (!row) return; // deleted meanwhile: nothing to keep
      const auth = JSON.parse(row.auth) as CredentialAuth;
      if (auth.type !== 'mcp_oauth') throw new Error(`credential ${credentialId} is not mcp_oauth`);
      const secrets = JSON.parse(row.secrets) as SealedFields;
      secrets.access_token = seal(this.master, next.accessToken, sealContext(credentialId, 'access_token'));
      if (next.refreshToken) secrets.refresh_token = seal(this.master, next.refreshToken, sealContext(credentialId, 'refresh_token'));
      await trx
        .updateTable('vault_credentials')
        .set({ auth: JSON.stringify({ ...auth, expires_at: next.expiresAt }), secrets: JSON.stringify(secrets), updated_at: new Date().toISOString() })
        .where('id', '=', credentialId)
        .execute();
    });
  }
}
