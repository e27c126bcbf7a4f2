'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { timeAgo } from '~/app/_components/time';
import { useTRPC } from '~/lib/browser/trpc';

/** Programs' API keys: made here (shown once), listed by name and prefix, revoked here. */
export function ApiKeys() {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const keys = useQuery(trpc.apiKeys.list.queryOptions());
  const [name, setName] = useState('');
  const [made, setMade] = useState<{ key: string; name: string } | null>(null);
  const refresh = () => qc.invalidateQueries({ queryKey: trpc.apiKeys.list.queryKey() });
  const create = useMutation(
    trpc.apiKeys.create.mutationOptions({
      onSuccess: (k, input) => {
        setMade({ key: k.key, name: input.name });
        setName('');
        void refresh();
      },
    }),
  );
  const revoke = useMutation(trpc.apiKeys.revoke.mutationOptions({ onSuccess: () => void refresh() }));

  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate({ name });
  };

  return (
    <section>
      <h2>API keys</h2>
      <p className="muted">
        For programs: send the key as <span className="mono">x-api-key</span> or <span className="mono">Authorization: Bearer</span>. Only a hash is stored, so a key is
        shown once, when it is made.
      </p>
      <form onSubmit={submit}>
        <input aria-label="Key name" placeholder="name, e.g. ci-bot" value={name} maxLength={100} onChange={(e) => setName(e.target.value)} required />
        <button type="submit" className="primary" disabled={create.isPending || name.trim() === ''} data-testid="create-key">
          Create key
        </button>
      </form>
      {create.error && <p className="error">{create.error.message}</p>}
      {made && (
        <div className="new-key" data-testid="new-key">
          <strong>{made.name}</strong>: copy this key now; it will not be shown again.
          <code>{made.key}</code>
          <button type="button" onClick={() => void navigator.clipboard?.writeText(made.key)}>
            Copy
          </button>{' '}
          <button type="button" onClick={() => setMade(null)}>
            Done
          </button>
        </div>
      )}
      {keys.error && <p className="error">{keys.error.message}</p>}
      {keys.data && keys.data.length === 0 && <p className="muted">No keys yet.</p>}
      {keys.data && keys.data.length > 0 && (
        <table>
          <thead>
            <tr>
              <th>Name</th>
              <th>Key</th>
              <th>Created</th>
              <th>Last used</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {keys.data.map((k) => (
              <tr key={k.id} data-testid="api-key-row">
                <td>{k.name}</td>
                <td className="mono">{k.prefix}…</td>
                <td>{timeAgo(k.created_at)}</td>
                <td>{k.last_used_at ? timeAgo(k.last_used_at) : 'never'}</td>
                <td>
                  <button type="button" disabled={revoke.isPending} onClick={() => revoke.mutate({ id: k.id })}>
                    Revoke
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
