import 'server-only';
import { randomUUID } from 'node:crypto';
import { isDomainError } from '~/lib/errors';
import type { HandRegistry } from '~/server/hands/registry';
import type { ModelClient } from '~/server/harness/core/model-client';
import type { LiveBus } from '~/server/session/live-bus';
import { runSession } from '~/server/harness/run/session-run';
import { StoreRetry } from '~/server/harness/run/store-retry';
import { startSweeper } from '~/server/harness/run/sweeper';
import { type Run, StepAbort, newRun } from '~/server/harness/steps/step-abort';
import type { SelfHostedPort, StepDeps } from '~/server/harness/steps/step-context';
import type { PromptAttachments } from '~/server/harness/core/attachments-prompt';
import { errorFields, logger } from '~/server/log';
import type { McpGateway } from '~/server/proxy/mcp-gateway';
import type { SessionStore } from '~/server/session/store';

const log = logger('harness');

export interface HarnessOptions {
  store: SessionStore;
  model: ModelClient;
  hands: HandRegistry;
  live: LiveBus;
  maxTokens?: number;
  leaseTtlMs?: number;
  /** At most this many child threads of one session step at once (PADDOCK_MAX_RUNNING_THREADS; default 25). */
  maxRunningThreads?: number;
  /** Retries after the first failed model attempt before the session gives up. */
  maxRetries?: number;
  retryBaseMs?: number;
  /** Back-off while the session store is unreachable: first wait, and the longest (default 200 ms, 5 s). */
  storeRetryBaseMs?: number;
  storeRetryMaxMs?: number;
  /** Identifies this process in lease owners. */
  instanceId?: string;
  /** The way to the session's MCP servers (the MCP proxy, behind a session token); none: they cannot be reached. */
  mcp?: McpGateway;
  /** What a session has attached (skills, memory stores), named in its system prompt. */
  attachments?: (sessionId: string) => Promise<PromptAttachments>;
  /** The model outcomes are graded with; absent: the session's agent's. */
  graderModel?: string;
  /** How often a running outcome evaluation stores a heartbeat (default 10 s). */
  outcomeHeartbeatMs?: number;
  /** Self-hosted environments' work queue; absent: every session runs its tools on this server's hands. */
  selfHosted?: SelfHostedPort;
}

/**
 * The brain: a façade over the session runs (run/), their steps (steps/) and the pure core
 * (core/). Stateless between steps: every step is re-derived from the log with the pure
 * `decide()`, so any instance can pick a session up after a crash with `wake()`.
 */
export class Harness {
  private readonly runs = new Map<string, Run>();
  private readonly instanceId: string;
  private readonly retry: StoreRetry;
  private readonly deps: StepDeps;
  private closing = false;

  constructor(private readonly o: HarnessOptions) {
    this.instanceId = o.instanceId ?? `h-${process.pid}-${randomUUID().slice(0, 8)}`;
    this.retry = new StoreRetry({ baseMs: o.storeRetryBaseMs, maxMs: o.storeRetryMaxMs });
    this.deps = { model: o.model, hands: o.hands, live: o.live, mcp: o.mcp, attachments: o.attachments, selfHosted: o.selfHosted, maxTokens: o.maxTokens, retry: { maxRetries: o.maxRetries, baseMs: o.retryBaseMs }, graderModel: o.graderModel, outcomeHeartbeatMs: o.outcomeHeartbeatMs };
  }

  /** Sessions whose loop runs here now (a lease held): the metrics' live sessions. */
  get runningSessions(): number {
    return this.runs.size;
  }

  get model(): ModelClient {
    return this.o.model;
  }

  /** How many times a step, read or write was retried because the store was unreachable (for tests and operators). */
  get storeRetries(): number {
    return this.retry.count;
  }

  /** Runs the session until there is nothing to do. Resolves when this wake's work is over. */
  wake(sessionId: string): Promise<void> {
    if (this.closing) return Promise.resolve();
    const running = this.runs.get(sessionId);
    if (running) {
      running.dirty = true;
      return running.done;
    }
    const run = newRun();
    const options = { store: this.o.store, deps: this.deps, retry: this.retry, instanceId: this.instanceId, leaseTtlMs: this.o.leaseTtlMs ?? 15_000, ...(this.o.maxRunningThreads ? { maxRunningThreads: this.o.maxRunningThreads } : {}) };
    run.done = runSession(options, sessionId, run)
      .catch((e: unknown) =>
        // A session deleted meanwhile has nothing left to do: not a fault.
        isDomainError(e) && e.code === 'not_found' ? log.debug('session gone', { session: sessionId }) : log.error('loop failed', { session: sessionId, ...errorFields(e) }),
      )
      .finally(() => {
        this.runs.delete(sessionId);
        if (run.dirty && !this.closing) void this.wake(sessionId);
      });
    this.runs.set(sessionId, run);
    return run.done;
  }

  /** Periodically wakes sessions that need work and have no live lease (e.g. a crashed harness). */
  startSweeper(intervalMs: number): () => void {
    return startSweeper(
      { store: this.o.store, isRunning: (id) => this.runs.has(id), wake: (id) => void this.wake(id), closing: () => this.closing },
      intervalMs,
    );
  }

  async close(): Promise<void> {
    this.closing = true;
    const runs = [...this.runs.values()];
    for (const r of runs) r.loop.abort(new StepAbort('closing'));
    await Promise.allSettled(runs.map((r) => r.done));
  }
}
