import 'server-only';
import type { PromptAttachments } from '~/server/harness/core/attachments-prompt';
import type { SessionAgent } from '~/lib/agent';
import type { BudgetLimit } from '~/lib/budget-limit';
import type { NewEvent, StoredEvent } from '~/lib/events';
import type { HandRegistry, HandScope } from '~/server/hands/registry';
import type { RetryPolicy } from '~/server/harness/core/retry-policy';
import type { ModelClient } from '~/server/harness/core/model-client';
import type { LiveBus } from '~/server/session/live-bus';
import type { LogView } from '~/server/harness/log-view';
import type { StepAbort } from '~/server/harness/steps/step-abort';
import type { McpGateway } from '~/server/proxy/mcp-gateway';
import type { Delegation, ThreadEntry } from '~/server/harness/core/delegation';

/**
 * Which thread a step runs for (multiagent): the primary (the coordinator, `entry` null) or a
 * child. The threads share the session's hands, vaults and lease; each has its own log view.
 */
export interface ThreadContext {
  readonly primaryId: string;
  /** The child thread this step is for; null: the primary thread. */
  readonly entry: ThreadEntry | null;
  /** What the primary may delegate to (nothing for a child: depth 1). */
  readonly delegation: Delegation;
  /** The session's child threads as the log made them so far. */
  threads(): readonly ThreadEntry[];
}

/** What steps use besides the log: the model, the hands, the live bus, the MCP gateway. */
export interface StepDeps {
  model: ModelClient;
  hands: HandRegistry;
  live: LiveBus;
  mcp?: McpGateway;
  maxTokens?: number;
  retry: RetryPolicy;
  /** What the session has attached (skills, memory stores), for its system prompt; absent: nothing. */
  attachments?: (sessionId: string) => Promise<PromptAttachments>;
  /** The model outcomes are graded with; absent: the one the session's agent runs. */
  graderModel?: string;
  /** How often a running evaluation stores a heartbeat; absent: every 10 s. */
  outcomeHeartbeatMs?: number;
  /** Self-hosted environments: absent, every session's tools run on this server's hands. */
  selfHosted?: SelfHostedPort;
}

/** How the harness reaches the self-hosted work queue (server/commands/work-queue.ts). */
export interface SelfHostedPort {
  /** The session's environment when it is self-hosted, else null. */
  environmentOf(sessionId: string): Promise<string | null>;
  /** Makes the session's work item unless it has a live one: a worker is to answer its calls. */
  needWorker(sessionId: string, environmentId: string): Promise<unknown>;
}

/** How a step writes the log; the run's commit path (run/commit.ts) carries the fence, keys and retries. */
export interface StepWriter {
  readonly sessionId: string;
  /** Stored once under `key`, retried until the store answers. */
  keyed(what: string, events: readonly NewEvent[], key: string, ids?: readonly (string | undefined)[]): Promise<StoredEvent[]>;
  /** One try, unkeyed (a repeat could store it twice). */
  once(events: readonly NewEvent[]): Promise<StoredEvent[]>;
  /** One try, only if the log still ends at `lastSeq`; null when something was appended since. */
  ifLogEndsAt(lastSeq: number, events: readonly NewEvent[]): Promise<StoredEvent[] | null>;
  /** Keyed, one try: a failure goes up to whoever decides again (the loop, or a hand's registry). */
  keyedOnce(event: NewEvent, key: string): Promise<StoredEvent>;
}

/**
 * What one step is given. A step decides nothing (decide() did) and touches neither the store
 * nor the fence nor a retry: it does its action and writes what came of it through `write`.
 */
export interface StepContext {
  readonly sessionId: string;
  readonly view: LogView;
  readonly write: StepWriter;
  readonly deps: StepDeps;
  /** The lease epoch the run holds (hand scopes carry it). */
  readonly epoch: number;
  /** Ends with the run (lease lost, closing). */
  readonly loopSignal: AbortSignal;
  /** The session's agent; null: the built-in default. */
  agent(): Promise<SessionAgent | null>;
  /** The session's budget as stored now (it can be raised while the session runs); null: none. */
  budget(): Promise<BudgetLimit | null>;
  /** Every event of the log that reports a model request's usage (turns and compaction summaries). */
  usageEvents(): Promise<StoredEvent[]>;
  /** Runs `fn` as the interruptible part of the step: an interrupt resolves with the StepAbort. */
  interruptible<T>(fn: (signal: AbortSignal) => Promise<T>): Promise<T | StepAbort>;
  /** A read, repeated until the store answers. */
  read<T>(what: string, fn: () => Promise<T>): Promise<T>;
  /** The log up to `to`, whole (web_fetch's and session_events' own reads). */
  readLog(to: number): Promise<StoredEvent[]>;
  /** The thread this step runs for (absent: a session without threads, as before multiagent). */
  readonly thread?: ThreadContext;
}

/** The scope a hand call runs in: the session, the step's signal, and the hand's writes through the run. */
export function handScope(ctx: StepContext, signal: AbortSignal): HandScope {
  return { sessionId: ctx.sessionId, signal, epoch: ctx.epoch, emit: (event, key) => ctx.write.keyedOnce(event, key) };
}
