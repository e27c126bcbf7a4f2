'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { EnvironmentForm } from '~/app/_components/environments/environment-form';
import { SelfHostedPanel } from '~/app/_components/environments/self-hosted-panel';
import { timeAgo } from '~/app/_components/time';
import { DEFAULT_ENVIRONMENT_ID, type Environment } from '~/lib/agent';
import { useTRPC } from '~/lib/browser/trpc';

function configSummary(e: Environment): string {
  if (e.config.type === 'self_hosted') return 'self-hosted';
  const n = e.config.networking;
  const net =
    n.type === 'unrestricted'
      ? 'network: unrestricted'
      : `network: ${n.allowed_hosts.length === 0 ? 'none' : n.allowed_hosts.join(', ')}${n.allow_package_managers ? ' + package managers' : ''}`;
  const p = e.config.packages;
  const pkgs = (['apt', 'npm', 'pip', 'cargo', 'gem', 'go'] as const).filter((m) => p[m].length > 0).map((m) => `${m}: ${p[m].join(' ')}`);
  return [net, ...pkgs].join(' · ');
}

export function EnvironmentList() {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const list = useQuery(trpc.environments.list.queryOptions({ limit: 100, includeArchived: true }));
  const [editing, setEditing] = useState<Environment | 'new' | null>(null);
  const refresh = () => qc.invalidateQueries({ queryKey: trpc.environments.list.queryKey() });
  const archive = useMutation(trpc.environments.archive.mutationOptions({ onSuccess: () => void refresh() }));
  const remove = useMutation(trpc.environments.delete.mutationOptions({ onSuccess: () => void refresh() }));
  const [hydrated, setHydrated] = useState(false);
  useEffect(() => setHydrated(true), []);

  const envs = list.data?.data ?? [];
  const failed = archive.error ?? remove.error;
  const confirmDelete = (e: Environment) => {
    if (window.confirm(`Delete "${e.name}" for good? Sessions that used it keep running as they are.`)) remove.mutate({ id: e.id });
  };

  return (
    <section>
      <div className="list-head">
        <h1>Environments</h1>
        <button type="button" className="primary" data-testid="new-environment" disabled={!hydrated || editing !== null} onClick={() => setEditing('new')}>
          New environment
        </button>
      </div>
      <p className="muted">Where a session&apos;s hands run: which hosts they may reach and which packages they get, or your own machines (self-hosted: your workers run its tools).</p>
      {editing !== null && (
        <EnvironmentForm
          key={editing === 'new' ? 'new' : editing.id}
          env={editing === 'new' ? null : editing}
          onCancel={() => setEditing(null)}
          onDone={() => {
            setEditing(null);
            void refresh();
          }}
        />
      )}
      {list.error && <p className="error">{list.error.message}</p>}
      {failed && <p className="error">{failed.message}</p>}
      {list.isLoading && <p className="muted">Loading…</p>}
      <ul className="cards" data-testid="environments">
        {envs.map((e) => (
          <li key={e.id} className={`card ${e.archived_at ? 'archived' : ''}`} data-testid="environment-row">
            <div className="card-head">
              <strong>{e.name}</strong>
              {e.id === DEFAULT_ENVIRONMENT_ID && <span className="status">default</span>}
              {e.archived_at && <span className="status">archived</span>}
            </div>
            {e.description && <div>{e.description}</div>}
            <div className="small muted">{configSummary(e)}</div>
            {e.config.type === 'self_hosted' && !e.archived_at && <SelfHostedPanel environmentId={e.id} />}
            <div className="mono muted small">
              {e.id} · updated {timeAgo(e.updated_at)}
            </div>
            <div className="card-actions">
              <button type="button" data-testid="edit-environment" disabled={!hydrated || editing !== null} onClick={() => setEditing(e)}>
                Edit
              </button>
              {/* The default stays: sessions made without naming an environment use it. */}
              {e.id !== DEFAULT_ENVIRONMENT_ID && !e.archived_at && (
                <button type="button" className="quiet" data-testid="archive-environment" disabled={!hydrated || archive.isPending} onClick={() => archive.mutate({ id: e.id })}>
                  Archive
                </button>
              )}
              {e.id !== DEFAULT_ENVIRONMENT_ID && (
                <button type="button" className="quiet" data-testid="delete-environment" disabled={!hydrated || remove.isPending} onClick={() => confirmDelete(e)}>
                  Delete
                </button>
              )}
            </div>
          </li>
        ))}
      </ul>
    </section>
  );
}
