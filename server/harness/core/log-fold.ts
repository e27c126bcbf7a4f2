import type { ContextPolicy } from '~/lib/context-policy';
import type { StoredEvent } from '~/lib/events';
import { ScaleFold, type ScaleFoldSnapshot } from '~/server/harness/core/compaction';
import { DecideFold, type DecideFoldSnapshot, type LogState } from '~/server/harness/core/decide';

/**
 * What the harness knows of a session's log, folded one event at a time and stored as a
 * checkpoint: what `decide()` needs, the token calibration, and where the parts a request may
 * show begin. A wake restores it and reads only what follows it and those parts (log-view.ts).
 */

/** Bumped whenever what a fold keeps, or how it folds, changes: a checkpoint of another version is ignored (the log is then read whole once). */
export const FOLD_VERSION = 1;

/** Where the parts of the log a request may show begin. */
export interface Anchors {
  /** The first model request's seq: the task is everything before it. */
  firstSpanSeq: number | null;
  /** Where the newest request's window began (its `window_from_seq`); null while no window left anything out. */
  windowFrom: number | null;
  /** The newest compaction with a summary: its own seq and the last seq it stands for. */
  compaction: { seq: number; to: number } | null;
  /** The session's MCP listing (the newest `mcp.tools_listed`). */
  mcpListingSeq: number | null;
  /** The newest `session.updated` that changed the agent (its tools or MCP servers): a listing older than it is stale. */
  agentUpdatedSeq: number | null;
}

export interface LogFoldSnapshot {
  v: number;
  seq: number;
  decide: DecideFoldSnapshot;
  scale: ScaleFoldSnapshot;
  anchors: Anchors;
}

export class LogFold {
  /** The last seq folded in (of the whole log: a thread's fold advances over other threads' events too). */
  seq = 0;
  /** The thread whose events are folded: null, the primary (events without `session_thread_id`). */
  thread: string | null = null;
  decide = new DecideFold();
  scale = new ScaleFold();
  anchors: Anchors = { firstSpanSeq: null, windowFrom: null, compaction: null, mcpListingSeq: null, agentUpdatedSeq: null };

  /** A stored checkpoint's fold; null when it is of another version or not one at all. */
  static restore(body: string): LogFold | null {
    let s: Partial<LogFoldSnapshot>;
    try {
      s = JSON.parse(body) as Partial<LogFoldSnapshot>;
    } catch {
      return null;
    }
    if (s.v !== FOLD_VERSION || typeof s.seq !== 'number' || !s.decide || !s.scale || !s.anchors) return null;
    const f = new LogFold();
    f.seq = s.seq;
    f.decide = DecideFold.restore(s.decide);
    f.scale = ScaleFold.restore(s.scale);
    // A checkpoint from before agent updates were folded has no agentUpdatedSeq: none seen.
    f.anchors = { ...s.anchors, agentUpdatedSeq: s.anchors.agentUpdatedSeq ?? null };
    return f;
  }

  snapshot(): LogFoldSnapshot {
    return { v: FOLD_VERSION, seq: this.seq, decide: this.decide.snapshot(), scale: this.scale.snapshot(), anchors: { ...this.anchors } };
  }

  /** Folds the next event in; one already folded is skipped, a gap is a harness fault. */
  apply(e: StoredEvent): void {
    if (e.seq <= this.seq) return;
    if (e.seq !== this.seq + 1) throw new Error(`log fold: event ${e.seq} follows ${this.seq}: the log was read with a gap`);
    this.seq = e.seq;
    if ((e.session_thread_id ?? null) !== this.thread) return;
    this.decide.apply(e);
    this.scale.apply(e);
    const a = this.anchors;
    switch (e.type) {
      case 'span.model_request_start':
        a.firstSpanSeq ??= e.seq;
        if (e.window_from_seq !== undefined) a.windowFrom = e.window_from_seq;
        break;
      case 'agent.thread_context_compacted':
        // As context-shape.ts reads it: only a summary with its range counts.
        if (typeof e.summary === 'string' && e.summary && e.to_seq !== undefined) a.compaction = { seq: e.seq, to: e.to_seq };
        break;
      case 'mcp.tools_listed':
        a.mcpListingSeq = e.seq;
        break;
      case 'session.updated':
        if (e.agent !== undefined) a.agentUpdatedSeq = e.seq;
        break;
      default:
        break;
    }
  }

  state(): LogState {
    return this.decide.state();
  }
}

/**
 * The parts of the log a request under `policy` may show, by the anchors: everything from `from`
 * on, the task (seqs 1 … `headTo`), and single events (`pinned`). `full` and
 * `clear_old_tool_results` show every turn, so they read from 1.
 */
export function contextReads(a: Anchors, policy: ContextPolicy): { from: number; headTo: number | null; pinned: number[] } {
  let from = 1;
  let headTo: number | null = null;
  if (policy.type === 'window' && a.windowFrom !== null && a.firstSpanSeq !== null) {
    from = a.windowFrom;
    headTo = a.firstSpanSeq - 1;
  } else if (policy.type === 'compaction' && a.compaction) {
    from = a.compaction.to + 1;
  }
  const pinned = a.mcpListingSeq !== null && a.mcpListingSeq < from && (headTo === null || a.mcpListingSeq > headTo) ? [a.mcpListingSeq] : [];
  return { from, headTo, pinned };
}

/** Whether an event is in the parts `contextReads` names. */
export function inContext(seq: number, reads: ReturnType<typeof contextReads>): boolean {
  return seq >= reads.from || (reads.headTo !== null && seq <= reads.headTo) || reads.pinned.includes(seq);
}
