import 'server-only';
import { randomUUID } from 'node:crypto';
import type { SessionAgent } from '~/lib/agent';
import type { NewEvent, StoredEvent, ToolResultContent } from '~/lib/events';
import { type McpServerListing, mcpServersToList, mcpToolsFor } from '~/lib/mcp-tools';
import { type StoreUnavailableError, isDomainError, isStoreUnavailable } from '~/lib/errors';
import { abortReason, backoffMs, sleep } from '~/lib/sleep';
import { BRAIN_TOOLS, WEB_FETCH_TOOL, isHandTool, toolSpecsFor } from '~/lib/tools';
import { type AgentTool, routeTool } from '~/lib/toolset';
import { ToolError } from '~/lib/hand';
import { unreachable } from '~/lib/unreachable';
import { newId } from '~/lib/ids';
import { CallFailure, runToolCall } from '~/server/harness/tool-call';
import type { HandRegistry, HandScope } from '~/server/hands/registry';
import { type ContextPolicy, FULL_CONTEXT, offersRecall } from '~/lib/context-policy';
import { compactionRequest, requestTokens, shouldCompact } from '~/server/harness/compaction';
import { type RequestSettings, SYSTEM_PROMPT, buildContext, buildRequest } from '~/server/harness/context';
import { LogView } from '~/server/harness/log-view';
import { SESSION_EVENTS_TOOL, SESSION_EVENTS_TOOL_NAME } from '~/server/harness/session-events';
import { type Action, type McpToolUse, type ToolUse, decideFrom } from '~/server/harness/decide';
import type { LiveBus } from '~/server/harness/live-bus';
import { ModelError, type ModelClient, type TurnBlock } from '~/server/harness/model-client';
import type { Fence, SessionStore } from '~/server/session/store';
import { errorFields, logger } from '~/server/log';
import { metrics } from '~/server/metrics/metrics';
import { traceModelRequest, traceToolCall } from '~/server/metrics/tracing';
import { type McpGateway, isMcpUpstreamError } from '~/server/proxy/mcp-gateway';
import { startTicker } from '~/server/ticker';

const log = logger('harness');
/** How often the sweeper prunes the store's rows of ended hands and answered calls. */
const PRUNE_EVERY_MS = 60_000;

export interface HarnessOptions {
  store: SessionStore;
  model: ModelClient;
  hands: HandRegistry;
  live: LiveBus;
  maxTokens?: number;
  leaseTtlMs?: number;
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
}

/** Why a step was cut short: the user interrupted, the lease was lost, or the harness is closing. */
class StepAbort extends Error {
  constructor(readonly why: 'interrupt' | 'lease_lost' | 'closing') {
    super(`step aborted: ${why}`);
    this.name = 'StepAbort';
  }
}

interface Run {
  /** Set when something may have changed while the loop was busy: re-check before leaving. */
  dirty: boolean;
  done: Promise<void>;
  loop: AbortController;
  step: AbortController | null;
  /** The last seq the loop has read, and the seq of the newest interrupt seen by the watcher. */
  seenSeq: number;
  interruptSeq: number;
  /** The session's agent snapshot, read once per run: it is fixed when the session is made. */
  agent?: Promise<SessionAgent | null>;
}

/**
 * The brain's loop. Stateless between steps: every step re-derives what to do from the log with
 * the pure `decide()`, so any instance can pick a session up after a crash with `wake()`.
 */
export class Harness {
  private readonly runs = new Map<string, Run>();

  /** Sessions whose loop runs here now (a lease held): the metrics' live sessions. */
  get runningSessions(): number {
    return this.runs.size;
  }
  private readonly instanceId: string;
  private closing = false;
  #storeRetries = 0;

  constructor(private readonly o: HarnessOptions) {
    this.instanceId = o.instanceId ?? `h-${process.pid}-${randomUUID().slice(0, 8)}`;
  }

  get model(): ModelClient {
    return this.o.model;
  }

  /** How many times a step, read or write was retried because the store was unreachable (for tests and operators). */
  get storeRetries(): number {
    return this.#storeRetries;
  }

  /** Runs the session until there is nothing to do. Resolves when this wake's work is over. */
  wake(sessionId: string): Promise<void> {
    if (this.closing) return Promise.resolve();
    const running = this.runs.get(sessionId);
    if (running) {
      running.dirty = true;
      return running.done;
    }
    const run: Run = { dirty: false, done: Promise.resolve(), loop: new AbortController(), step: null, seenSeq: 0, interruptSeq: 0 };
    run.done = this.runLoop(sessionId, run)
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
    // Unleased work seen on the previous tick. Work that arrived moments ago is being picked up by
    // the instance that stored it (its send wakes the harness right after the commit); taking it
    // from there would only move the run away from the user's instance. Work still unclaimed a
    // tick later was left behind (that instance died in between) and is taken. An expired lease is
    // a harness that died: taken at once.
    let unclaimed = new Set<string>();
    let prunedAt = 0;
    const tick = async () => {
      // Housekeeping rides along, once a minute: tabs of ended hands and claims of answered
      // calls are never read again.
      if (Date.now() - prunedAt >= PRUNE_EVERY_MS) {
        prunedAt = Date.now();
        const pruned = await this.o.store.pruneHandRows();
        if (pruned.tabs + pruned.claims > 0) log.debug('pruned hand rows', pruned);
      }
      const waiting = await this.o.store.sessionsNeedingWork(50);
      const seen = unclaimed;
      unclaimed = new Set(waiting.filter((w) => !w.leaseExpired).map((w) => w.id));
      for (const { id, leaseExpired } of waiting) {
        if (this.runs.has(id) || !(leaseExpired || seen.has(id))) continue;
        // A lease that lapsed: its harness died or stopped, and this one takes the session over.
        if (leaseExpired) metrics().takeovers.inc();
        void this.wake(id);
      }
    };
    // During an outage the sweeper keeps ticking and re-wakes sessions when it ends.
    return startTicker({ name: 'sweep', log, intervalMs, tick, paused: () => this.closing, runNow: true });
  }

  async close(): Promise<void> {
    this.closing = true;
    const runs = [...this.runs.values()];
    for (const r of runs) r.loop.abort(new StepAbort('closing'));
    await Promise.allSettled(runs.map((r) => r.done));
  }

  private async runLoop(sessionId: string, run: Run): Promise<void> {
    const { store } = this.o;
    const ttl = this.o.leaseTtlMs ?? 15_000;
    let fence: Fence | null;
    try {
      // Nothing is held yet, so the acquire itself is retried. If an acquire committed but its
      // answer was lost, the retry finds the lease taken and returns null: the sweeper wakes the
      // session again once that lease expires.
      fence = await this.retryStore(run, sessionId, 'acquire lease', () => store.acquireLease(sessionId, `${this.instanceId}:${randomUUID().slice(0, 8)}`, ttl));
    } catch (e) {
      if (e instanceof StepAbort) return;
      throw e;
    }
    if (!fence) return; // another harness holds it and will see the new events itself
    const held = fence;
    const renew = setInterval(() => {
      store.renewLease(held, ttl).then(
        (ok) => {
          if (!ok) run.loop.abort(new StepAbort('lease_lost'));
        },
        (e: unknown) => {
          // During an outage the loop reports (and retries) it; if the lease expires meanwhile,
          // whoever takes it over fences this run off.
          if (isStoreUnavailable(e)) log.debug('lease renewal failed', { session: sessionId, ...errorFields(e) });
          else log.warn('lease renewal failed', { session: sessionId, ...errorFields(e) });
        },
      );
    }, Math.max(50, Math.floor(ttl / 3)));
    renew.unref();

    // Set when the log, as last read, needs nothing: the release records it, so sweepers stop
    // waking a session whose log ends in something that asks for nothing (an interrupt to an
    // idle session).
    let settledSeq: number | undefined;
    let watcher: Promise<void> = Promise.resolve();
    let view: LogView | null = null;
    // The newest checkpoint and what follows it, plus what a request may show: not the whole log.
    const load = () => this.retryStore(run, sessionId, 'read log', () => LogView.load(store, sessionId, this.sessionAgent(sessionId, run).then(policyOf)));
    try {
      view = await load();
      watcher = this.watchInterrupts(sessionId, view.lastSeq, run);
      for (let failures = 0; ; ) {
        if (run.loop.signal.aborted) return;
        try {
          run.dirty = false;
          run.seenSeq = view.lastSeq;
          const action = decideFrom(view.fold.state());
          if (action.kind === 'none') {
            settledSeq = view.lastSeq;
            return;
          }
          await this.step(sessionId, held, action, view, run);
          view.append(await store.getEvents(sessionId, { from: view.lastSeq + 1 }));
          void this.checkpoint(sessionId, view, false);
          failures = 0;
        } catch (e) {
          if (!isStoreUnavailable(e)) throw e;
          // Whether the step's last write landed is unknown (the connection may have dropped
          // mid-commit): wait, then re-derive everything from the log, as a new harness would.
          await this.storeBackoff(run, sessionId, 'step', ++failures, e);
          view = await load();
        }
      }
    } catch (e) {
      if (e instanceof StepAbort || (isDomainError(e) && e.code === 'stale_fence')) {
        log.info('loop stopped', { session: sessionId, why: e instanceof StepAbort ? e.why : 'stale_fence' });
        return;
      }
      throw e;
    } finally {
      clearInterval(renew);
      run.loop.abort(new StepAbort('closing'));
      await watcher;
      if (view) await this.checkpoint(sessionId, view, true);
      await store.releaseLease(held, settledSeq).catch((e: unknown) => log.warn('lease release failed', errorFields(e)));
    }
  }

  /**
   * Stores the view's fold when due (every CHECKPOINT_EVERY events, and at the end of a run), so
   * the next wake reads from there. Best effort: a checkpoint not stored only means a longer read.
   */
  private async checkpoint(sessionId: string, view: LogView, force: boolean): Promise<void> {
    const due = view.dueCheckpoint(force);
    if (!due) return;
    view.checkpointSeq = due.seq;
    await this.o.store.writeCheckpoint(sessionId, due).catch((e: unknown) => log.debug('checkpoint not stored', { session: sessionId, seq: due.seq, ...errorFields(e) }));
  }

  /**
   * Runs a store call until the store answers: only for calls that are safe to repeat (reads,
   * idempotency-keyed appends, the lease acquire). Ends with the loop (StepAbort) or any other error.
   */
  private async retryStore<T>(run: Run, sessionId: string, what: string, fn: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn();
      } catch (e) {
        if (!isStoreUnavailable(e)) throw e;
        await this.storeBackoff(run, sessionId, what, attempt, e);
      }
    }
  }

  /** Counts and logs one retry, then waits (rejects with the loop's StepAbort if it ends meanwhile). */
  private async storeBackoff(run: Run, sessionId: string, what: string, attempt: number, e: StoreUnavailableError): Promise<void> {
    this.#storeRetries++;
    metrics().storeErrors.inc({ operation: what });
    const delay = backoffMs(attempt, this.o.storeRetryBaseMs ?? 200, this.o.storeRetryMaxMs ?? 5_000);
    const fields = { session: sessionId, what, attempt, retryInMs: delay, detail: e.detail };
    if (attempt === 1) log.warn('session store unreachable; retrying', fields);
    else log.debug('session store still unreachable', fields);
    await sleep(delay, run.loop.signal);
  }

  /**
   * Follows the log while the loop runs: a user.interrupt aborts the step in flight. Across a
   * store outage it resumes from the last event it saw.
   */
  private async watchInterrupts(sessionId: string, afterSeq: number, run: Run): Promise<void> {
    let cursor = afterSeq;
    for (let attempt = 1; !run.loop.signal.aborted; attempt++) {
      try {
        for await (const e of this.o.store.follow(sessionId, cursor, run.loop.signal)) {
          cursor = e.seq;
          attempt = 0;
          run.dirty = true;
          if (e.type !== 'user.interrupt') continue;
          run.interruptSeq = e.seq;
          run.step?.abort(new StepAbort('interrupt'));
        }
        return;
      } catch (e) {
        if (run.loop.signal.aborted) return;
        if (!isStoreUnavailable(e)) {
          log.warn('interrupt watcher failed', { session: sessionId, ...errorFields(e) });
          return;
        }
        await sleep(backoffMs(attempt, this.o.storeRetryBaseMs ?? 200, this.o.storeRetryMaxMs ?? 5_000), run.loop.signal).catch(() => undefined);
      }
    }
  }

  private async step(sessionId: string, fence: Fence, action: Exclude<Action, { kind: 'none' }>, view: LogView, run: Run): Promise<void> {
    const emit = (e: NewEvent, key?: string) => this.o.store.emitEvent(sessionId, e, { fence, ...(key ? { idempotencyKey: key } : {}) });
    switch (action.kind) {
      case 'mark_running': {
        // A wake that goes straight to the model stores the status with the request's span start:
        // one commit fewer before the first token. Not under compaction, whose summary stands for
        // every event before it (the status included).
        const next = decideFrom({ ...view.fold.state(), status: 'running' });
        const compacting = policyOf(await this.sessionAgent(sessionId, run)).type === 'compaction';
        if (next.kind === 'call_model' && !compacting) await this.callModel(sessionId, fence, view, next.attempt, run, true);
        else await emit({ type: 'session.status_running' });
        return;
      }
      case 'go_idle':
        try {
          // Only if nothing arrived since we decided: a new user.message must not be idled over.
          await this.o.store.emitEvent(
            sessionId,
            { type: 'session.status_idle', stop_reason: action.stop_reason, stop_details: null },
            { fence, expectLastSeq: view.lastSeq },
          );
        } catch (e) {
          if (!(isDomainError(e) && e.code === 'seq_conflict')) throw e;
        }
        return;
      case 'cancel_tools':
        for (const call of action.calls) await emit(resultOf(call, [{ type: 'text', text: action.reason }], true), call.id);
        return;
      case 'deny_tools':
        for (const { call, message } of action.denials) await emit(resultOf(call, [{ type: 'text', text: message }], true), call.id);
        return;
      case 'run_tools':
        await this.withStep(run, (signal) => this.runTools(sessionId, fence, action.calls, view, signal, run));
        return;
      case 'call_model':
        await this.callModel(sessionId, fence, view, action.attempt, run);
        return;
      default:
        unreachable(action);
    }
  }

  private async withStep<T>(run: Run, fn: (signal: AbortSignal) => Promise<T>): Promise<T | StepAbort> {
    const step = new AbortController();
    const onLoopAbort = () => step.abort(run.loop.signal.reason);
    run.loop.signal.addEventListener('abort', onLoopAbort, { once: true });
    run.step = step;
    // An interrupt the loop has not read yet applies to this step too.
    if (run.interruptSeq > run.seenSeq) step.abort(new StepAbort('interrupt'));
    try {
      return await fn(step.signal);
    } catch (e) {
      if (step.signal.aborted) {
        const why = step.signal.reason instanceof StepAbort ? step.signal.reason : new StepAbort('closing');
        if (why.why !== 'interrupt') throw why;
        return why;
      }
      throw e;
    } finally {
      run.step = null;
      run.loop.signal.removeEventListener('abort', onLoopAbort);
    }
  }

  /** A session runs the agent version it was created with; null: the built-in default. A failed read is tried again by the next step. */
  private sessionAgent(sessionId: string, run: Run): Promise<SessionAgent | null> {
    if (!run.agent) {
      const read = this.o.store.getSession(sessionId).then((s) => s?.agent ?? null);
      read.catch(() => {
        if (run.agent === read) run.agent = undefined;
      });
      run.agent = read;
    }
    return run.agent;
  }

  private async runTools(sessionId: string, fence: Fence, calls: ToolUse[], view: LogView, signal: AbortSignal, run: Run): Promise<void> {
    const scope: HandScope = {
      sessionId,
      signal,
      epoch: fence.epoch,
      emit: (event, key) => this.o.store.emitEvent(sessionId, event, { fence, idempotencyKey: key }),
    };
    const agent = await this.sessionAgent(sessionId, run);
    // The whole log, read once for the step and only by a call that needs it (web_fetch, session_events).
    let whole: Promise<StoredEvent[]> | null = null;
    const upTo = view.lastSeq;
    const wholeLog = () => (whole ??= this.o.store.getEvents(sessionId, { to: upTo }));
    const running = calls.map(async (call) => {
      if (call.type === 'agent.mcp_tool_use') return this.runMcpCall(sessionId, fence, call, agent, view, signal, run);
      const t0 = performance.now();
      let outcome: { text: string; hand?: string; isError: boolean };
      try {
        // Fail closed: a call the agent's tools do not allow never runs (decide() holds the ones
        // that ask until confirmed; this catches anything else, e.g. an agent changed under it).
        const recall = offersRecall(agent?.context_policy);
        // session_events is the harness's own read of the log, given with the context policy.
        if (agent && !(recall && call.name === SESSION_EVENTS_TOOL_NAME)) refuseUnallowed(agent.tools, call);
        outcome = { ...(await runToolCall(this.o.hands, scope, call, signal, { tools: agent?.tools ?? null, log: wholeLog, recall })), isError: false };
      } catch (e) {
        if (signal.aborted) throw abortReason(signal);
        // The store failed, not the call (a hand event could not be written): the step is
        // retried, rather than the call recorded as failed.
        if (isStoreUnavailable(e)) throw e;
        outcome = { text: e instanceof Error ? e.message : String(e), isError: true, ...(e instanceof CallFailure ? { hand: e.hand } : {}) };
      }
      // The hand's kind is its id's stem (sandbox-2 → sandbox); a call run by the harness has none.
      const handKind = outcome.hand?.replace(/-\d+$/, '') ?? 'none';
      metrics().toolDuration.observe({ tool: call.name, hand_kind: handKind, outcome: outcome.isError ? 'error' : 'ok' }, (performance.now() - t0) / 1000);
      traceToolCall({ sessionId, tool: call.name, handKind, startMs: t0, failed: outcome.isError });
      // Stored once per call, whoever retries it: so the result is kept across an outage.
      await this.retryStore(run, sessionId, 'store tool result', () =>
        this.o.store.emitEvent(
          sessionId,
          {
            type: 'agent.tool_result',
            tool_use_id: call.id,
            ...(outcome.hand ? { hand: outcome.hand } : {}),
            ...(outcome.isError ? { is_error: true } : {}),
            content: [{ type: 'text', text: outcome.text }],
          },
          { fence, idempotencyKey: call.id },
        ),
      );
    });
    try {
      await Promise.all(running);
    } catch (e) {
      // A store failure retries the whole step: let the other calls finish first, so that no call
      // runs twice at once.
      if (isStoreUnavailable(e)) await Promise.allSettled(running);
      throw e;
    }
  }

  /**
   * One MCP call through the gateway (on no hand): its result, and for a server that refused the
   * credential or could not be reached a `session.error` naming it, stored together, once.
   */
  private async runMcpCall(sessionId: string, fence: Fence, call: McpToolUse, agent: SessionAgent | null, view: LogView, signal: AbortSignal, run: Run): Promise<void> {
    const batch: NewEvent[] = [];
    const t0 = performance.now();
    try {
      // Fail closed, as for toolset calls: only a listed, enabled tool, and one that asks only once confirmed.
      const entry = agent ? mcpToolsFor(agent.tools, view.mcpListing ?? []).find((t) => t.server === call.mcp_server_name && t.tool === call.name) : undefined;
      if (!entry) throw new ToolError(`${call.name} is not a tool of MCP server ${call.mcp_server_name} that this agent has enabled: the call was not run`);
      if (entry.permission === 'ask' && call.evaluated_permission !== 'ask') throw new ToolError(`${call.name} needs the user's approval (permission policy always_ask): the call was not run`);
      if (!this.o.mcp) throw new ToolError(`MCP server ${call.mcp_server_name} cannot be reached: this server has no MCP proxy`);
      const res = await this.o.mcp.callTool(sessionId, call.mcp_server_name, call.name, call.input, signal);
      batch.push(resultOf(call, res.content, res.isError));
    } catch (e) {
      if (signal.aborted) throw abortReason(signal);
      if (isStoreUnavailable(e)) throw e;
      batch.push(resultOf(call, [{ type: 'text', text: e instanceof Error ? e.message : String(e) }], true));
      if (isMcpUpstreamError(e)) batch.push(mcpSessionError(e.kind, e.server, e.message));
    }
    const failed = batch.some((e) => e.type === 'agent.mcp_tool_result' && e.is_error === true);
    metrics().toolDuration.observe({ tool: `mcp:${call.mcp_server_name}`, hand_kind: 'none', outcome: failed ? 'error' : 'ok' }, (performance.now() - t0) / 1000);
    traceToolCall({ sessionId, tool: `mcp:${call.mcp_server_name}`, handKind: 'none', startMs: t0, failed });
    await this.retryStore(run, sessionId, 'store mcp result', () => this.o.store.emitEvents(sessionId, batch, { fence, idempotencyKey: call.id }));
  }

  /**
   * The session's MCP tools, listed once and stored in the log (`mcp.tools_listed`) so every later
   * request, on any instance, offers the same definitions. Returns null when it stored the listing
   * in this step (the loop re-reads the log and asks the model next).
   */
  private async mcpListing(sessionId: string, fence: Fence, view: LogView, agent: SessionAgent | null, run: Run): Promise<McpServerListing[] | null> {
    const stored = view.mcpListing;
    if (stored) return stored;
    const servers = agent ? mcpServersToList(agent) : [];
    if (servers.length === 0) return [];
    const gateway = this.o.mcp;
    const listed = await this.withStep(run, (signal) =>
      Promise.all(
        servers.map(async (s): Promise<{ listing: McpServerListing; error?: NewEvent }> => {
          try {
            if (!gateway) throw new ToolError(`MCP server "${s.name}" cannot be reached: this server has no MCP proxy`);
            return { listing: { mcp_server_name: s.name, tools: await gateway.listTools(sessionId, s.name, signal) } };
          } catch (e) {
            if (signal.aborted) throw e;
            if (isStoreUnavailable(e)) throw e;
            const kind = isMcpUpstreamError(e) ? e.kind : 'connection';
            const message = isMcpUpstreamError(e) || e instanceof ToolError ? e.message : `MCP server "${s.name}" could not be listed`;
            log.warn('mcp server not listed', { session: sessionId, server: s.name, kind });
            return { listing: { mcp_server_name: s.name, tools: [], error: kind }, error: mcpSessionError(kind, s.name, `${message}; the session goes on without its tools`) };
          }
        }),
      ),
    );
    // Interrupted: nothing stored; the next decide() sees the interrupt.
    if (listed instanceof StepAbort) return null;
    const batch: NewEvent[] = [{ type: 'mcp.tools_listed', servers: listed.map((l) => l.listing) }, ...listed.flatMap((l) => (l.error ? [l.error] : []))];
    await this.retryStore(run, sessionId, 'store mcp tools', () => this.o.store.emitEvents(sessionId, batch, { fence, idempotencyKey: 'mcp_tools_listed' }));
    return null;
  }

  /** One model turn. `markRunning`: the session is not running yet; its status is stored before anything else this step stores. */
  private async callModel(sessionId: string, fence: Fence, view: LogView, attempt: number, run: Run, markRunning = false): Promise<void> {
    const { events } = view;
    const running: NewEvent[] = markRunning ? [{ type: 'session.status_running' }] : [];
    const storeRunning = async () => {
      if (running.length > 0) await this.o.store.emitEvent(sessionId, running.pop()!, { fence });
    };
    const { store, model, live } = this.o;
    // A session runs the agent version it was created with; one without is on the built-in default.
    // Read before the span starts, so a failed read leaves no half-begun turn behind.
    const agent = await this.sessionAgent(sessionId, run);
    // Its MCP servers' tools are listed before its first request (a step of its own).
    if (agent && view.mcpListing === null && mcpServersToList(agent).length > 0) await storeRunning();
    const mcpListed = await this.mcpListing(sessionId, fence, view, agent, run);
    if (mcpListed === null) return;
    const mcpTools = new Map(agent ? mcpToolsFor(agent.tools, mcpListed).map((t) => [t.spec.name, t]) : []);
    // The span names what is asked: the agent's model, or the demo brain's label (never mistaken for Claude).
    const asked = agent && !model.isDemo ? agent.model.id : null;
    // What of the log the model sees; the recall tool comes with every policy that leaves something out.
    const history = agent?.context_policy ?? FULL_CONTEXT;
    const settings: RequestSettings = {
      model: asked ?? model.model,
      maxTokens: this.o.maxTokens ?? 8192,
      system: agent?.system ?? SYSTEM_PROMPT,
      tools: [...(agent ? toolSpecsFor(agent.tools, mcpListed) : BRAIN_TOOLS), ...(offersRecall(history) ? [SESSION_EVENTS_TOOL] : [])],
      history,
      tokenScale: view.fold.scale.value,
    };
    // Near its budget, the context is compacted first (a step of its own); the next step asks the model.
    if (history.type === 'compaction' && (await this.compact(sessionId, fence, events, settings, history.trigger_input_tokens, run))) return;
    const { request, windowFrom } = buildRequest(events, settings);
    // Where a window began is recorded: the next request's window starts there, and a wake reads from there.
    // The span starts only if the log still ends where the request's view ends: decide() counts
    // every event before a span start as seen by its request, so a message that arrived while the
    // request was built (it would get a seq before the start without being in the request) sends
    // the loop back to read it and build again.
    let stored: StoredEvent[];
    try {
      stored = await store.emitEvents(
        sessionId,
        [...running, { type: 'span.model_request_start', model: asked ?? model.label, estimated_input_tokens: requestTokens(request), ...(windowFrom !== null ? { window_from_seq: windowFrom } : {}) }],
        { fence, expectLastSeq: view.lastSeq },
      );
    } catch (e) {
      if (isDomainError(e) && e.code === 'seq_conflict') return;
      throw e;
    }
    const start = stored.at(-1);
    if (!start) throw new Error('span start not stored');
    // Named now, so a live preview carries the id the finished event is stored under.
    const messageId = newId('sevt');
    const thinkingId = newId('sevt');
    const began = performance.now();
    const spanEnd = (extra: Partial<Extract<NewEvent, { type: 'span.model_request_end' }>>): NewEvent => ({
      type: 'span.model_request_end',
      model_request_start_id: start.id,
      is_error: true,
      model_usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      duration_ms: Math.round(performance.now() - began),
      ...extra,
    });

    let outcome;
    try {
      outcome = await this.withStep(run, (signal) =>
        model.stream(request, {
          signal,
          onDelta: (d) => live.publish({ ...d, session_id: sessionId, model_request_start_id: start.id, ...(d.kind === 'text' ? { event_id: messageId } : d.kind === 'thinking' ? { event_id: thinkingId } : {}) }),
        }),
      );
    } catch (e) {
      if (!(e instanceof ModelError)) throw e;
      metrics().modelDuration.observe({ model: settings.model, outcome: 'error' }, (performance.now() - began) / 1000);
      traceModelRequest({ sessionId, model: settings.model, startMs: began, outcome: 'error' });
      await this.modelFailed(sessionId, fence, e, attempt, spanEnd({}), run);
      return;
    }
    if (outcome instanceof StepAbort) {
      metrics().modelDuration.observe({ model: settings.model, outcome: 'interrupted' }, (performance.now() - began) / 1000);
      traceModelRequest({ sessionId, model: settings.model, startMs: began, outcome: 'interrupted' });
    }
    if (outcome instanceof StepAbort) {
      // Interrupted: close the span; the partial answer is dropped, never half-stored.
      const end = spanEnd({ model_stop_reason: 'interrupted' });
      await this.retryStore(run, sessionId, 'store interrupted turn', () => store.emitEvents(sessionId, [end], { fence, idempotencyKey: `turn:${start.id}` }));
      return;
    }
    const turn = outcome;
    observeTurn(settings.model, turn, (performance.now() - began) / 1000);
    traceModelRequest({ sessionId, model: settings.model, startMs: began, outcome: 'ok', ttftMs: turn.ttftMs, usage: turn.usage });
    const batch: NewEvent[] = [];
    const thinking = turn.content.filter((b): b is Extract<TurnBlock, { type: 'thinking' }> => b.type === 'thinking');
    if (thinking.length > 0) batch.push({ type: 'agent.thinking', content: thinking });
    const texts = turn.content.filter((b) => b.type === 'text' && b.text.length > 0) as Extract<TurnBlock, { type: 'text' }>[];
    if (texts.length > 0) batch.push({ type: 'agent.message', content: texts.map((t) => ({ type: 'text', text: t.text })) });
    // Each call is addressed to the hand it will run on (named, or the current one), so a browser
    // tab can see in the log which calls are its own.
    const scope: HandScope = { sessionId, signal: run.loop.signal, epoch: fence.epoch, emit: (e, key) => store.emitEvent(sessionId, e, { fence, idempotencyKey: key }) };
    const current = turn.content.some((b) => b.type === 'tool_use') ? await this.retryStore(run, sessionId, 'read hands', () => this.o.hands.peekCurrent(scope)) : null;
    for (const b of turn.content) {
      if (b.type !== 'tool_use') continue;
      const mcp = mcpTools.get(b.name);
      if (mcp) {
        batch.push({ type: 'agent.mcp_tool_use', name: mcp.tool, mcp_server_name: mcp.server, input: b.input, model_tool_use_id: b.id, evaluated_permission: mcp.permission });
        continue;
      }
      // The agent's policy is evaluated now and stored with the call: a call that asks waits for
      // the user's confirmation, a custom tool's call waits for the client's result.
      if (b.name === SESSION_EVENTS_TOOL_NAME && offersRecall(history)) {
        batch.push({ type: 'agent.tool_use', name: b.name, input: b.input, model_tool_use_id: b.id, evaluated_permission: 'allow' });
        continue;
      }
      const route = agent ? routeTool(agent.tools, b.name) : null;
      if (route?.kind === 'custom') {
        batch.push({ type: 'agent.custom_tool_use', name: b.name, input: b.input, model_tool_use_id: b.id });
        continue;
      }
      // web_fetch runs here, on no hand: never addressed to one (a browser tab would claim it).
      const named = typeof b.input.hand === 'string' && b.input.hand.length > 0 && b.name !== WEB_FETCH_TOOL.name ? b.input.hand : undefined;
      const hand = named ?? (isHandTool(b.name) ? (current ?? undefined) : undefined);
      const permission = route === null ? undefined : route.kind === 'toolset' ? route.permission : 'deny';
      batch.push({ type: 'agent.tool_use', name: b.name, input: b.input, model_tool_use_id: b.id, ...(hand ? { hand } : {}), ...(permission ? { evaluated_permission: permission } : {}) });
    }
    batch.push(spanEnd({ is_error: false, model_usage: turn.usage, ttft_ms: turn.ttftMs === null ? null : Math.round(turn.ttftMs * 10) / 10, model_stop_reason: turn.stopReason }));
    // One atomic batch: a crash leaves either the whole turn or none of it. Keyed, so it is retried
    // in place across a store outage: the answer already streamed is kept, not asked for again.
    const ids = batch.map((e) => (e.type === 'agent.message' ? messageId : e.type === 'agent.thinking' ? thinkingId : undefined));
    await this.retryStore(run, sessionId, 'store turn', () => store.emitEvents(sessionId, batch, { fence, idempotencyKey: `turn:${start.id}`, ids }));
  }

  /**
   * Compaction: when the request would be over `trigger` tokens, the model is asked (same prefix,
   * no tools) for a summary, stored as `agent.thread_context_compacted` covering every event so
   * far; requests are then built from it (context-shape.ts). True when it stored one or the step
   * was interrupted; false to go on with the request as it is (under the trigger, or the summary
   * request failed: the turn's own request then meets whatever the model server says).
   */
  private async compact(sessionId: string, fence: Fence, events: readonly StoredEvent[], settings: RequestSettings, trigger: number, run: Run): Promise<boolean> {
    const request = buildContext(events, settings);
    // The calibrated estimate, and near the trigger the model server's own count where it has one.
    let tokens = requestTokens(request) * (settings.tokenScale ?? 1);
    if (tokens > trigger * 0.8 && this.o.model.countTokens) {
      const counted = await this.withStep(run, (signal) => this.o.model.countTokens!(request, signal));
      if (counted instanceof StepAbort) return true;
      if (counted !== null) tokens = counted;
    }
    if (!shouldCompact(tokens, events, trigger)) return false;
    const toSeq = events.at(-1)!.seq;
    let outcome;
    try {
      outcome = await this.withStep(run, (signal) => this.o.model.stream(compactionRequest(request), { signal, onDelta: () => undefined }));
    } catch (e) {
      if (!(e instanceof ModelError)) throw e;
      log.warn('context not compacted: the summary request failed', { session: sessionId, ...errorFields(e) });
      return false;
    }
    if (outcome instanceof StepAbort) return true;
    const summary = outcome.content
      .filter((b): b is Extract<TurnBlock, { type: 'text' }> => b.type === 'text')
      .map((b) => b.text)
      .join('\n')
      .trim();
    if (!summary) return false;
    await this.retryStore(run, sessionId, 'store compaction', () =>
      this.o.store.emitEvent(sessionId, { type: 'agent.thread_context_compacted', summary, from_seq: 1, to_seq: toSeq, model_usage: outcome.usage }, { fence, idempotencyKey: `compact:${toSeq}` }),
    );
    log.info('context compacted', { session: sessionId, to_seq: toSeq, summary_chars: summary.length });
    return true;
  }

  private async modelFailed(sessionId: string, fence: Fence, e: ModelError, attempt: number, end: NewEvent, run: Run): Promise<void> {
    const maxRetries = this.o.maxRetries ?? 4;
    const exhausted = !e.retryable || attempt > maxRetries;
    log.warn('model request failed', { session: sessionId, attempt, status: e.status, retryable: e.retryable });
    if (exhausted) {
      await this.o.store.emitEvents(
        sessionId,
        [
          end,
          { type: 'session.error', error: { type: e.errorType, message: e.message, retry_status: { type: e.retryable ? 'exhausted' : 'terminal' } } },
          { type: 'session.status_idle', stop_reason: { type: 'retries_exhausted' }, stop_details: null },
        ],
        { fence },
      );
      return;
    }
    const base = this.o.retryBaseMs ?? 500;
    const delay = Math.min(30_000, Math.round(base * 2 ** (attempt - 1) * (0.75 + Math.random() * 0.5)));
    await this.o.store.emitEvents(sessionId, [end, { type: 'session.status_rescheduled', attempt, retry_in_ms: delay }], { fence });
    // An interrupt during the back-off ends the wait; the next decide() sees it.
    await this.withStep(run, (signal) => sleep(delay, signal));
  }
}

/** What of its log a session's model sees (its agent's policy; none: all of it). */
function policyOf(agent: SessionAgent | null): ContextPolicy {
  return agent?.context_policy ?? FULL_CONTEXT;
}

/** A call's result event: `agent.mcp_tool_result` for an MCP call, else `agent.tool_result` (on the call's hand). */
function resultOf(call: ToolUse, content: ToolResultContent[], isError: boolean): NewEvent {
  if (call.type === 'agent.mcp_tool_use') return { type: 'agent.mcp_tool_result', mcp_tool_use_id: call.id, content, is_error: isError };
  return { type: 'agent.tool_result', tool_use_id: call.id, content, ...(isError ? { is_error: true } : {}), ...(call.hand ? { hand: call.hand } : {}) };
}

/** An MCP server that refused the credential, or could not be reached or understood: reported, and the session goes on. */
function mcpSessionError(kind: 'authentication' | 'connection' | 'protocol', server: string, message: string): NewEvent {
  return {
    type: 'session.error',
    error: { type: kind === 'authentication' ? 'mcp_authentication_failed_error' : 'mcp_connection_failed_error', message, retry_status: { type: 'exhausted' }, mcp_server_name: server },
  };
}

/** A call its agent does not let run: a disabled or unknown tool, a custom tool, or an unconfirmed ask. */
function refuseUnallowed(tools: readonly AgentTool[], call: ToolUse): void {
  const route = routeTool(tools, call.name);
  switch (route.kind) {
    case 'toolset':
      if (route.permission === 'allow' || call.evaluated_permission === 'ask') return;
      throw new ToolError(`${call.name} needs the user's approval (permission policy always_ask): the call was not run`);
    case 'custom':
      throw new ToolError(`${call.name} is a custom tool, answered by the client: the call was not run`);
    case 'unknown':
      throw new ToolError(`${call.name} is not a tool this agent has enabled: the call was not run`);
    default:
      unreachable(route);
  }
}

/** A finished model request in the metrics: its latencies and its tokens by kind. */
function observeTurn(model: string, turn: { ttftMs: number | null; usage: { input_tokens: number; output_tokens: number; cache_creation_input_tokens?: number | null; cache_read_input_tokens?: number | null } }, seconds: number): void {
  const m = metrics();
  m.modelDuration.observe({ model, outcome: 'ok' }, seconds);
  if (turn.ttftMs !== null) m.ttft.observe({ model }, turn.ttftMs / 1000);
  m.tokens.inc({ kind: 'input' }, turn.usage.input_tokens);
  m.tokens.inc({ kind: 'output' }, turn.usage.output_tokens);
  m.tokens.inc({ kind: 'cache_read' }, turn.usage.cache_read_input_tokens ?? 0);
  m.tokens.inc({ kind: 'cache_write' }, turn.usage.cache_creation_input_tokens ?? 0);
}
