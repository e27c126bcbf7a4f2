import type { ContextPolicy } from '~/lib/context-policy';
import type { StoredEvent } from '~/lib/events';
import type { McpServerListing } from '~/lib/mcp-tools';
import { LogFold, contextReads, inContext } from '~/server/harness/core/log-fold';
import type { Checkpoints, EventLog } from '~/server/session/store';

/** How many events a run folds between two checkpoints it stores (a crash then re-reads at most this many). */
export const CHECKPOINT_EVERY = 500;

/**
 * The harness's view of one session's log: the fold of all of it (what to do next) and the events
 * a request under the session's context policy may show (what to show). Loaded from the newest
 * checkpoint plus what follows it, so a wake reads what it needs, not the whole log. Building a
 * request from `events` gives the request the whole log would give (log-view.test.ts).
 */
export class LogView {
  private constructor(
    readonly fold: LogFold,
    private shown: StoredEvent[],
    private readonly policy: ContextPolicy,
    /** The seq of the newest checkpoint stored (or found). */
    public checkpointSeq: number,
  ) {}

  /** From a checkpoint (if any) and the events after it, plus the parts of the log a request may show. */
  static async load(store: Pick<Checkpoints, 'readCheckpoint'> & Pick<EventLog, 'getEvents'>, sessionId: string, policyRead: ContextPolicy | Promise<ContextPolicy>): Promise<LogView> {
    // The policy comes with the session's agent: read beside the checkpoint, not after it.
    const [stored, policy] = await Promise.all([store.readCheckpoint(sessionId), policyRead]);
    const fold = (stored && LogFold.restore(stored.body)) ?? new LogFold();
    const reads = contextReads(fold.anchors, policy);
    // The tail after the checkpoint and the shown part from `from` on come in one read.
    const from = Math.min(reads.from, fold.seq + 1);
    const [rest, head, ...pinned] = await Promise.all([
      store.getEvents(sessionId, { from }),
      reads.headTo !== null && reads.headTo >= 1 && from > 1 ? store.getEvents(sessionId, { to: Math.min(reads.headTo, from - 1) }) : Promise.resolve([]),
      ...reads.pinned.filter((seq) => seq < from).map((seq) => store.getEvents(sessionId, { from: seq, to: seq })),
    ]);
    const mine = (e: StoredEvent) => (e.session_thread_id ?? null) === fold.thread;
    const view = new LogView(fold, [...head, ...pinned.flat()].filter(mine).sort((x, y) => x.seq - y.seq), policy, fold.seq);
    view.shown.push(...rest.filter(mine));
    for (const e of rest) fold.apply(e);
    return view;
  }

  /** A view of a log already in hand (tests, and a fold restored from a snapshot). */
  static of(events: readonly StoredEvent[], policy: ContextPolicy, fold = new LogFold()): LogView {
    const view = new LogView(fold, [], policy, fold.seq);
    view.append(events);
    return view;
  }

  /**
   * A child thread's view (multiagent): its own events of the whole log, read at the run's start
   * (a child has no checkpoint of its own); its fold still advances over every event's seq.
   */
  static forThread(events: readonly StoredEvent[], policy: ContextPolicy, thread: string, afterSeq = 0): LogView {
    const fold = new LogFold();
    fold.thread = thread;
    // A thread begins where it was made: its fold starts there, not at the log's start.
    fold.seq = afterSeq;
    return LogView.of(events, policy, fold);
  }

  /** The events a request may show, in seq order (a subset of the log: see the class comment). */
  get events(): readonly StoredEvent[] {
    return this.shown;
  }

  /**
   * The session's MCP listing (the newest `mcp.tools_listed`: always in view), or null when it has
   * none yet or a session update changed the agent since (its MCP servers are listed again).
   */
  get mcpListing(): McpServerListing[] | null {
    const { mcpListingSeq, agentUpdatedSeq } = this.fold.anchors;
    if (mcpListingSeq === null || (agentUpdatedSeq !== null && agentUpdatedSeq > mcpListingSeq)) return null;
    const e = this.shown.find((x) => x.seq === mcpListingSeq);
    return e?.type === 'mcp.tools_listed' ? e.servers : null;
  }

  /** The idempotency key of the listing due now: one per agent update, so a relisting is stored, not deduplicated away. */
  get mcpListingKey(): string {
    const updated = this.fold.anchors.agentUpdatedSeq;
    return updated === null ? 'mcp_tools_listed' : `mcp_tools_listed:${updated}`;
  }

  /** The log's last seq (0 for an empty log). */
  get lastSeq(): number {
    return this.fold.seq;
  }

  /** Events read after the view's last one; already folded ones are skipped. */
  append(events: readonly StoredEvent[]): void {
    const anchors = this.fold.anchors;
    const [windowFrom, compaction] = [anchors.windowFrom, anchors.compaction];
    for (const e of events) {
      if (e.seq <= this.fold.seq) continue;
      this.fold.apply(e);
      if ((e.session_thread_id ?? null) === this.fold.thread) this.shown.push(e);
    }
    // The window moved or a compaction was stored: what lies before it is no longer shown (memory stays bounded over a long run).
    if (anchors.windowFrom !== windowFrom || anchors.compaction !== compaction) {
      const reads = contextReads(anchors, this.policy);
      this.shown = this.shown.filter((e) => inContext(e.seq, reads));
    }
  }

  /** The fold to store, when enough was folded since the last one (or `force`, at the end of a run); else null. */
  dueCheckpoint(force: boolean): { seq: number; body: string } | null {
    const n = this.fold.seq - this.checkpointSeq;
    if (n <= 0 || (!force && n < CHECKPOINT_EVERY)) return null;
    return { seq: this.fold.seq, body: JSON.stringify(this.fold.snapshot()) };
  }
}
