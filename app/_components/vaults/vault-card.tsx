'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { CredentialForm } from '~/app/_components/vaults/credential-form';
import { credentialTarget } from '~/app/_components/vaults/credential-target';
import { useTRPC } from '~/lib/browser/trpc';
import type { Vault } from '~/lib/vault';

/** One vault: its credentials (type and target, never a value), add, archive, delete. */
export function VaultCard({ vault }: { vault: Vault }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const creds = useQuery(trpc.vaults.credentials.queryOptions({ vaultId: vault.id, includeArchived: false }));
  const refresh = () => {
    void qc.invalidateQueries({ queryKey: trpc.vaults.credentials.queryKey({ vaultId: vault.id, includeArchived: false }) });
    void qc.invalidateQueries({ queryKey: trpc.vaults.list.queryKey() });
  };
  const archive = useMutation(trpc.vaults.archive.mutationOptions({ onSuccess: refresh }));
  const remove = useMutation(trpc.vaults.delete.mutationOptions({ onSuccess: refresh }));
  const archiveCred = useMutation(trpc.vaults.archiveCredential.mutationOptions({ onSuccess: refresh }));
  const removeCred = useMutation(trpc.vaults.deleteCredential.mutationOptions({ onSuccess: refresh }));
  const error = archive.error ?? remove.error ?? archiveCred.error ?? removeCred.error ?? creds.error;

  return (
    <div className="vault" data-testid="vault-card">
      <h3>
        {vault.display_name} <span className="mono muted">{vault.id}</span>
      </h3>
      {error && <p className="error">{error.message}</p>}
      {creds.data && creds.data.data.length === 0 && <p className="muted">No credentials yet.</p>}
      {creds.data && creds.data.data.length > 0 && (
        <table>
          <thead>
            <tr>
              <th>Type</th>
              <th>For</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {creds.data.data.map((c) => (
              <tr key={c.id} data-testid="credential-row">
                <td>{c.auth.type}</td>
                <td className="mono">{credentialTarget(c.auth)}</td>
                <td>
                  <button type="button" disabled={archiveCred.isPending} onClick={() => archiveCred.mutate({ vaultId: vault.id, id: c.id })}>
                    Archive
                  </button>{' '}
                  <button type="button" disabled={removeCred.isPending} onClick={() => removeCred.mutate({ vaultId: vault.id, id: c.id })}>
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <CredentialForm vaultId={vault.id} onSaved={refresh} />
      <p>
        <button type="button" disabled={archive.isPending} onClick={() => archive.mutate({ id: vault.id })}>
          Archive vault
        </button>{' '}
        <button type="button" disabled={remove.isPending} onClick={() => remove.mutate({ id: vault.id })}>
          Delete vault
        </button>
      </p>
    </div>
  );
}
