'use client';
import { useQuery } from '@tanstack/react-query';
import { useEffect } from 'react';
import { BrainBadge } from '~/app/_components/brain-badge';
import { Composer } from '~/app/_components/session-view/composer';
import { Conversation } from '~/app/_components/session-view/conversation';
import { awaitingAgent, conversation, currentStatus } from '~/app/_components/session-view/derive';
import { HandsPanel } from '~/app/_components/session-view/hands-panel';
import { Timeline } from '~/app/_components/session-view/timeline';
import { useSessionLog } from '~/app/_components/session-view/use-session-log';
import { mirror, mirrorSessions } from '~/lib/browser/mirror';
import { useTRPC } from '~/lib/browser/trpc';
import { useLiveQuery } from 'dexie-react-hooks';

export function SessionView({ sessionId }: { sessionId: string }) {
  const trpc = useTRPC();
  const session = useQuery(trpc.sessions.get.queryOptions({ id: sessionId }, { retry: false }));
  const mirrored = useLiveQuery(() => mirror().sessions.get(sessionId), [sessionId]);
  const { events, streaming, handProgress, connection, error } = useSessionLog(sessionId);

  useEffect(() => {
    if (session.data) void mirrorSessions([session.data]);
  }, [session.data]);

  const notFound = session.error?.data?.code === 'NOT_FOUND' || session.error?.data?.code === 'BAD_REQUEST';
  const log = events ?? [];
  const status = currentStatus(log);
  const busy = status === 'running' || status === 'rescheduling' || awaitingAgent(log) || Object.keys(streaming).length > 0;
  const title = session.data?.title ?? mirrored?.title ?? 'Session';

  if (notFound) {
    return (
      <main className="page">
        <h1>Session not found</h1>
        <p className="muted">There is no session {sessionId} on this server.</p>
      </main>
    );
  }

  return (
    <main className="session" data-testid="session-view" data-status={status}>
      <div className="session-head">
        <h1>{title}</h1>
        <span className={`status status-${status}`} data-testid="status">
          {status}
        </span>
        <span className={`conn conn-${connection}`} data-testid="connection">
          {connection}
        </span>
        <span className="mono muted small">{sessionId}</span>
      </div>
      <BrainBadge />
      {(connection === 'offline' || (session.isError && !notFound)) && (
        <p className="offline-banner" data-testid="offline-banner">
          Offline: showing this session as mirrored in your browser{error ? ` (${error})` : ''}.
        </p>
      )}
      <div className="session-body">
        <section className="chat">
          {events === null ? <p className="muted">Loading…</p> : <Conversation items={conversation(log)} streaming={streaming} />}
          <Composer sessionId={sessionId} busy={busy} disabled={connection === 'offline'} />
        </section>
        <aside className="side">
          <HandsPanel events={log} progress={handProgress} />
          <h2>Timeline</h2>
          <Timeline events={log} />
        </aside>
      </div>
    </main>
  );
}
