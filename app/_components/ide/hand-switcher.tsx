'use client';
import '~/app/_components/ide/ide.css';

export interface HandOption {
  id: string;
  kind: string;
  status: string;
}

/** Beyond this many hands a segmented control gets too wide: a select takes over. */
const MAX_SEGMENTS = 4;

/** Picks which hand the IDE shows (files, terminal). Presentational: the caller owns the choice. */
export function HandSwitcher({ hands, selected, onSelect }: { hands: readonly HandOption[]; selected: string | null; onSelect: (id: string) => void }) {
  if (hands.length === 0) {
    return (
      <div className="hs hs-empty" data-testid="hand-switcher">
        <span className="muted small">No hands yet</span>
      </div>
    );
  }

  if (hands.length > MAX_SEGMENTS) {
    return (
      <div className="hs" data-testid="hand-switcher">
        <select className="hs-select mono" aria-label="Hand" value={selected ?? ''} onChange={(e) => onSelect(e.target.value)}>
          {selected === null && (
            <option value="" disabled>
              Choose a hand…
            </option>
          )}
          {hands.map((h) => (
            <option key={h.id} value={h.id} data-testid="hand-option" data-hand={h.id} data-status={h.status}>
              {h.id} · {h.kind} · {h.status}
            </option>
          ))}
        </select>
      </div>
    );
  }

  return (
    <div className="hs hs-segments" data-testid="hand-switcher" role="group" aria-label="Hand">
      {hands.map((h) => {
        const on = h.id === selected;
        return (
          <button
            key={h.id}
            type="button"
            aria-pressed={on}
            className={`hs-seg${on ? ' hs-on' : ''}`}
            title={`${h.id} (${h.kind}): ${h.status}`}
            data-testid="hand-option"
            data-hand={h.id}
            data-status={h.status}
            onClick={() => onSelect(h.id)}
          >
            <span className={`hs-dot hs-${statusClass(h.status)}`} aria-hidden />
            <span className="mono">{h.id}</span>
            {!h.id.startsWith(h.kind) && <span className="hs-kind">{h.kind}</span>}
          </button>
        );
      })}
    </div>
  );
}

/** Statuses come from the log (ready/released/lost) or from live progress (starting/failed). */
function statusClass(status: string): string {
  switch (status) {
    case 'ready':
    case 'running':
      return 'ok';
    case 'starting':
      return 'warn';
    case 'lost':
    case 'failed':
      return 'err';
    default:
      return 'off';
  }
}
