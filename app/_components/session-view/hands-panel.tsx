'use client';
import { useEffect, useState } from 'react';
import type { StoredEvent } from '~/lib/events';
import { currentHand, handsInLog } from '~/lib/hand-log';
import type { HandProgress } from '~/app/_components/session-view/use-session-log';

function age(since: string, now: number): string {
  const s = Math.max(0, Math.round((now - Date.parse(since)) / 1000));
  return s < 60 ? `${s}s` : s < 3600 ? `${Math.floor(s / 60)}m` : `${Math.floor(s / 3600)}h`;
}

/** The session's hands (from the log) plus any being provisioned right now (live). */
export function HandsPanel({ events, progress }: { events: readonly StoredEvent[]; progress: HandProgress }) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 5_000);
    return () => clearInterval(t);
  }, []);
  const hands = handsInLog(events);
  const current = currentHand(hands);
  const known = new Set(hands.map((h) => h.id));
  const pending = Object.entries(progress).filter(([id, p]) => !known.has(id) && p.phase !== 'ready');

  return (
    <div className="hands" data-testid="hands">
      <h2>Hands</h2>
      {hands.length === 0 && pending.length === 0 && <p className="muted small">None yet: the first tool call provisions one.</p>}
      <ul>
        {hands.map((h) => (
          <li key={h.id} data-testid="hand" data-hand={h.id} data-status={h.status}>
            <span className="mono">{h.id}</span>
            <span className="muted small">{h.kind}</span>
            <span className={`hand-status hand-${h.status}`}>{h.status}</span>
            <span className="muted small">{age(h.since, now)}</span>
            {h === current && <span className="small">current</span>}
            {h.reattached !== undefined && h.status === 'ready' && (
              <span className="small muted" title="a harness that took this session over connected to it again">
                re-attached{h.reattached > 1 ? ` ×${h.reattached}` : ''}
              </span>
            )}
            {h.suspended && h.status === 'ready' && (
              <span className="small muted" data-testid="hand-suspended" title="its process is stopped to free the machine; the next call resumes it on the same files">
                suspended
              </span>
            )}
            {h.reason && <div className="small muted hand-reason">{h.reason}</div>}
          </li>
        ))}
        {pending.map(([id, p]) => (
          <li key={id} data-testid="hand" data-hand={id} data-status={p.phase}>
            <span className="mono">{id}</span>
            <span className="muted small">{p.kind}</span>
            <span className={`hand-status hand-${p.phase}`}>{p.phase === 'starting' ? 'starting…' : p.phase}</span>
            {p.detail && <div className="small muted hand-reason">{p.detail}</div>}
          </li>
        ))}
      </ul>
    </div>
  );
}
