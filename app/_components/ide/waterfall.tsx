'use client';
import { type CSSProperties, memo, useEffect, useMemo, useState } from 'react';
import type { StoredEvent } from '~/lib/events';
import {
  type ModelRow,
  type WaterfallRow,
  axisTicks,
  formatMs,
  formatTick,
  rowDuration,
  slowestRows,
  waterfallOrigin,
  waterfallRows,
} from '~/app/_components/ide/waterfall-rows';
import '~/app/_components/ide/ide.css';

/**
 * The log as a waterfall: model requests (waiting → streaming) and tool calls on one time axis.
 *
 * Bars are placed with CSS variables: `--s`/`--d` (ms) on each bar and `--k` (percent per ms) on
 * the list. When the axis grows (a span still running), only `--k` changes: finished rows are
 * memoised and do not re-render, so a log with thousands of rows stays cheap.
 */
export function Waterfall({ events, now }: { events: readonly StoredEvent[]; now?: number }) {
  const rows = useMemo(() => waterfallRows(events), [events]);
  const origin = useMemo(() => waterfallOrigin(events), [events]);
  const slow = useMemo(() => slowestRows(rows), [rows]);
  const open = rows.some((r) => r.end === null);
  const clock = useClock(now === undefined && open);
  const last = events[events.length - 1];
  const wall = now ?? clock ?? (last ? Date.parse(last.processed_at) : 0);
  const nowMs = origin === null ? 0 : wall - origin;

  let span = 0;
  for (const r of rows) span = Math.max(span, r.end ?? Math.max(nowMs, r.start));
  const ticks = axisTicks(span, 6);
  const axisEnd = Math.max(span, 1);
  // Labels sit right of their line; one too close to the end would be clipped, so it goes.
  const labelled = ticks.filter((t) => t === 0 || t <= axisEnd * 0.9);
  const scale = { '--k': `${100 / axisEnd}%` } as CSSProperties;

  if (rows.length === 0) {
    return (
      <div className="wf wf-empty" data-testid="waterfall">
        <p className="muted small">No model requests or tool calls yet.</p>
      </div>
    );
  }

  return (
    <div className="wf" data-testid="waterfall" style={scale}>
      <div className="wf-scroll">
        <div className="wf-axis" aria-hidden>
          <span className="wf-axis-label">{rows.length} spans</span>
          <div className="wf-track">
            {labelled.map((t) => (
              <span key={t} className="wf-tick" style={{ '--s': t } as CSSProperties}>
                {formatTick(t)}
              </span>
            ))}
          </div>
          <span className="wf-axis-label wf-axis-ms">took</span>
        </div>
        {/* Not the scroller itself, so the grid lines run the full height of the rows. */}
        <div className="wf-body">
          <div className="wf-grid" aria-hidden>
            {ticks.map((t) => (
              <span key={t} className="wf-gridline" style={{ '--s': t } as CSSProperties} />
            ))}
          </div>
          <ol className="wf-rows">
            {rows.map((r) => (
              <Row key={r.id} row={r} slow={slow.has(r.id)} nowMs={r.end === null ? nowMs : 0} />
            ))}
          </ol>
        </div>
      </div>
      <div className="wf-legend small muted" aria-hidden>
        <span><i className="wf-sw wf-sw-wait" /> waiting (ttft)</span>
        <span><i className="wf-sw wf-sw-stream" /> streaming</span>
        <span><i className="wf-sw wf-sw-tool" /> tool</span>
        <span><i className="wf-sw wf-sw-err" /> error</span>
        <span><i className="wf-sw wf-sw-open" /> running</span>
        <span><i className="wf-sw wf-sw-slow" /> slowest 10%</span>
      </div>
    </div>
  );
}

/**
 * A wall clock that ticks once a second, only while some span is still open. Null until mounted:
 * the server render and the first client render must agree, so they measure to the last event.
 */
function useClock(active: boolean): number | null {
  const [now, setNow] = useState<number | null>(null);
  useEffect(() => {
    if (!active) return;
    setNow(Date.now());
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, [active]);
  return now;
}

/** `nowMs` is 0 for finished rows, so they keep equal props (and skip rendering) as time passes. */
const Row = memo(RowView, (a, b) => a.slow === b.slow && a.nowMs === b.nowMs && sameRow(a.row, b.row));

/** Rows are rebuilt whenever the log grows; compare their fields, not their identity. */
function sameRow(a: WaterfallRow, b: WaterfallRow): boolean {
  const ka = Object.keys(a) as (keyof WaterfallRow)[];
  return ka.length === Object.keys(b).length && ka.every((k) => a[k] === b[k]);
}

function RowView({ row, slow, nowMs }: { row: WaterfallRow; slow: boolean; nowMs: number }) {
  const ms = rowDuration(row, nowMs);
  const running = row.end === null;
  const label = row.kind === 'model' ? (row.model ?? 'model request') : row.name;
  const sub = row.kind === 'model' ? 'model' : (row.hand ?? '');
  const title = describe(row, ms);
  const cls = ['wf-bar', `wf-${row.kind}`, running && 'wf-running', row.isError && 'wf-error', slow && 'wf-slow'].filter(Boolean).join(' ');
  return (
    <li className={`wf-row${row.isError ? ' wf-row-error' : ''}`} title={title} data-seq={row.seq}>
      <span className="wf-label">
        <span className="wf-name mono">{label}</span>
        {sub && <span className="wf-sub">{sub}</span>}
      </span>
      <div className="wf-track">
        <div
          className={cls}
          style={{ '--s': row.start, '--d': ms } as CSSProperties}
          data-testid="wf-bar"
          data-kind={row.kind}
          data-ms={Math.round(ms)}
          data-running={running || undefined}
          data-error={row.isError || undefined}
          data-slow={slow || undefined}
        >
          {row.kind === 'model' && !running && <ModelSegments row={row} ms={ms} />}
        </div>
      </div>
      <span className={`wf-ms mono${slow ? ' wf-ms-slow' : ''}${row.isError ? ' error' : ''}`}>{running ? `${formatMs(ms)}…` : formatMs(ms)}</span>
    </li>
  );
}

function ModelSegments({ row, ms }: { row: ModelRow; ms: number }) {
  if (row.ttftMs === null || ms <= 0) return null;
  const wait = Math.min(100, (row.ttftMs / ms) * 100);
  return <span className="wf-wait" style={{ width: `${wait}%` }} />;
}

function describe(row: WaterfallRow, ms: number): string {
  const at = `at +${formatMs(row.start)}`;
  const state = row.end === null ? 'running' : row.isError ? 'error' : 'ok';
  if (row.kind === 'tool') {
    return [`${row.name}${row.hand ? ` on ${row.hand}` : ''}`, `${Math.round(ms)} ms`, at, state].join(' · ');
  }
  const parts = [row.model ?? 'model request'];
  if (row.ttftMs !== null) parts.push(`ttft ${Math.round(row.ttftMs)} ms`, `streaming ${Math.round(Math.max(0, ms - row.ttftMs))} ms`);
  parts.push(`${Math.round(ms)} ms total`, at);
  if (row.usage) {
    const u = row.usage;
    parts.push(`in ${u.input_tokens} · out ${u.output_tokens} · cache read ${u.cache_read_input_tokens} · cache write ${u.cache_creation_input_tokens} tokens`);
  }
  if (row.stopReason) parts.push(`stop ${row.stopReason}`);
  parts.push(state);
  return parts.join(' · ');
}
