import { type ContextPolicy, estimateTokens } from '~/lib/context-policy';
import type { StoredEvent } from '~/lib/events';

/** What `buildContext` reads under a context policy: pure, from the log alone. */
export interface ShapedHistory {
  /** The events the request is built from, in log order. */
  events: readonly StoredEvent[];
  /** A note for the model (the window's marker, a compaction's summary): after the event with this seq, or first (null). */
  note: { afterSeq: number | null; text: string } | null;
  /** Tool results shown as a pointer to their seq instead of their output (by event id). */
  cleared: ReadonlySet<string>;
  /** The window left turns out: the seq of the first turn shown (recorded in the request's span start). */
  windowFrom?: number;
}

const RESULT_TYPES = new Set(['agent.tool_result', 'user.tool_result', 'user.custom_tool_result', 'agent.mcp_tool_result']);

export const RECALL_HINT = 'the log keeps every event: the session_events tool reads any of them';

/** What a block costs besides its content in a request (its type, ids, the message around it), in tokens. */
const BLOCK_OVERHEAD_TOKENS = 25;

/** Stored events never change: each is measured once (the window measures every event on every request). */
const measured = new WeakMap<StoredEvent, number>();

/** What an event adds to a request, in estimated tokens: its content, input or summary, and the block around it. */
export function eventTokens(e: StoredEvent): number {
  const known = measured.get(e);
  if (known !== undefined) return known;
  const x = e as { content?: unknown; input?: unknown; summary?: unknown };
  const body = x.content ?? x.input ?? x.summary;
  const n = body === undefined ? 0 : BLOCK_OVERHEAD_TOKENS + estimateTokens(typeof body === 'string' ? body : JSON.stringify(body));
  measured.set(e, n);
  return n;
}

/**
 * Applies a context policy to a log. `fixedTokens` is what the request costs besides its history
 * (system prompt and tools): the window fits the rest into its budget. `tokenScale`: real tokens
 * per estimated one in this session.
 */
export function shapeHistory(events: readonly StoredEvent[], policy: ContextPolicy, fixedTokens = 0, tokenScale = 1): ShapedHistory {
  switch (policy.type) {
    case 'full':
      return { events, note: null, cleared: new Set() };
    case 'clear_old_tool_results':
      return clearOldResults(events, policy.keep_recent, policy.clear_batch);
    case 'window':
      // The budget is in real tokens; the estimates are scaled to them.
      return windowed(events, policy.max_input_tokens / tokenScale - fixedTokens);
    case 'compaction':
      return compacted(events);
  }
}

/** All but the newest `keep` results cleared, in whole batches: the request's prefix changes once per batch. */
function clearOldResults(events: readonly StoredEvent[], keep: number, batch: number): ShapedHistory {
  const results = events.filter((e) => RESULT_TYPES.has(e.type));
  const count = Math.floor(Math.max(0, results.length - keep) / batch) * batch;
  return { events, note: null, cleared: new Set(results.slice(0, count).map((e) => e.id)) };
}

/**
 * The task (everything before the first model request) and the newest model turns (each from its
 * `span.model_request_start` to the next: its output, its calls' results, what the user said
 * meanwhile) within `budget` tokens. When they overflow it, the window's start moves forward until
 * they fill at most half of it: a deterministic step, so between steps every request shares its
 * predecessor's prefix. Each request records where its window began (`window_from_seq` on its
 * span start) and the next one starts from there: the window never moves back (not even when the
 * budget grows with a recalibrated estimate, which would only cost the cache), and a harness
 * reads the log from there on. `events` may leave out what lies between the task and that seq.
 */
function windowed(events: readonly StoredEvent[], budget: number): ShapedHistory {
  const whole: ShapedHistory = { events, note: null, cleared: new Set() };
  const firstIdx = events.findIndex((e) => e.type === 'span.model_request_start');
  if (firstIdx < 0) return whole;
  const head = events.slice(0, firstIdx);
  // Seqs are contiguous from 1: the task is seqs 1 … firstSpanSeq - 1.
  const firstSpanSeq = (head.at(-1)?.seq ?? 0) + 1;
  let base = firstSpanSeq;
  for (let i = events.length - 1; i >= firstIdx; i--) {
    const e = events[i]!;
    if (e.type !== 'span.model_request_start') continue;
    base = e.window_from_seq ?? firstSpanSeq;
    break;
  }
  const starts: number[] = [];
  for (let i = seqIndex(events, base, firstIdx); i < events.length; i++) if (events[i]!.type === 'span.model_request_start') starts.push(i);
  if (starts.length === 0 || (base === firstSpanSeq && starts.length < 2)) return whole;
  const headTokens = head.reduce((n, e) => n + eventTokens(e), 0);
  const room = Math.max(0, budget - headTokens);
  const units = starts.map((s, k) => events.slice(s, starts[k + 1] ?? events.length));
  const cost = units.map((u) => u.reduce((n, e) => n + eventTokens(e), 0));
  let first = 0;
  let sum = 0;
  for (let i = 0; i < units.length; i++) {
    sum += cost[i]!;
    if (sum <= room) continue;
    // Overflow: drop the oldest turns until the kept ones fill at most half the room (never the newest).
    while (first < i && sum > room / 2) sum -= cost[first++]!;
  }
  const from = units[first]![0]!.seq;
  if (from === firstSpanSeq) return whole;
  const lastHead = head.at(-1);
  return {
    events: [...head, ...units.slice(first).flat()],
    note: {
      afterSeq: lastHead ? lastHead.seq : null,
      text: `[Events ${firstSpanSeq}–${from - 1} of this session are left out of this context to keep it within its budget; ${RECALL_HINT}.]`,
    },
    cleared: new Set(),
    windowFrom: from,
  };
}

/** The index of the first event at or after `seq` (events in seq order, maybe with gaps), from `lo` on. */
function seqIndex(events: readonly StoredEvent[], seq: number, lo: number): number {
  let hi = events.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (events[mid]!.seq < seq) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The newest compaction's summary first, then what came after the range it covers. */
function compacted(events: readonly StoredEvent[]): ShapedHistory {
  let last: Extract<StoredEvent, { type: 'agent.thread_context_compacted' }> | undefined;
  for (const e of events) if (e.type === 'agent.thread_context_compacted' && typeof e.summary === 'string') last = e;
  if (!last?.summary || last.to_seq === undefined) return { events, note: null, cleared: new Set() };
  const to = last.to_seq;
  return {
    events: events.filter((e) => e.seq > to && e.type !== 'agent.thread_context_compacted'),
    note: { afterSeq: null, text: `[Summary of this session's events ${last.from_seq ?? 1}–${to} (${RECALL_HINT}):]\n${last.summary}` },
    cleared: new Set(),
  };
}
