'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { VaultCard } from '~/app/_components/vaults/vault-card';
import { useTRPC } from '~/lib/browser/trpc';

/** The settings page's vaults: make one, then add credentials to it. Values are never shown back. */
export function VaultsSection() {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const vaults = useQuery(trpc.vaults.list.queryOptions({ includeArchived: false }));
  const [name, setName] = useState('');
  const create = useMutation(
    trpc.vaults.create.mutationOptions({
      onSuccess: () => {
        setName('');
        void qc.invalidateQueries({ queryKey: trpc.vaults.list.queryKey() });
      },
    }),
  );
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate({ display_name: name });
  };

  return (
    <section data-testid="vaults">
      <h2>Vaults</h2>
      <p className="muted">
        Credentials for MCP servers and the environment, used by sessions that name the vault (<span className="mono">vault_ids</span>). Values are stored encrypted and
        are write-only: entered once, never shown again, never given to a hand.
      </p>
      <form onSubmit={submit}>
        <input aria-label="Vault name" placeholder="vault name, e.g. team tools" value={name} maxLength={255} onChange={(e) => setName(e.target.value)} required />
        <button type="submit" className="primary" disabled={create.isPending || name.trim() === ''} data-testid="create-vault">
          Create vault
        </button>
      </form>
      {create.error && <p className="error">{create.error.message}</p>}
      {vaults.error && <p className="error">{vaults.error.message}</p>}
      {vaults.data && vaults.data.data.length === 0 && <p className="muted">No vaults yet.</p>}
      {vaults.data?.data.map((v) => (
        <VaultCard key={v.id} vault={v} />
      ))}
    </section>
  );
}
