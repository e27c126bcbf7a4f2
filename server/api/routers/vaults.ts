import 'server-only';
import { z } from 'zod';
import { CREDENTIAL_ID, CredentialAuthParams, VAULT_ID } from '~/lib/vault';
import { createTRPCRouter, ownerProcedure } from '~/server/api/trpc';
import { archiveCredential, archiveVault, createCredential, createVault, deleteCredential, deleteVault } from '~/server/commands/vault-commands';

const VaultId = z.string().regex(VAULT_ID, 'must be a vault id (vlt_…)');
const CredentialId = z.string().regex(CREDENTIAL_ID, 'must be a credential id (vcrd_…)');
const Archived = z.object({ includeArchived: z.boolean().default(false) });

/**
 * The settings page's vaults: the owner's only (never an API key's: programs use /v1/vaults).
 * Same store as the REST API, so a value is write-only here too: nothing answers one.
 */
export const vaultsRouter = createTRPCRouter({
  list: ownerProcedure
    .input(Archived.default({ includeArchived: false }))
    .query(({ ctx, input }) => ctx.runtime.vaults.listVaults({ limit: 100, includeArchived: input.includeArchived })),

  create: ownerProcedure.input(z.object({ display_name: z.string().trim().min(1).max(255) })).mutation(({ ctx, input }) => createVault(ctx.runtime, input)),

  archive: ownerProcedure.input(z.object({ id: VaultId })).mutation(({ ctx, input }) => archiveVault(ctx.runtime, input.id)),

  delete: ownerProcedure.input(z.object({ id: VaultId })).mutation(({ ctx, input }) => deleteVault(ctx.runtime, input.id)),

  credentials: ownerProcedure
    .input(Archived.extend({ vaultId: VaultId }))
    .query(({ ctx, input }) => ctx.runtime.vaults.listCredentials(input.vaultId, { limit: 100, includeArchived: input.includeArchived })),

  addCredential: ownerProcedure
    .input(z.object({ vaultId: VaultId, display_name: z.string().trim().min(1).max(255).nullish(), auth: CredentialAuthParams }))
    .mutation(({ ctx, input }) => {
      const { vaultId, ...params } = input;
      return createCredential(ctx.runtime, vaultId, params);
    }),

  archiveCredential: ownerProcedure.input(z.object({ vaultId: VaultId, id: CredentialId })).mutation(({ ctx, input }) => archiveCredential(ctx.runtime, input.vaultId, input.id)),

  deleteCredential: ownerProcedure.input(z.object({ vaultId: VaultId, id: CredentialId })).mutation(({ ctx, input }) => deleteCredential(ctx.runtime, input.vaultId, input.id)),
});
