'use client';
import { useState } from 'react';
import type { StoredEvent } from '~/lib/events';
import { clock } from '~/app/_components/time';
import { PanePlaceholder } from '~/app/_components/ide/pane-placeholder';

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

export function Timeline({ events }: { events: readonly StoredEvent[] }) {
  const [all, setAll] = useState(false);
  const shown = all || events.length <= WINDOW ? events : events.slice(-WINDOW);
  if (events.length === 0) return <PanePlaceholder testId="timeline-empty" title="No events yet" hint="Every event of the session log appears here as it is stored." />;
  return (
    <ol className="timeline" data-testid="timeline">
      {shown.length < events.length && (
        <li className="more">
          <button type="button" className="small" onClick={() => setAll(true)}>
            show {events.length - shown.length} earlier events
          </button>
        </li>
      )}
      {shown.map((e) => (
        <li key={e.seq} data-seq={e.seq} data-type={e.type}>
          <span className="seq mono">{e.seq}</span>
          <span className="type mono">{e.type}</span>
          <span className="time mono muted">{clock(e.processed_at)}</span>
          <span className="detail small">{detail(e)}</span>
        </li>
      ))}
    </ol>
  );
}
