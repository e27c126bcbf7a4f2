import 'server-only';
import type { Kysely } from 'kysely';
import type { SecretField } from '~/lib/vault';
import type { Database } from '~/server/session/schema';
import { type MasterKey, type Sealed, newMasterKey, rewrap } from '~/server/vault/envelope';
import type { SealedFields } from '~/server/vault/vault-store';
import { repositoryTokenContext, sealContext, webhookKeyContext } from '~/server/vault/seal-contexts';

export { newMasterKey };

/**
 * Re-wraps every credential's data keys, and every repository token's (the git proxy's, sealed under
 * the same master key), under a new master key, in one transaction: all or none.
 * The values' ciphertexts do not change. A value already under `to` is left as it is, so a rotation
 * interrupted after its commit (before the new key was put in place) can simply be run again.
 */
export async function rotateMasterKey(db: Kysely<Database>, from: MasterKey, to: MasterKey): Promise<{ credentials: number; repositoryTokens: number; webhookKeys: number; rewrapped: number }> {
  return db.transaction().execute(async (trx) => {
    const rows = await trx.selectFrom('vault_credentials').select(['id', 'secrets']).execute();
    let rewrapped = 0;
    for (const row of rows) {
      const secrets = JSON.parse(row.secrets) as SealedFields;
      const next: SealedFields = {};
      for (const [field, sealed] of Object.entries(secrets) as Array<[SecretField, NonNullable<SealedFields[SecretField]>]>) {
        if (sealed.masterKeyId === to.id) next[field] = sealed;
        else {
          next[field] = rewrap(from, to, sealed, sealContext(row.id, field));
          rewrapped++;
        }
      }
      await trx.updateTable('vault_credentials').set({ secrets: JSON.stringify(next) }).where('id', '=', row.id).execute();
    }
    const tokens = await trx.selectFrom('repository_tokens').select(['session_id', 'resource_id', 'sealed']).execute();
    for (const t of tokens) {
      const sealed = JSON.parse(t.sealed) as Sealed;
      if (sealed.masterKeyId === to.id) continue;
      const next = rewrap(from, to, sealed, repositoryTokenContext(t.session_id, t.resource_id));
      await trx.updateTable('repository_tokens').set({ sealed: JSON.stringify(next) }).where('session_id', '=', t.session_id).where('resource_id', '=', t.resource_id).execute();
      rewrapped++;
    }
    // Webhook endpoints' signing keys (server/vault/webhook-keys.ts).
    const endpoints = await trx.selectFrom('webhook_endpoints').select(['id', 'sealed_key']).execute();
    for (const e of endpoints) {
      const sealed = JSON.parse(e.sealed_key) as Sealed;
      if (sealed.masterKeyId === to.id) continue;
      await trx.updateTable('webhook_endpoints').set({ sealed_key: JSON.stringify(rewrap(from, to, sealed, webhookKeyContext(e.id))) }).where('id', '=', e.id).execute();
      rewrapped++;
    }
    return { credentials: rows.length, repositoryTokens: tokens.length, webhookKeys: endpoints.length, rewrapped };
  });
}
