'use client';
import { useMemo, useState } from 'react';
import { StickToBottom } from 'use-stick-to-bottom';
import type { StoredEvent } from '~/lib/events';
import { clock } from '~/app/_components/time';
import { PanePlaceholder } from '~/app/_components/ide/pane-placeholder';
import { TIMELINE_FILTERS, type TimelineFilter, showsUnder } from '~/app/_components/session-view/timeline-filter';
import { FollowPaneResize, JumpToLatest } from '~/app/_components/session-view/follow-bottom';
import '~/app/_components/session-view/conversation.css';

const SUSPEND_REASONS = { idle: 'idle', cap: 'too many live hands', shutdown: 'the server stopped' } as const;

function detail(e: StoredEvent): string {
  switch (e.type) {
    case 'span.model_request_end': {
      const u = e.model_usage;
      const parts = [`in ${u.input_tokens}`, `out ${u.output_tokens}`];
      if (u.cache_read_input_tokens) parts.push(`cache read ${u.cache_read_input_tokens}`);
      if (u.cache_creation_input_tokens) parts.push(`cache write ${u.cache_creation_input_tokens}`);
      if (e.ttft_ms != null) parts.push(`ttft ${Math.round(e.ttft_ms)} ms`);
      if (e.duration_ms != null) parts.push(`${e.duration_ms} ms`);
      if (e.is_error) parts.push('error');
      return parts.join(' · ');
    }
    case 'span.model_request_start':
      return e.model ?? '';
    case 'agent.tool_use':
      return e.name;
    case 'agent.tool_result':
      return e.is_error ? 'error' : 'ok';
    case 'agent.custom_tool_use':
      return `${e.name} (the client answers)`;
    case 'user.tool_confirmation':
      return e.result === 'allow' ? 'allowed' : `denied${e.deny_message ? `: ${e.deny_message}` : ''}`;
    case 'session.status_idle':
      return e.stop_reason.type;
    case 'session.error':
      return e.error.type;
    case 'hand.provisioned':
      return `${e.hand} (${e.kind})${e.provision_ms !== undefined ? ` in ${e.provision_ms} ms` : ''}${e.transferred_from ? ` from ${e.transferred_from.session_id}` : ''}`;
    case 'hand.released':
      return e.hand;
    case 'hand.lost':
      return `${e.hand}: ${e.reason}`;
    case 'hand.suspended':
      return `${e.hand}: suspended (${SUSPEND_REASONS[e.reason]}); its files stay`;
    case 'hand.resumed':
      return `${e.hand}: resumed${e.resume_ms !== undefined ? ` in ${e.resume_ms} ms` : ''}`;
    case 'hand.repository_cloned':
      return `${e.hand}: ${e.repository_url} cloned at ${e.mount_path}${e.clone_ms !== undefined ? ` in ${e.clone_ms} ms` : ''}`;
    case 'hand.reattached':
      return `${e.hand}: re-attached after a server restart${e.reattach_ms !== undefined ? ` in ${e.reattach_ms} ms` : ''}`;
    default:
      return '';
  }
}

/** Rows rendered at first: a 10k-event log stays instant; the rest is one click away. */
const WINDOW = 150;


/**
 * The session log, one row per event. It follows new events while the reader is at the bottom
 * (as the chat does: use-stick-to-bottom) and stays put once they scroll up; a filter narrows it
 * to a group of event types.
 */
export function Timeline({ events }: { events: readonly StoredEvent[] }) {
  const [all, setAll] = useState(false);
  const [filter, setFilter] = useState<TimelineFilter>('all');
  const matching = useMemo(() => (filter === 'all' ? events : events.filter((e) => showsUnder(filter, e.type))), [events, filter]);
  const shown = all || matching.length <= WINDOW ? matching : matching.slice(-WINDOW);
  if (events.length === 0) return <PanePlaceholder testId="timeline-empty" title="No events yet" hint="Every event of the session log appears here as it is stored." />;
  return (
    <div className="timeline-pane">
      <div className="timeline-bar">
        <select aria-label="Show events of type" value={filter} onChange={(e) => setFilter(e.target.value as TimelineFilter)} data-testid="timeline-filter">
          {TIMELINE_FILTERS.map(([f, label]) => (
            <option key={f} value={f}>
              {label}
            </option>
          ))}
        </select>
        {filter !== 'all' && (
          <span className="muted small" data-testid="timeline-count">
            {matching.length} of {events.length}
          </span>
        )}
      </div>
      <StickToBottom className="timeline-frame" initial="instant" resize="instant">
        <StickToBottom.Content scrollClassName="timeline-scroll">
          {shown.length < matching.length && (
            <button type="button" className="timeline-more small" data-testid="timeline-more" onClick={() => setAll(true)}>
              show {matching.length - shown.length} earlier events
            </button>
          )}
          <ol className="timeline" data-testid="timeline">
            {shown.map((e) => {
              const d = detail(e);
              return (
                <li key={e.seq} data-seq={e.seq} data-type={e.type} title={d || undefined}>
                  <span className="seq mono">{e.seq}</span>
                  <span className="type mono">{e.type}</span>
                  <span className="detail small">{d}</span>
                  <span className="time mono muted">{clock(e.processed_at)}</span>
                </li>
              );
            })}
          </ol>
        </StickToBottom.Content>
        <JumpToLatest label="Latest ↓" testId="timeline-jump-latest" />
        <FollowPaneResize />
      </StickToBottom>
    </div>
  );
}
