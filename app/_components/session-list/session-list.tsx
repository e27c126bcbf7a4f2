'use client';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useLiveQuery } from 'dexie-react-hooks';
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { useEffect, useState } from 'react';
import { BrainBadge } from '~/app/_components/brain-badge';
import { StoreOutageBanner } from '~/app/_components/session-view/store-outage-banner';
import { DEFAULT_AGENT_ID, DEFAULT_ENVIRONMENT_ID, unsupportedEnvironment } from '~/lib/agent';
import { forgetSession, mirror, mirrorSessions } from '~/lib/browser/mirror';
import { storeUnavailable, useTRPC } from '~/lib/browser/trpc';
import { timeAgo } from '~/app/_components/time';

export function SessionList() {
  const trpc = useTRPC();
  const router = useRouter();
  const list = useQuery(trpc.sessions.list.queryOptions({ limit: 100 }, { refetchInterval: 5_000 }));
  // What a new session runs: the built-in defaults are preselected (and work even if these lists fail).
  const agents = useQuery(trpc.agents.list.queryOptions({ limit: 100 }));
  const environments = useQuery(trpc.environments.list.queryOptions({ limit: 100 }));
  // Until the server says otherwise, what it allows by default.
  const support = useQuery(trpc.environments.support.queryOptions()).data ?? { allowUnrestrictedNetwork: false };
  const [agentId, setAgentId] = useState(DEFAULT_AGENT_ID);
  const [environmentId, setEnvironmentId] = useState(DEFAULT_ENVIRONMENT_ID);
  const mirrored = useLiveQuery(() => mirror().sessions.orderBy('updated_at').reverse().limit(100).toArray(), []);
  const create = useMutation(
    trpc.sessions.create.mutationOptions({
      onSuccess: (s) => router.push(`/s/${s.id}`),
    }),
  );

  const remove = useMutation(
    trpc.sessions.delete.mutationOptions({
      onSuccess: async ({ id }) => {
        await forgetSession(id);
        await list.refetch();
      },
    }),
  );
  const confirmDelete = (id: string, title: string) => {
    if (window.confirm(`Delete "${title}"? Its log, its hands and their files are removed for good.`)) remove.mutate({ id });
  };

  useEffect(() => {
    if (list.data) void mirrorSessions(list.data.data);
  }, [list.data]);
  // Enabled only once hydrated: a click on the server-rendered button would otherwise do nothing.
  const [hydrated, setHydrated] = useState(false);
  useEffect(() => setHydrated(true), []);

  const offline = list.isError;
  // The server answers but its database does not (503): not the same as being offline.
  const databaseDown = offline && storeUnavailable(list.error);
  const sessions = list.data?.data ?? mirrored ?? [];

  return (
    <section>
      <BrainBadge />
      <div className="list-head">
        <h1>Sessions</h1>
        <div className="new-session">
          <label>
            <span className="muted small">agent</span>
            <select data-testid="new-session-agent" value={agentId} onChange={(e) => setAgentId(e.target.value)}>
              {(agents.data?.data ?? []).some((a) => a.id === DEFAULT_AGENT_ID) ? null : <option value={DEFAULT_AGENT_ID}>Default agent</option>}
              {(agents.data?.data ?? []).map((a) => (
                <option key={a.id} value={a.id}>
                  {a.name} (v{a.version})
                </option>
              ))}
            </select>
          </label>
          <label>
            <span className="muted small">environment</span>
            <select data-testid="new-session-environment" value={environmentId} onChange={(e) => setEnvironmentId(e.target.value)}>
              {(environments.data?.data ?? []).some((e) => e.id === DEFAULT_ENVIRONMENT_ID) ? null : <option value={DEFAULT_ENVIRONMENT_ID}>Default environment</option>}
              {(environments.data?.data ?? [])
                .map((e) => ({ e, why: unsupportedEnvironment(e.config, support) }))
                .map(({ e, why }) => (
                  // Offered but not choosable: the server would refuse a session there, saying why.
                  <option key={e.id} value={e.id} disabled={why !== null} title={why ? `This environment ${why}` : undefined}>
                    {why ? `${e.name} (not runnable here)` : e.name}
                  </option>
                ))}
            </select>
          </label>
          <button type="button" className="primary" data-testid="new-session" disabled={!hydrated || create.isPending || offline} onClick={() => create.mutate({ agentId, environmentId })}>
            {create.isPending ? 'Starting…' : 'New session'}
          </button>
        </div>
      </div>
      {create.error && <p className="error">Could not start a session: {create.error.message}</p>}
      {remove.error && <p className="error">Could not delete the session: {remove.error.message}</p>}
      {databaseDown ? (
        <StoreOutageBanner detail={list.error.message} what="your sessions" />
      ) : (
        offline && (
          <p className="offline-banner" data-testid="offline-banner">
            The server cannot be reached; showing the sessions mirrored in this browser.
          </p>
        )
      )}
      {sessions.length === 0 ? (
        <p className="muted">{list.isLoading ? 'Loading…' : 'No sessions yet. Start one to talk to the agent.'}</p>
      ) : (
        <table className="sessions" data-testid="sessions">
          <thead>
            <tr>
              <th>Title</th>
              <th>Status</th>
              <th>Events</th>
              <th>Last activity</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {sessions.map((s) => (
              <tr key={s.id}>
                <td>
                  <Link href={`/s/${s.id}`}>{s.title}</Link>
                  <div className="mono muted small">{s.id}</div>
                </td>
                <td>
                  <span className={`status status-${s.status}`}>{s.status}</span>
                </td>
                <td className="mono">{s.last_seq}</td>
                <td title={s.updated_at}>{timeAgo(s.updated_at)}</td>
                <td>
                  <button type="button" className="quiet" data-testid="delete-session" disabled={!hydrated || offline || remove.isPending} onClick={() => confirmDelete(s.id, s.title)}>
                    Delete
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
