import type { ModelUsage, StoredEvent } from '~/lib/events';

/**
 * The session log as waterfall rows: one per model request and one per tool call, timed in ms
 * since the first event given. Pure, so it is tested without a DOM and memoised by the view.
 */
export type WaterfallRow = ModelRow | ToolRow;

interface RowBase {
  /** The id of the event that opened the span (`span.model_request_start` or `agent.tool_use`). */
  id: string;
  seq: number;
  /** ms since the first event. */
  start: number;
  /** ms since the first event; null while the span is still open. */
  end: number | null;
  isError: boolean;
}

export interface ModelRow extends RowBase {
  kind: 'model';
  model: string | null;
  /** Time to first token: the "waiting" segment. Null when unknown (unfinished, or not measured). */
  ttftMs: number | null;
  usage: ModelUsage | null;
  stopReason: string | null;
}

export interface ToolRow extends RowBase {
  kind: 'tool';
  name: string;
  /** The hand that ran it (an MCP tool names its server here). */
  hand: string | null;
}

const at = (e: StoredEvent): number => Date.parse(e.processed_at);

/** The epoch ms the rows are measured from, or null for an empty log. */
export function waterfallOrigin(events: readonly StoredEvent[]): number | null {
  const first = events[0];
  return first ? at(first) : null;
}

export function waterfallRows(events: readonly StoredEvent[]): WaterfallRow[] {
  const origin = waterfallOrigin(events);
  if (origin === null) return [];
  const rows: WaterfallRow[] = [];
  // Open spans by opening event id; an end only ever closes a span we have seen start.
  const models = new Map<string, ModelRow>();
  const tools = new Map<string, ToolRow>();
  for (const e of events) {
    const t = at(e) - origin;
    switch (e.type) {
      case 'span.model_request_start': {
        const row: ModelRow = { kind: 'model', id: e.id, seq: e.seq, start: t, end: null, isError: false, model: e.model ?? null, ttftMs: null, usage: null, stopReason: null };
        models.set(e.id, row);
        rows.push(row);
        break;
      }
      case 'span.model_request_end': {
        const row = models.get(e.model_request_start_id);
        if (!row || row.end !== null) break;
        // The measured duration is exact; the end event's own timestamp also includes the time
        // to store the turn, so it is only the fallback.
        row.end = e.duration_ms != null ? row.start + e.duration_ms : Math.max(row.start, t);
        row.ttftMs = e.ttft_ms ?? null;
        row.isError = e.is_error === true;
        row.usage = e.model_usage;
        row.stopReason = e.model_stop_reason ?? null;
        break;
      }
      case 'agent.tool_use':
      case 'agent.mcp_tool_use': {
        const hand = e.type === 'agent.tool_use' ? (e.hand ?? null) : e.mcp_server_name;
        const row: ToolRow = { kind: 'tool', id: e.id, seq: e.seq, start: t, end: null, isError: false, name: e.name, hand };
        tools.set(e.id, row);
        rows.push(row);
        break;
      }
      case 'agent.tool_result':
      case 'user.tool_result':
      case 'agent.mcp_tool_result': {
        const row = tools.get(e.type === 'agent.mcp_tool_result' ? e.mcp_tool_use_id : e.tool_use_id);
        if (!row || row.end !== null) break;
        row.end = Math.max(row.start, t);
        row.isError = e.is_error === true;
        // The result knows which hand really ran the call (the use may not have named one).
        if (e.type === 'agent.tool_result' && e.hand) row.hand = e.hand;
        break;
      }
      default:
        break;
    }
  }
  return rows;
}

/** A row's length in ms; an open span runs until `now` (ms since the origin). */
export function rowDuration(row: WaterfallRow, now: number): number {
  return Math.max(0, (row.end ?? Math.max(now, row.start)) - row.start);
}

/**
 * The ids of the slowest finished rows (the top `fraction`, at least one when there are ten or
 * more rows): the bars worth a second look. Open spans are left out: they are still growing.
 */
export function slowestRows(rows: readonly WaterfallRow[], fraction = 0.1): Set<string> {
  const finished = rows.filter((r) => r.end !== null);
  const count = Math.floor(finished.length * fraction);
  if (count === 0) return new Set();
  const sorted = [...finished].sort((a, b) => rowDuration(b, 0) - rowDuration(a, 0));
  const threshold = rowDuration(sorted[count - 1]!, 0);
  // Ties with the cut-off are highlighted too: equal bars should look equal.
  return new Set(finished.filter((r) => rowDuration(r, 0) >= threshold && threshold > 0).map((r) => r.id));
}

/** Tick steps people read easily: 1-2-5 under a second, then 1/2/5/10/15/30 s, then minutes. */
const STEPS = [
  1, 2, 5, 10, 20, 50, 100, 200, 500,
  1000, 2000, 5000, 10_000, 15_000, 30_000,
  60_000, 120_000, 300_000, 600_000, 900_000, 1_800_000, 3_600_000,
];

/** Round tick positions covering [0, span], about `target` of them. */
export function axisTicks(span: number, target = 6): number[] {
  if (!(span > 0)) return [0];
  const raw = span / Math.max(1, target);
  // Past the table: whole hours, 1, 2 or 5 × 10ⁿ of them.
  const step = STEPS.find((s) => s >= raw) ?? 3_600_000 * niceCeil(raw / 3_600_000);
  const ticks: number[] = [];
  for (let t = 0; t <= span; t += step) ticks.push(t);
  return ticks;
}

function niceCeil(x: number): number {
  const pow = 10 ** Math.floor(Math.log10(x));
  return [1, 2, 5, 10].map((m) => m * pow).find((v) => v >= x) ?? 10 * pow;
}

/** A short human duration: `840 ms`, `2.4 s`, `3m 05s`. */
export function formatMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
}

/** An axis label: round numbers only, so `0`, `500 ms`, `1.5 s`, `2m 30s`. */
export function formatTick(ms: number): string {
  if (ms === 0) return '0';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 120_000) return `${Number((ms / 1000).toFixed(2))} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}m${s % 60 ? ` ${String(s % 60).padStart(2, '0')}s` : ''}`;
}
