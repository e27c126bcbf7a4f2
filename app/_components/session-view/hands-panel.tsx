'use client';
import '~/app/_components/session-view/outage-note.css';
import { useEffect, useState } from 'react';
import type { StoredEvent } from '~/lib/events';
import { currentHand, handsInLog, type HandRecord } from '~/lib/hand-log';
import { groupHands } from '~/app/_components/session-view/hand-history';
import type { HandProgress } from '~/app/_components/session-view/use-session-log';

function age(since: string, now: number): string {
  const s = Math.max(0, Math.round((now - Date.parse(since)) / 1000));
  return s < 60 ? `${s}s` : s < 3600 ? `${Math.floor(s / 60)}m` : `${Math.floor(s / 3600)}h`;
}

/** A lost hand's reason can be a page of stderr: two lines until clicked, the whole text in its title. */
function Reason({ text }: { text: string }) {
  const [open, setOpen] = useState(false);
  return (
    <button type="button" className="small muted hand-reason" title={text} aria-expanded={open} data-testid="hand-reason" onClick={() => setOpen(!open)}>
      {/* Clamped on an inner span: a button's own box does not take line-clamp. */}
      <span className={open ? undefined : 'hand-reason-clamped'}>{text}</span>
    </button>
  );
}

function HandRow({ h, current, now }: { h: HandRecord; current: boolean; now: number }) {
  return (
    <li data-testid="hand" data-hand={h.id} data-status={h.status}>
      <span className="mono">{h.id}</span>
      <span className="muted small">{h.kind}</span>
      <span className={`hand-status hand-${h.status}`}>{h.status}</span>
      <span className="muted small">{age(h.since, now)}</span>
      {current && <span className="small">current</span>}
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
      {h.reason && <Reason text={h.reason} />}
    </li>
  );
}

/**
 * The session's hands (from the log) plus any being provisioned right now (live). Ended hands
 * (lost, released) fold into one line, so in a long session the file tree below stays in view.
 */
export function HandsPanel({ events, progress, stale = null }: { events: readonly StoredEvent[]; progress: HandProgress; stale?: 'server' | 'database' | null }) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 5_000);
    return () => clearInterval(t);
  }, []);
  const hands = handsInLog(events);
  const current = currentHand(hands);
  const { live, history, summary } = groupHands(hands);
  const known = new Set(hands.map((h) => h.id));
  const pending = Object.entries(progress).filter(([id, p]) => !known.has(id) && p.phase !== 'ready');

  return (
    <div className="hands" data-testid="hands">
      <h2>Hands</h2>
      {hands.length === 0 && pending.length === 0 && <p className="muted small">None yet: the first tool call provisions one.</p>}
      {stale !== null && hands.length > 0 && (
        // The statuses are the log's: while it cannot be read, a hand may have changed unseen.
        <p className="small outage-note" data-testid="hands-stale">
          As last recorded: {stale === 'server' ? 'the server cannot be reached' : 'the database is unreachable'}, so a change since is not shown yet.
        </p>
      )}
      <ul>
        {live.map((h) => (
          <HandRow key={h.id} h={h} current={h === current} now={now} />
        ))}
        {pending.map(([id, p]) => (
          <li key={id} data-testid="hand" data-hand={id} data-status={p.phase}>
            <span className="mono">{id}</span>
            <span className="muted small">{p.kind}</span>
            <span className={`hand-status hand-${p.phase}`}>{p.phase === 'starting' ? 'starting…' : p.phase}</span>
            {p.detail && <Reason text={p.detail} />}
          </li>
        ))}
      </ul>
      {history.length > 0 && (
        // <details> keeps the rows in the DOM while closed: their state stays queryable.
        <details className="hands-history" data-testid="hands-history">
          <summary className="small muted" data-testid="hands-history-summary">
            {summary}
          </summary>
          <ul>
            {history.map((h) => (
              <HandRow key={h.id} h={h} current={false} now={now} />
            ))}
          </ul>
        </details>
      )}
    </div>
  );
}
