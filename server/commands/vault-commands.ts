import 'server-only';
import type { Credential, Vault } from '~/lib/vault';
import type { SessionDeps } from '~/server/commands/session-deps';
import { archiveNotifying, notify } from '~/server/commands/webhook-notify';
import type { VaultStore } from '~/server/vault/vault-store';

/**
 * Vaults' and credentials' lifecycle, for both edges: the store validates, seals and writes; this
 * reports each change as its webhook event (vault.*, vault_credential.* naming its vault). An
 * event names ids only, never a value. The API defines no `vault.updated` or
 * `vault_credential.updated`: updates send nothing.
 */
export interface VaultDeps extends Pick<SessionDeps, 'webhooks'> {
  vaults: VaultStore;
}

export async function createVault(d: VaultDeps, input: unknown): Promise<Vault> {
  const vault = await d.vaults.createVault(input);
  await notify(d, 'vault.created', vault.id);
  return vault;
}

/** Archiving an archived vault changes nothing, and sends nothing (its credentials archived with it send none of their own). */
export async function archiveVault(d: VaultDeps, id: string): Promise<Vault> {
  return archiveNotifying(d, 'vault.archived', id, () => d.vaults.getVault(id), () => d.vaults.archiveVault(id));
}

export async function deleteVault(d: VaultDeps, id: string): Promise<{ id: string; type: 'vault_deleted' }> {
  const deleted = await d.vaults.deleteVault(id);
  await notify(d, 'vault.deleted', id);
  return deleted;
}

export async function createCredential(d: VaultDeps, vaultId: string, input: unknown): Promise<Credential> {
  const credential = await d.vaults.createCredential(vaultId, input);
  await notify(d, 'vault_credential.created', credential.id, { vault_id: vaultId });
  return credential;
}

export async function archiveCredential(d: VaultDeps, vaultId: string, id: string): Promise<Credential> {
  return archiveNotifying(d, 'vault_credential.archived', id, () => d.vaults.getCredential(vaultId, id), () => d.vaults.archiveCredential(vaultId, id), { vault_id: vaultId });
}

export async function deleteCredential(d: VaultDeps, vaultId: string, id: string): Promise<{ id: string; type: 'vault_credential_deleted' }> {
  const deleted = await d.vaults.deleteCredential(vaultId, id);
  await notify(d, 'vault_credential.deleted', id, { vault_id: vaultId });
  return deleted;
}

/**
 * A credential whose OAuth refresh failed (the MCP proxy tells, ids only): reported so its owner
 * reconnects it. Once per failed attempt: a proxy call refreshes at most once.
 */
export async function credentialRefreshFailed(d: Pick<SessionDeps, 'webhooks'>, c: { credentialId: string; vaultId: string }): Promise<void> {
  await notify(d, 'vault_credential.refresh_failed', c.credentialId, { vault_id: c.vaultId });
}
