'use client';
import type { ThreadRow } from '~/app/_components/session-view/threads';

/**
 * A multiagent session's threads beside the chat: the coordinator's conversation, then each
 * child (agent, status, last activity); picking one shows its own conversation and tool calls.
 */
export function ThreadList({ threads, selected, onSelect }: { threads: readonly ThreadRow[]; selected: string | null; onSelect: (thread: string | null) => void }) {
  return (
    <nav className="thread-list" aria-label="Threads" data-testid="thread-list">
      <button type="button" aria-pressed={selected === null} data-testid="thread-primary" onClick={() => onSelect(null)}>
        coordinator
      </button>
      {threads.map((t) => (
        <button key={t.id} type="button" aria-pressed={selected === t.id} data-testid="thread-row" data-status={t.status} title={t.id} onClick={() => onSelect(t.id)}>
          {t.agentName} · <span className={`status status-${t.status}`}>{t.status.replace('_', ' ')}</span> · <time dateTime={t.lastActivity}>{new Date(t.lastActivity).toLocaleTimeString()}</time>
        </button>
      ))}
    </nav>
  );
}
