import type { StopReason, StoredEvent, StoredEventOf } from '~/lib/events';
import { type ActiveOutcome, type OpenEvaluation, OutcomeFold, type OutcomeFoldSnapshot, type OutcomeState } from '~/server/harness/core/outcomes';
import { SELF_HOSTED_HAND, lostWorkerText } from '~/lib/hand';

/**
 * The harness's one decision: given the whole log, what is the next step? Pure, so it can be
 * tested exhaustively and so any harness instance, after any crash, decides the same thing.
 */
/** A call the harness runs: a toolset tool's (on a hand, or here), or an MCP server's (through the gateway). */
export type AgentToolUse = StoredEventOf<'agent.tool_use'>;
export type McpToolUse = StoredEventOf<'agent.mcp_tool_use'>;
export type ToolUse = AgentToolUse | McpToolUse;
export type CustomToolUse = StoredEventOf<'agent.custom_tool_use'>;

export type Action =
  | { kind: 'mark_running' }
  | { kind: 'call_model'; attempt: number }
  | { kind: 'run_tools'; calls: ToolUse[] }
  | { kind: 'cancel_tools'; calls: ToolUse[]; reason: string }
  /** Calls the user denied: each gets an error result carrying the user's message, never runs. */
  | { kind: 'deny_tools'; denials: { call: ToolUse; message: string }[] }
  /** The agent's turn ended while it works toward an outcome: the grader judges it (`open`: a span a crash left open, redone). */
  | { kind: 'evaluate_outcome'; outcome: ActiveOutcome; open: OpenEvaluation | null }
  /** An evaluation that cannot go on (the user interrupted it, or a newer outcome replaced it): its span ends `interrupted`. */
  | { kind: 'end_evaluation'; evaluation: OpenEvaluation }
  /** Calls whose self-hosted worker was lost mid-call: each gets an error naming it, never re-run. */
  | { kind: 'fail_tools'; failures: { call: ToolUse; message: string }[] }
  /** `worker`: calls wait for a self-hosted worker, so the session's work item is made (if it has none) first. */
  | { kind: 'go_idle'; stop_reason: StopReason; worker?: boolean }
  | { kind: 'none' };

export interface LogState {
  status: 'idle' | 'running' | 'rescheduling' | 'terminated';
  needsModel: boolean;
  /** Tool calls without a stored result, in log order. */
  pending: ToolUse[];
  /** Pending calls that were in flight when the user interrupted: they get error results, never run. */
  cancelled: ToolUse[];
  /** A user.interrupt arrived after the last user.message. */
  interrupted: boolean;
  /** Failed model attempts since the last answered turn or user message. */
  failedAttempts: number;
  /** Pending calls whose policy asks first and that no `user.tool_confirmation` answered yet. */
  awaitingConfirmation: ToolUse[];
  /** Pending calls the user denied (with the message the model is to get). */
  denied: { call: ToolUse; message: string }[];
  /** Custom tool calls the client has not answered yet. */
  awaitingClient: CustomToolUse[];
  /** Outcomes (core/outcomes.ts). */
  outcome: OutcomeState;
  /** A self-hosted session's calls a worker is to answer (`user.tool_result`). */
  awaitingWorker: ToolUse[];
  /** Self-hosted calls whose worker was lost before answering (with the error each gets). */
  lostWorker: { call: ToolUse; message: string }[];
}

/** A call a self-hosted worker answers, not this server. */
export function isWorkerCall(c: ToolUse): boolean {
  return c.type === 'agent.tool_use' && c.hand === SELF_HOSTED_HAND;
}

/** What the model is told when the user denies a call without saying why. */
export const DEFAULT_DENY_MESSAGE = 'The user denied this tool call.';

/** The fold's state as plain JSON (a harness checkpoint stores it): see `DecideFold.snapshot`. */
export interface DecideFoldSnapshot {
  status: LogState['status'];
  needsModel: boolean;
  interrupted: boolean;
  failedAttempts: number;
  pending: ToolUse[];
  cancelled: string[];
  asking: string[];
  denied: [string, string][];
  custom: CustomToolUse[];
  turnStarts: [string, number][];
  lastUserMessageSeq: number;
  outcome?: OutcomeFoldSnapshot;
  /** Absent in checkpoints from before self-hosted environments. */
  lost?: [string, string][];
}

/**
 * `foldLog` one event at a time: the harness folds what it reads onto a stored snapshot instead of
 * reading the whole log again (log-fold.ts). What it keeps stays small: open calls and spans only.
 */
export class DecideFold {
  private status: LogState['status'] = 'idle';
  private needsModel = false;
  private interrupted = false;
  private failedAttempts = 0;
  private pending = new Map<string, ToolUse>();
  private cancelled = new Set<string>();
  // Calls whose policy asks first: held until confirmed (then they run) or denied.
  private asking = new Set<string>();
  private denied = new Map<string, string>();
  private custom = new Map<string, CustomToolUse>();
  // A turn answers only the input that existed when it started: a message sent while the model
  // was streaming still needs its own turn. Only open spans are kept.
  private turnStarts = new Map<string, number>();
  private lastUserMessageSeq = 0;
  private outcome = new OutcomeFold();
  private lost = new Map<string, string>();

  static restore(s: DecideFoldSnapshot): DecideFold {
    const f = new DecideFold();
    f.status = s.status;
    f.needsModel = s.needsModel;
    f.interrupted = s.interrupted;
    f.failedAttempts = s.failedAttempts;
    f.pending = new Map(s.pending.map((c) => [c.id, c]));
    f.cancelled = new Set(s.cancelled);
    f.asking = new Set(s.asking);
    f.denied = new Map(s.denied);
    f.custom = new Map(s.custom.map((c) => [c.id, c]));
    f.turnStarts = new Map(s.turnStarts);
    f.lastUserMessageSeq = s.lastUserMessageSeq;
    f.outcome = OutcomeFold.restore(s.outcome);
    f.lost = new Map(s.lost ?? []);
    return f;
  }

  snapshot(): DecideFoldSnapshot {
    return {
      status: this.status,
      needsModel: this.needsModel,
      interrupted: this.interrupted,
      failedAttempts: this.failedAttempts,
      pending: [...this.pending.values()],
      cancelled: [...this.cancelled],
      asking: [...this.asking],
      denied: [...this.denied],
      custom: [...this.custom.values()],
      turnStarts: [...this.turnStarts],
      lastUserMessageSeq: this.lastUserMessageSeq,
      outcome: this.outcome.snapshot(),
      lost: [...this.lost],
    };
  }

  // The model is asked again once every call of its turn has its answer.
  private answered(): void {
    if (this.pending.size === 0 && this.custom.size === 0 && !this.interrupted) this.needsModel = true;
  }

  apply(e: StoredEvent): void {
    // Terminated is final: a status a racing step stores after it must not revive the session.
    if (this.status === 'terminated') return;
    this.outcome.apply(e);
    switch (e.type) {
      // A thread's input from another thread (a child's task; the coordinator's report) is a turn's input like a user's message.
      case 'agent.thread_message_received':
      case 'user.message':
        this.lastUserMessageSeq = e.seq;
        this.needsModel = true;
        this.interrupted = false;
        this.failedAttempts = 0;
        // A new message instead of an answer: calls still waiting for the user are given up
        // (an unconfirmed call gets an error result; an unanswered custom call is shown to the
        // model as not answered), so the conversation can go on.
        for (const id of this.asking) if (!this.denied.has(id)) this.cancelled.add(id);
        // A worker's call still open is given up too (its late result is refused): the model is
        // asked again now, and every call it made needs a result first.
        for (const c of this.pending.values()) if (isWorkerCall(c) && !this.denied.has(c.id)) this.cancelled.add(c.id);
        this.asking.clear();
        this.custom.clear();
        break;
      case 'user.define_outcome':
        // Work starts at once, as for a message.
        this.lastUserMessageSeq = e.seq;
        this.needsModel = true;
        this.interrupted = false;
        this.failedAttempts = 0;
        break;
      case 'span.outcome_evaluation_end':
        // The grader's explanation goes back to the agent: another iteration, or its last word.
        if (e.result === 'needs_revision' || e.result === 'max_iterations_reached') {
          this.lastUserMessageSeq = e.seq;
          this.needsModel = true;
          this.failedAttempts = 0;
        }
        break;
      case 'user.interrupt':
        this.needsModel = false;
        this.interrupted = true;
        for (const id of this.pending.keys()) this.cancelled.add(id);
        this.asking.clear();
        this.custom.clear();
        break;
      case 'agent.tool_use':
      case 'agent.mcp_tool_use':
        this.pending.set(e.id, e);
        // A turn that finished just as the user pressed stop: its calls are never run.
        if (this.interrupted) this.cancelled.add(e.id);
        else if (e.evaluated_permission === 'ask') this.asking.add(e.id);
        else if (e.evaluated_permission === 'deny') this.denied.set(e.id, 'This tool call is not allowed by the agent\'s permission policy.');
        break;
      case 'agent.custom_tool_use':
        if (!this.interrupted) this.custom.set(e.id, e);
        break;
      case 'user.tool_confirmation':
        // Only the first verdict on a call that asked counts.
        if (!this.asking.delete(e.tool_use_id)) break;
        if (e.result === 'deny') this.denied.set(e.tool_use_id, e.deny_message?.trim() || DEFAULT_DENY_MESSAGE);
        break;
      case 'user.custom_tool_result':
        if (this.custom.delete(e.custom_tool_use_id)) this.answered();
        break;
      case 'agent.tool_result':
      case 'user.tool_result':
      case 'agent.mcp_tool_result': {
        const id = e.type === 'agent.mcp_tool_result' ? e.mcp_tool_use_id : e.tool_use_id;
        this.cancelled.delete(id);
        this.lost.delete(id);
        this.asking.delete(id);
        this.denied.delete(id);
        if (this.pending.delete(id)) this.answered();
        break;
      }
      case 'span.model_request_end':
        if (!e.is_error) {
          this.needsModel = this.lastUserMessageSeq > (this.turnStarts.get(e.model_request_start_id) ?? Infinity);
          this.failedAttempts = 0;
        }
        this.turnStarts.delete(e.model_request_start_id);
        break;
      case 'span.model_request_start':
        this.turnStarts.set(e.id, e.seq);
        break;
      case 'session.thread_status_rescheduled':
      case 'session.status_rescheduled':
        this.status = 'rescheduling';
        this.failedAttempts += 1;
        break;
      case 'session.error':
        // An MCP server that failed is reported, and the session goes on without it.
        if (e.error.retry_status.type !== 'retrying' && !e.error.type.startsWith('mcp_')) this.needsModel = false;
        break;
      // A child thread's status events are its own fold's statuses (a thread's fold sees only its own events).
      case 'session.thread_status_running':
      case 'session.status_running':
        this.status = 'running';
        break;
      case 'session.thread_status_idle':
      case 'session.status_idle':
        this.status = 'idle';
        // At its budget the turn is over: only a new message (under a raised budget) asks again.
        if (e.stop_reason.type === 'budget_reached') this.needsModel = false;
        break;
      case 'session.thread_status_terminated':
      case 'session.status_terminated':
        this.status = 'terminated';
        break;
      case 'user.file_edit':
      case 'agent.message':
      case 'agent.thinking':
      case 'agent.thread_context_compacted':
      case 'mcp.tools_listed':
      case 'session.usage':
      case 'hand.provisioned':
      case 'hand.released':
        break;
      case 'hand.lost':
        // The worker holding a self-hosted session's item died: the calls it had open fail.
        if (e.hand !== SELF_HOSTED_HAND) break;
        for (const c of this.pending.values()) {
          if (isWorkerCall(c) && !this.asking.has(c.id) && !this.denied.has(c.id) && !this.cancelled.has(c.id)) this.lost.set(c.id, lostWorkerText(e.reason));
        }
        break;
      case 'hand.reattached':
      case 'hand.suspended':
      case 'hand.resumed':
      case 'hand.repository_cloned':
      case 'span.outcome_evaluation_start':
      case 'span.outcome_evaluation_ongoing':
      case 'system.message':
      case 'session.updated':
      case 'session.thread_created':
      case 'agent.thread_message_sent':
        break;
    }
  }

  state(): LogState {
    const calls = [...this.pending.values()];
    return {
      status: this.status,
      needsModel: this.needsModel,
      pending: calls,
      cancelled: calls.filter((c) => this.cancelled.has(c.id)),
      interrupted: this.interrupted,
      failedAttempts: this.failedAttempts,
      awaitingConfirmation: calls.filter((c) => this.asking.has(c.id)),
      denied: calls.filter((c) => this.denied.has(c.id) && !this.cancelled.has(c.id)).map((call) => ({ call, message: this.denied.get(call.id)! })),
      awaitingClient: [...this.custom.values()],
      outcome: this.outcome.state(),
      awaitingWorker: calls.filter((c) => isWorkerCall(c) && !this.asking.has(c.id) && !this.denied.has(c.id) && !this.cancelled.has(c.id) && !this.lost.has(c.id)),
      lostWorker: calls.filter((c) => this.lost.has(c.id) && !this.cancelled.has(c.id)).map((call) => ({ call, message: this.lost.get(call.id)! })),
    };
  }
}

export function foldLog(events: readonly StoredEvent[]): LogState {
  const fold = new DecideFold();
  for (const e of events) fold.apply(e);
  return fold.state();
}

export function decide(events: readonly StoredEvent[]): Action {
  return decideFrom(foldLog(events));
}

/** `decide` on a log already folded. */
export function decideFrom(s: LogState): Action {
  if (s.status === 'terminated') return { kind: 'none' };
  if (s.cancelled.length > 0) {
    return { kind: 'cancel_tools', calls: s.cancelled, reason: 'interrupted by the user before the tool finished' };
  }
  const ev = s.outcome.evaluating;
  if (ev && (s.outcome.evaluationInterrupted || s.outcome.active?.outcome_id !== ev.outcome_id)) return { kind: 'end_evaluation', evaluation: ev };
  const waiting = new Set([...s.awaitingConfirmation, ...s.denied.map((d) => d.call), ...s.awaitingWorker, ...s.lostWorker.map((l) => l.call)].map((c) => c.id));
  const runnable = s.pending.filter((c) => !waiting.has(c.id));
  const work = runnable.length > 0 || s.denied.length > 0 || s.lostWorker.length > 0 || s.needsModel;
  if (work && s.status !== 'running') return { kind: 'mark_running' };
  if (s.denied.length > 0) return { kind: 'deny_tools', denials: s.denied };
  if (s.lostWorker.length > 0) return { kind: 'fail_tools', failures: s.lostWorker };
  if (runnable.length > 0) return { kind: 'run_tools', calls: runnable };
  if (s.needsModel) return { kind: 'call_model', attempt: s.failedAttempts + 1 };
  // Nothing to do until the user answers: idle, saying which calls wait for what.
  const blocked = [...s.awaitingConfirmation, ...s.awaitingClient, ...s.awaitingWorker].map((c) => c.id);
  if (blocked.length > 0) {
    if (s.status === 'idle') return { kind: 'none' };
    return { kind: 'go_idle', stop_reason: { type: 'requires_action', event_ids: blocked }, ...(s.awaitingWorker.length > 0 ? { worker: true } : {}) };
  }
  // The turn is over: an outcome's work is graded before the session goes idle.
  const { active } = s.outcome;
  if (active && (s.outcome.worked || ev) && !s.interrupted) {
    return s.status === 'running' ? { kind: 'evaluate_outcome', outcome: active, open: ev } : { kind: 'mark_running' };
  }
  if (s.status !== 'idle') return { kind: 'go_idle', stop_reason: { type: 'end_turn' } };
  return { kind: 'none' };
}
