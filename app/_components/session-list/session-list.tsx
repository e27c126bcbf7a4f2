'use client';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useLiveQuery } from 'dexie-react-hooks';
import { useEffect, useState } from 'react';
import { BrainBadge } from '~/app/_components/brain-badge';
import { NewSessionForm } from '~/app/_components/new-session/new-session-form';
import { StoreOutageBanner } from '~/app/_components/session-view/store-outage-banner';
import { forgetSession, mirror, mirrorSessions } from '~/lib/browser/mirror';
import { storeUnavailable, useTRPC } from '~/lib/browser/trpc';
import { timeAgo } from '~/app/_components/time';

export function SessionList() {
  const trpc = useTRPC();
  // Filters: by agent, and to the sessions a docs widget started (from one site, or any).
  const [agentId, setAgentId] = useState('');
  const [widgetOrigin, setWidgetOrigin] = useState('');
  const filtered = agentId !== '' || widgetOrigin !== '';
  const list = useQuery(trpc.sessions.list.queryOptions({ limit: 100, ...(agentId ? { agentId } : {}), ...(widgetOrigin ? { widgetOrigin } : {}) }, { refetchInterval: 5_000 }));
  const agents = useQuery(trpc.agents.list.queryOptions({ limit: 100 }));
  const origins = useQuery(trpc.widgets.origins.queryOptions(undefined, { refetchInterval: 30_000 }));
  const mirrored = useLiveQuery(() => mirror().sessions.orderBy('updated_at').reverse().limit(100).toArray(), []);
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
    if (list.data && !filtered) void mirrorSessions(list.data.data);
  }, [list.data, filtered]);
  // Enabled only once hydrated: a click on the server-rendered button would otherwise do nothing.
  const [hydrated, setHydrated] = useState(false);
  useEffect(() => setHydrated(true), []);

  const offline = list.isError;
  // The server answers but its database does not (503): not the same as being offline.
  const databaseDown = offline && storeUnavailable(list.error);
  const sessions: { id: string; title: string; status: string; last_seq: number; updated_at: string; widget?: { origin: string } | null }[] = list.data?.data ?? (filtered ? [] : (mirrored ?? []));

  return (
    <section>
      <BrainBadge />
      <div className="list-head">
        <h1>Sessions</h1>
        <NewSessionForm disabled={!hydrated || offline} />
      </div>
      <div className="list-filters">
        <label>
          Agent{' '}
          <select value={agentId} onChange={(e) => setAgentId(e.target.value)} data-testid="filter-agent">
            <option value="">all</option>
            {(agents.data?.data ?? []).map((a) => (
              <option key={a.id} value={a.id}>
                {a.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          From{' '}
          <select value={widgetOrigin} onChange={(e) => setWidgetOrigin(e.target.value)} data-testid="filter-origin">
            <option value="">anywhere</option>
            <option value="*">any docs widget</option>
            {(origins.data ?? []).map((o) => (
              <option key={o} value={o}>
                widget on {o}
              </option>
            ))}
          </select>
        </label>
      </div>
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
                  {/* A full page load, not a client-side one: only it gets the session page's COOP/COEP, which the tab hand's WebContainer needs. */}
                  <a href={`/s/${s.id}`}>{s.title}</a>
                  <div className="mono muted small">
                    {s.id}
                    {s.widget && <span data-testid="session-widget-origin"> · widget on {s.widget.origin}</span>}
                  </div>
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
