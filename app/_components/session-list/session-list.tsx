'use client';
import { keepPreviousData, useMutation, useQuery } from '@tanstack/react-query';
import { useLiveQuery } from 'dexie-react-hooks';
import { useEffect, useState } from 'react';
import { BrainBadge } from '~/app/_components/brain-badge';
import { NewSessionForm } from '~/app/_components/new-session/new-session-form';
import { StoreOutageBanner } from '~/app/_components/session-view/store-outage-banner';
import { forgetSession, mirror, mirrorSessions } from '~/lib/browser/mirror';
import { storeUnavailable, useTRPC } from '~/lib/browser/trpc';
import { timeAgo } from '~/app/_components/time';
import { FirstSteps } from '~/app/_components/first-steps/first-steps';
import { useDebounced } from '~/lib/browser/use-debounced';

type ListStatus = 'needs_approval' | 'running' | 'idle' | 'rescheduling' | 'terminated';
const STATUSES: [ListStatus, string][] = [
  ['needs_approval', 'needs approval'],
  ['running', 'running'],
  ['idle', 'idle'],
  ['rescheduling', 'rescheduling'],
  ['terminated', 'terminated'],
];

type Row = { id: string; title: string; status: string; updated_at: string; waiting_on?: string | null; last_message?: string | null; agent?: { name: string } | null; widget?: { origin: string } | null };

/** The status as the list shows it: an idle session whose call waits for a verdict needs approval. */
function shownStatus(s: Row): [string, string] {
  return s.status === 'idle' && s.waiting_on === 'approval' ? ['needs_approval', 'needs approval'] : [s.status, s.status];
}

export function SessionList() {
  const trpc = useTRPC();
  // Filters: a title fragment, a status, an agent, and the sessions a docs widget started (from one site, or any).
  const [search, setSearch] = useState('');
  const q = useDebounced(search.trim(), 250);
  const [status, setStatus] = useState<ListStatus | ''>('');
  const [agentId, setAgentId] = useState('');
  const [widgetOrigin, setWidgetOrigin] = useState('');
  const filtered = agentId !== '' || widgetOrigin !== '' || q !== '' || status !== '';
  const list = useQuery(
    trpc.sessions.list.queryOptions(
      { limit: 100, ...(agentId ? { agentId } : {}), ...(widgetOrigin ? { widgetOrigin } : {}), ...(q ? { q } : {}), ...(status ? { status } : {}) },
      { refetchInterval: 5_000, placeholderData: keepPreviousData },
    ),
  );
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
  const sessions: Row[] = list.data?.data ?? (filtered ? [] : (mirrored ?? []));

  return (
    <section>
      <BrainBadge demoOnly />
      <div className="list-head">
        <h1>Sessions</h1>
        <NewSessionForm disabled={!hydrated || offline} />
      </div>
      {/* Nothing to search or filter on a server nobody used yet: the first steps take the place. */}
      {(filtered || sessions.length > 0 || list.isLoading) && (
        <div className="list-filters">
          <input type="search" className="list-search" placeholder="Search titles" aria-label="Search session titles" value={search} onChange={(e) => setSearch(e.target.value)} data-testid="filter-search" />
          <label>
            Status{' '}
            <select value={status} onChange={(e) => setStatus(e.target.value as ListStatus | '')} data-testid="filter-status">
              <option value="">any</option>
              {STATUSES.map(([v, label]) => (
                <option key={v} value={v}>
                  {label}
                </option>
              ))}
            </select>
          </label>
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
      )}
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
        list.isLoading ? (
          <p className="muted">Loading…</p>
        ) : filtered ? (
          <p className="muted" data-testid="sessions-none">
            No session matches these filters.
          </p>
        ) : (
          <FirstSteps />
        )
      ) : (
        <table className="sessions" data-testid="sessions">
          <thead>
            <tr>
              <th>Session</th>
              <th>Status</th>
              <th>Agent</th>
              <th>Last activity</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {sessions.map((s) => {
              const [statusClass, statusText] = shownStatus(s);
              return (
                <tr key={s.id} data-testid="session-row" data-session={s.id}>
                  <td className="session-cell">
                    {/* A full page load, not a client-side one: only it gets the session page's COOP/COEP, which the tab hand's WebContainer needs. */}
                    <a href={`/s/${s.id}`}>{s.title}</a>
                    {s.last_message && (
                      <div className="muted small last-message" data-testid="session-last-message" title={s.last_message}>
                        {s.last_message}
                      </div>
                    )}
                    {s.widget && (
                      <div className="muted small" data-testid="session-widget-origin">
                        widget on {s.widget.origin}
                      </div>
                    )}
                  </td>
                  <td>
                    <span className={`status status-${statusClass}`} data-testid="session-status">
                      {statusText}
                    </span>
                  </td>
                  <td className="small" data-testid="session-agent-name">
                    {s.agent?.name ?? 'default'}
                  </td>
                  <td title={s.updated_at}>{timeAgo(s.updated_at)}</td>
                  <td>
                    <button type="button" className="quiet" data-testid="delete-session" disabled={!hydrated || offline || remove.isPending} onClick={() => confirmDelete(s.id, s.title)}>
                      Delete
                    </button>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}
