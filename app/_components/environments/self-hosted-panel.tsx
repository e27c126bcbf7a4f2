'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { timeAgo } from '~/app/_components/time';
import { useTRPC } from '~/lib/browser/trpc';

/**
 * A self-hosted environment's workers, on its card: its keys (made here, shown once, revoked),
 * how many workers polled in the last 30 s, the queue's depth, and its newest work items.
 */
export function SelfHostedPanel({ environmentId }: { environmentId: string }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const state = useQuery({ ...trpc.environments.selfHosted.queryOptions({ id: environmentId }), refetchInterval: 5_000 });
  const refresh = () => qc.invalidateQueries({ queryKey: trpc.environments.selfHosted.queryKey({ id: environmentId }) });
  const [made, setMade] = useState<string | null>(null);
  const [name, setName] = useState('worker key');
  const create = useMutation(
    trpc.environments.createKey.mutationOptions({
      onSuccess: (k) => {
        setMade(k.key);
        void refresh();
      },
    }),
  );
  const revoke = useMutation(trpc.environments.revokeKey.mutationOptions({ onSuccess: () => void refresh() }));
  const check = useMutation(trpc.environments.checkWorkers.mutationOptions({ onSuccess: () => void refresh() }));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate({ id: environmentId, name });
  };
  const data = state.data;
  const failed = state.error ?? create.error ?? revoke.error ?? check.error;
  return (
    <div className="self-hosted" data-testid="self-hosted-panel">
      {failed && <p className="error">{failed.message}</p>}
      {data && (
        <div className="small" data-testid="work-stats">
          workers polling: <strong>{data.stats.workers_polling ?? 0}</strong> · queue depth: <strong>{data.stats.depth}</strong> · handed out, not acknowledged: {data.stats.pending}
          {data.stats.oldest_queued_at && <> · oldest queued {timeAgo(data.stats.oldest_queued_at)}</>}{' '}
          <button type="button" className="quiet" data-testid="check-workers" title="queue a healthcheck item: a worker that polls claims and stops it" disabled={check.isPending} onClick={() => check.mutate({ id: environmentId })}>
            Check workers
          </button>
        </div>
      )}
      <div className="small">
        <strong>Keys</strong>
        <ul data-testid="environment-keys">
          {data?.keys.map((k) => (
            <li key={k.id} className="mono">
              {k.name} · {k.prefix}… · made {timeAgo(k.created_at)}
              {k.last_used_at ? ` · used ${timeAgo(k.last_used_at)}` : ' · never used'}{' '}
              <button type="button" className="quiet" data-testid="revoke-environment-key" disabled={revoke.isPending} onClick={() => revoke.mutate({ id: environmentId, keyId: k.id })}>
                Revoke
              </button>
            </li>
          ))}
          {data?.keys.length === 0 && <li className="muted">none yet: make one for your workers</li>}
        </ul>
        <form onSubmit={submit} className="inline-form">
          <input aria-label="key name" value={name} maxLength={256} onChange={(e) => setName(e.target.value)} />
          <button type="submit" data-testid="make-environment-key" disabled={create.isPending || name.trim() === ''}>
            Make a key
          </button>
        </form>
        {made && (
          <p data-testid="new-environment-key">
            Copy it now, it is not shown again: <code className="mono">{made}</code>
            <br />
            Run a worker: <code className="mono">npx paddock-hand worker --environment {environmentId} --url {typeof window === 'undefined' ? '' : window.location.origin} --key-file KEYFILE</code>
          </p>
        )}
      </div>
      {data && data.items.length > 0 && (
        <div className="small">
          <strong>Work items</strong>
          <ul data-testid="work-items">
            {data.items.map((w) => (
              <li key={w.id} className="mono">
                {w.id} · {w.data.type} {w.data.type === 'session' ? w.data.id : ''} · {w.state}
                {w.worker_id ? ` · ${w.worker_id}` : ''}
                {w.lost_reason ? ` · lost: ${w.lost_reason}` : ''} · {timeAgo(w.created_at)}
              </li>
            ))}
          </ul>
        </div>
      )}
    </div>
  );
}
