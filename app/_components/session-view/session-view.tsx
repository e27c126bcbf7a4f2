'use client';
import { useQuery } from '@tanstack/react-query';
import { useEffect, useMemo, useRef, useState } from 'react';
import type { StickToBottomContext } from 'use-stick-to-bottom';
import { BrainBadge } from '~/app/_components/brain-badge';
import { Composer } from '~/app/_components/session-view/composer';
import { Conversation } from '~/app/_components/session-view/conversation';
import { awaitingAgent, awaitsConfirmation, conversation, currentStatus } from '~/app/_components/session-view/derive';
import { StoreOutageBanner } from '~/app/_components/session-view/store-outage-banner';
import { Timeline } from '~/app/_components/session-view/timeline';
import dynamic from 'next/dynamic';
import { useBrowserHand } from '~/lib/browser/use-browser-hand';
import { useSessionLog } from '~/app/_components/session-view/use-session-log';
import { mirror, mirrorSessions } from '~/lib/browser/mirror';
import { accessRefused, storeUnavailable, useTRPC } from '~/lib/browser/trpc';
import { ShareLinks } from '~/app/_components/share-links/share-links';
import { OutcomeForm } from '~/app/_components/session-outcome/outcome-form';
import { SessionTitle } from '~/app/_components/session-title/session-title';
import { useLiveQuery } from 'dexie-react-hooks';
import { useMediaQuery } from '~/lib/browser/use-media-query';
import { Panel, PersistedGroup, ResizeHandle } from '~/app/_components/resizable/resizable';
import { SessionUsage } from '~/app/_components/session-usage/session-usage';
import { SessionRepositories } from '~/app/_components/session-repositories/session-repositories';
import { SessionFiles } from '~/app/_components/session-files/session-files';
import { ThreadList } from '~/app/_components/session-view/thread-list';
import { eventsOfThread, threadsOf } from '~/app/_components/session-view/threads';

// The IDE (CodeMirror, xterm) and the waterfall load after the log has painted.
const Workbench = dynamic(() => import('~/app/_components/session-view/workbench').then((m) => m.Workbench), {
  ssr: false,
  loading: () => <div className="workbench" />,
});
const Waterfall = dynamic(() => import('~/app/_components/ide/waterfall').then((m) => m.Waterfall), { ssr: false });

/** Below this width the panes are tabs: side by side, the editor would be a sliver. */
const NARROW = '(max-width: 900px)';
type NarrowTab = 'chat' | 'files' | 'editor' | 'terminal' | 'log';
const NARROW_TABS: readonly (readonly [NarrowTab, string])[] = [
  ['chat', 'Chat'],
  ['files', 'Files'],
  ['editor', 'Editor'],
  ['terminal', 'Terminal'],
  ['log', 'Log'],
];

/**
 * The session IDE. With `share` it is a share link's read-only view (the page's tRPC client
 * carries the link's token): the same log, chat, files, terminal and timeline, and nothing that
 * writes (see read-only.ts); when the link is revoked or expires the page says so and stops.
 */
export function SessionView({ sessionId, share }: { sessionId: string; share?: { hideFiles: boolean } }) {
  const trpc = useTRPC();
  const readOnly = share !== undefined;
  // A 503 (database unreachable) is retried until it answers; anything else is final.
  const retry = { retry: (_count: number, err: unknown) => storeUnavailable(err), retryDelay: (n: number) => Math.min(5_000, 500 * 2 ** n) };
  const owned = useQuery({ ...trpc.sessions.get.queryOptions({ id: sessionId }, retry), enabled: !readOnly });
  const shared = useQuery({ ...trpc.sessions.shared.queryOptions({ id: sessionId }, retry), enabled: readOnly });
  const session = readOnly ? shared : owned;
  const mirrored = useLiveQuery(() => mirror().sessions.get(sessionId), [sessionId]);
  // The offline demo brain answers whatever the agent names: then its banner is what is true.
  const brain = useQuery({ ...trpc.sessions.brain.queryOptions(undefined, { staleTime: Infinity }), enabled: !readOnly });
  const { events, streaming, handProgress, connection, error, storeOutage, refused } = useSessionLog(sessionId);
  const linkEnded = readOnly && (refused !== null || accessRefused(session.error));
  // Whether this tab serves as the session's browser hand; remembered so a reload re-attaches.
  const [browserEnabled, setBrowserEnabled] = useState(false);
  const [view, setView] = useState<'timeline' | 'waterfall'>('timeline');
  // Phone width: one pane at a time behind tabs, so the editor gets the whole width.
  const narrow = useMediaQuery(NARROW);
  const [tab, setTab] = useState<NarrowTab>('chat');
  const follow = useRef<StickToBottomContext>(null);
  useEffect(() => {
    setBrowserEnabled(localStorage.getItem(`paddock.browserHand.${sessionId}`) === '1');
  }, [sessionId]);
  const toggleBrowser = () => {
    const next = !browserEnabled;
    localStorage.setItem(`paddock.browserHand.${sessionId}`, next ? '1' : '0');
    setBrowserEnabled(next);
  };
  const log = useMemo(() => events ?? [], [events]);
  const status = currentStatus(log);
  // An ended or archived session runs nothing more: this tab is not offered as its hand.
  const ended = status === 'terminated' || Boolean(owned.data?.archived_at);
  const browser = useBrowserHand(sessionId, events, !readOnly && browserEnabled && !ended, connection !== 'offline');
  // Marks the first paint of the log (from the mirror) for the reload benchmark.
  const painted = events !== null;
  useEffect(() => {
    if (painted) requestAnimationFrame(() => performance.mark('paddock:log-painted'));
  }, [painted]);

  useEffect(() => {
    if (session.data) void mirrorSessions([session.data]);
  }, [session.data]);

  const notFound = !readOnly && (session.error?.data?.code === 'NOT_FOUND' || session.error?.data?.code === 'BAD_REQUEST');
  const outage = storeOutage ?? (storeUnavailable(session.failureReason) ? (session.failureReason?.message ?? null) : null);
  // Multiagent: the conversation of the thread picked in the list beside the chat (null: the coordinator's).
  const [thread, setThread] = useState<string | null>(null);
  const threads = useMemo(() => threadsOf(log), [log]);
  const items = useMemo(() => conversation(eventsOfThread(log, thread), { primary: thread === null }), [log, thread]);
  const asking = items.filter((i) => i.kind === 'tool' && awaitsConfirmation(i.call)).length;
  const busy = status === 'running' || status === 'rescheduling' || awaitingAgent(log) || Object.keys(streaming).length > 0;
  const title = session.data?.title ?? mirrored?.title ?? 'Session';
  // The token line folds into the line above it (the demo notice, or the agent's).
  const usage = <SessionUsage events={log} model={(readOnly ? shared.data?.agent?.model.id : owned.data?.agent?.model.id) ?? null} budget={readOnly ? null : (owned.data?.budget ?? null)} />;

  const workbench = (pane: 'files' | 'editor' | 'terminal' | null) => (
    <Workbench
      sessionId={sessionId}
      events={log}
      progress={handProgress}
      browser={browser}
      browserEnabled={browserEnabled}
      onToggleBrowser={toggleBrowser}
      tabHandOffered={!ended}
      outage={connection === 'offline' ? 'server' : outage !== null ? 'database' : null}
      pane={pane}
      onFileOpened={() => setTab('editor')}
      hideFiles={share?.hideFiles ?? false}
    />
  );
  const bottom = (
    <div className="bottom">
      <div className="tabs" role="tablist">
        <button type="button" role="tab" aria-selected={view === 'timeline'} data-testid="tab-timeline" onClick={() => setView('timeline')}>
          Timeline
        </button>
        <button type="button" role="tab" aria-selected={view === 'waterfall'} data-testid="tab-waterfall" onClick={() => setView('waterfall')}>
          Waterfall
        </button>
      </div>
      <div className="bottom-body">{view === 'timeline' ? <Timeline events={log} /> : <Waterfall events={log} />}</div>
    </div>
  );
  const chat = (
    <section className="chat">
      {threads.length > 0 && <ThreadList threads={threads} selected={thread} onSelect={setThread} />}
      {events === null ? <p className="muted">Loading…</p> : <Conversation sessionId={sessionId} items={items} streaming={streaming} followRef={follow} />}
      {/* Whoever sends wants to see the answer, even if they had scrolled up. */}
      {!readOnly && thread === null && <Composer sessionId={sessionId} busy={busy} disabled={connection === 'offline'} ended={status === 'terminated'} onSend={() => void follow.current?.scrollToBottom()} />}
    </section>
  );

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
        <SessionTitle sessionId={sessionId} title={title} editable={!readOnly && owned.data !== undefined && !owned.data.archived_at} />
        {/* Idle, yet not done: a call waits for the owner's verdict. */}
        {status === 'idle' && asking > 0 ? (
          <span className="status status-needs_approval" data-testid="status">
            needs approval
          </span>
        ) : (
          <span className={`status status-${status}`} data-testid="status">
            {status}
          </span>
        )}
        <span className={`conn conn-${connection}`} data-testid="connection">
          {connection}
        </span>
        <span className="mono muted small">{sessionId}</span>
        {readOnly ? (
          <span className="small muted" data-testid="share-badge">
            read-only link
          </span>
        ) : (
          <>
            <ShareLinks sessionId={sessionId} />
            <OutcomeForm sessionId={sessionId} ended={ended} onDefined={() => void follow.current?.scrollToBottom()} />
          </>
        )}
      </div>
      {readOnly ? (
        shared.data?.brain.isDemo ? (
          <div className="demo-line" data-testid="demo-banner">
            <strong className="demo-label">Demo brain, not Claude</strong>
            <span className="demo-why">· a deterministic stand-in that shows how Paddock works</span>
            <span className="demo-extra">{usage}</span>
          </div>
        ) : shared.data?.agent ? (
          <span className="brain" data-testid="session-agent">
            agent: {shared.data.agent.name} v{shared.data.agent.version} · model: {shared.data.agent.model.id}
            <span className="usage-fold">{usage}</span>
          </span>
        ) : (
          usage
        )
      ) : owned.data?.agent && brain.data?.isDemo === false ? (
        // The session's own agent (the version it was made with) says which model answers; the token line folds into it.
        <span className="brain" data-testid="session-agent">
          agent: {owned.data.agent.name} v{owned.data.agent.version} · model: {owned.data.agent.model.id}
          {owned.data.environment_id ? ` · environment: ${owned.data.environment_id}` : ''}
          <span className="usage-fold">{usage}</span>
        </span>
      ) : brain.data?.isDemo ? (
        <BrainBadge extra={usage} />
      ) : (
        <>
          <BrainBadge />
          {usage}
        </>
      )}
      <SessionRepositories repositories={(owned.data?.resources ?? []).filter((r) => r.type === 'github_repository')} />
      {!readOnly && owned.data && <SessionFiles sessionId={sessionId} ended={ended} />}
      {asking > 0 && !readOnly && (
        // On a phone the chat may be another tab: say so at the top, and take the reader there.
        <button
          type="button"
          className="approval-banner"
          data-testid="approval-banner"
          onClick={() => {
            setTab('chat');
            requestAnimationFrame(() => document.querySelector('[data-testid=tool-confirm]')?.scrollIntoView({ block: 'center' }));
          }}
        >
          {asking === 1 ? 'A tool call waits for your approval' : `${asking} tool calls wait for your approval`} ↓
        </button>
      )}
      {outage !== null && connection !== 'offline' && <StoreOutageBanner detail={outage} />}
      {linkEnded && (
        <p className="offline-banner" data-testid="share-ended" role="status">
          This share link was revoked or has expired: the page no longer follows the session. What it showed stays below.
        </p>
      )}
      {!linkEnded && (connection === 'offline' || (session.isError && !notFound)) && (
        <p className="offline-banner" data-testid="offline-banner" role="status" title={error ?? undefined}>
          The Paddock server cannot be reached: showing the copy of this session saved in your browser. Reconnecting by itself.
        </p>
      )}
      {narrow === null ? (
        // Server render and hydration: the width (and the saved pane sizes) are the browser's.
        <div className="session-body" />
      ) : narrow ? (
        <>
          <div className="tabs session-tabs" role="tablist" aria-label="Session panes" data-testid="session-tabs">
            {NARROW_TABS.map(([id, label]) => (
              <button key={id} type="button" role="tab" aria-selected={tab === id} data-testid={`session-tab-${id}`} onClick={() => setTab(id)}>
                {label}
              </button>
            ))}
          </div>
          <div className="session-narrow">
            <div className="pane chat-pane" hidden={tab !== 'chat'}>
              {chat}
            </div>
            <div className="pane" hidden={tab !== 'files' && tab !== 'editor' && tab !== 'terminal'}>
              {workbench(tab === 'files' || tab === 'terminal' ? tab : 'editor')}
            </div>
            <div className="pane" hidden={tab !== 'log'}>
              {bottom}
            </div>
          </div>
        </>
      ) : (
        <PersistedGroup id="layout-session" orientation="horizontal" className="session-body">
          <Panel id="pane-chat" defaultSize="40%" minSize="300px" className="pane chat-pane">
            {chat}
          </Panel>
          <ResizeHandle id="resize-chat" />
          <Panel id="pane-ide" defaultSize="60%" minSize="360px" className="pane">
            <PersistedGroup id="layout-ide" orientation="vertical" className="ide">
              <Panel id="pane-workbench" minSize="200px" className="pane">
                {workbench(null)}
              </Panel>
              <ResizeHandle id="resize-log" />
              {/* Tall enough to read ten rows of the timeline as it opens. */}
              <Panel id="pane-log" defaultSize="340px" minSize="80px" className="pane">
                {bottom}
              </Panel>
            </PersistedGroup>
          </Panel>
        </PersistedGroup>
      )}
    </main>
  );
}
