import 'server-only';
import { randomUUID } from 'node:crypto';
import type { NewEvent, StoredEvent } from '~/lib/events';
import { isDomainError } from '~/lib/errors';
import { ToolError } from '~/lib/hand';
import { abortReason, sleep } from '~/lib/sleep';
import { BRAIN_TOOLS } from '~/lib/tools';
import { unreachable } from '~/lib/unreachable';
import type { HandRegistry } from '~/server/hands/registry';
import { SYSTEM_PROMPT, buildContext } from '~/server/harness/context';
import { type Action, type ToolUse, decide } from '~/server/harness/decide';
import type { LiveBus } from '~/server/harness/live-bus';
import { ModelError, type ModelClient, type TurnBlock } from '~/server/harness/model-client';
import type { Fence, SessionStore } from '~/server/session/store';
import { errorFields, logger } from '~/server/log';

const log = logger('harness');

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
  /** Identifies this process in lease owners. */
  instanceId?: string;
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
}

/**
 * The brain's loop. Stateless between steps: every step re-derives what to do from the log with
 * the pure `decide()`, so any instance can pick a session up after a crash with `wake()`.
 */
export class Harness {
  private readonly runs = new Map<string, Run>();
  private readonly instanceId: string;
  private closing = false;

  constructor(private readonly o: HarnessOptions) {
    this.instanceId = o.instanceId ?? `h-${process.pid}-${randomUUID().slice(0, 8)}`;
  }

  get model(): ModelClient {
    return this.o.model;
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
      .catch((e: unknown) => log.error('loop failed', { session: sessionId, ...errorFields(e) }))
      .finally(() => {
        this.runs.delete(sessionId);
        if (run.dirty && !this.closing) void this.wake(sessionId);
      });
    this.runs.set(sessionId, run);
    return run.done;
  }

  /** Periodically wakes sessions that need work and have no live lease (e.g. a crashed harness). */
  startSweeper(intervalMs: number): () => void {
    let stopped = false;
    const tick = async () => {
      if (stopped || this.closing) return;
      try {
        const ids = await this.o.store.sessionsNeedingWork(50);
        for (const id of ids) if (!this.runs.has(id)) void this.wake(id);
      } catch (e) {
        log.warn('sweep failed', errorFields(e));
      }
    };
    const timer = setInterval(() => void tick(), intervalMs);
    timer.unref();
    void tick();
    return () => {
      stopped = true;
      clearInterval(timer);
    };
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
    const fence = await store.acquireLease(sessionId, `${this.instanceId}:${randomUUID().slice(0, 8)}`, ttl);
    if (!fence) return; // another harness holds it and will see the new events itself
    const renew = setInterval(() => {
      store.renewLease(fence, ttl).then(
        (ok) => {
          if (!ok) run.loop.abort(new StepAbort('lease_lost'));
        },
        (e: unknown) => log.warn('lease renewal failed', { session: sessionId, ...errorFields(e) }),
      );
    }, Math.max(50, Math.floor(ttl / 3)));
    renew.unref();

    const events: StoredEvent[] = await store.getEvents(sessionId);
    const watcher = this.watchInterrupts(sessionId, events.at(-1)?.seq ?? 0, run);
    try {
      for (;;) {
        if (run.loop.signal.aborted) return;
        run.dirty = false;
        run.seenSeq = events.at(-1)?.seq ?? 0;
        const action = decide(events);
        if (action.kind === 'none') return;
        await this.step(sessionId, fence, action, events, run);
        const lastSeq = events.at(-1)?.seq ?? 0;
        events.push(...(await store.getEvents(sessionId, { from: lastSeq + 1 })));
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
      await store.releaseLease(fence).catch((e: unknown) => log.warn('lease release failed', errorFields(e)));
    }
  }

  /** Follows the log while the loop runs: a user.interrupt aborts the step in flight. */
  private async watchInterrupts(sessionId: string, afterSeq: number, run: Run): Promise<void> {
    try {
      for await (const e of this.o.store.follow(sessionId, afterSeq, run.loop.signal)) {
        run.dirty = true;
        if (e.type !== 'user.interrupt') continue;
        run.interruptSeq = e.seq;
        run.step?.abort(new StepAbort('interrupt'));
      }
    } catch (e) {
      if (!run.loop.signal.aborted) log.warn('interrupt watcher failed', { session: sessionId, ...errorFields(e) });
    }
  }

  private async step(sessionId: string, fence: Fence, action: Exclude<Action, { kind: 'none' }>, events: StoredEvent[], run: Run): Promise<void> {
    const emit = (e: NewEvent, key?: string) => this.o.store.emitEvent(sessionId, e, { fence, ...(key ? { idempotencyKey: key } : {}) });
    switch (action.kind) {
      case 'mark_running':
        await emit({ type: 'session.status_running' });
        return;
      case 'go_idle':
        try {
          // Only if nothing arrived since we decided: a new user.message must not be idled over.
          await this.o.store.emitEvent(
            sessionId,
            { type: 'session.status_idle', stop_reason: action.stop_reason, stop_details: null },
            { fence, expectLastSeq: events.at(-1)?.seq ?? 0 },
          );
        } catch (e) {
          if (!(isDomainError(e) && e.code === 'seq_conflict')) throw e;
        }
        return;
      case 'cancel_tools':
        for (const call of action.calls) {
          await emit(
            { type: 'agent.tool_result', tool_use_id: call.id, is_error: true, content: [{ type: 'text', text: action.reason }], ...(call.hand ? { hand: call.hand } : {}) },
            call.id,
          );
        }
        return;
      case 'run_tools':
        await this.withStep(run, (signal) => this.runTools(sessionId, fence, action.calls, signal));
        return;
      case 'call_model':
        await this.callModel(sessionId, fence, events, action.attempt, run);
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

  private async runTools(sessionId: string, fence: Fence, calls: ToolUse[], signal: AbortSignal): Promise<void> {
    await Promise.all(
      calls.map(async (call) => {
        const handId = call.hand ?? this.o.hands.resolveId(sessionId, call.input.hand);
        let text: string;
        let isError = false;
        try {
          if (!BRAIN_TOOLS.some((t) => t.name === call.name)) throw new ToolError(`unknown tool ${call.name}`);
          const hand = this.o.hands.acquire(sessionId, handId);
          const { hand: _routing, ...input } = call.input;
          text = await hand.execute(call.name, input, { callId: call.id, signal });
        } catch (e) {
          if (signal.aborted) throw abortReason(signal);
          isError = true;
          text = e instanceof Error ? e.message : String(e);
        }
        // Stored once per call, whoever retries it.
        await this.o.store.emitEvent(
          sessionId,
          { type: 'agent.tool_result', tool_use_id: call.id, hand: handId, ...(isError ? { is_error: true } : {}), content: [{ type: 'text', text }] },
          { fence, idempotencyKey: call.id },
        );
      }),
    );
  }

  private async callModel(sessionId: string, fence: Fence, events: StoredEvent[], attempt: number, run: Run): Promise<void> {
    const { store, model, live } = this.o;
    const start = await store.emitEvent(sessionId, { type: 'span.model_request_start', model: model.label }, { fence });
    const request = buildContext(events, { model: model.model, maxTokens: this.o.maxTokens ?? 8192, system: SYSTEM_PROMPT, tools: BRAIN_TOOLS });
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
          onDelta: (d) => live.publish({ ...d, session_id: sessionId, model_request_start_id: start.id }),
        }),
      );
    } catch (e) {
      if (!(e instanceof ModelError)) throw e;
      await this.modelFailed(sessionId, fence, e, attempt, spanEnd({}), run);
      return;
    }
    if (outcome instanceof StepAbort) {
      // Interrupted: close the span; the partial answer is dropped, never half-stored.
      await store.emitEvents(sessionId, [spanEnd({ model_stop_reason: 'interrupted' })], { fence, idempotencyKey: `turn:${start.id}` });
      return;
    }
    const turn = outcome;
    const batch: NewEvent[] = [];
    const thinking = turn.content.filter((b): b is Extract<TurnBlock, { type: 'thinking' }> => b.type === 'thinking');
    if (thinking.length > 0) batch.push({ type: 'agent.thinking', content: thinking });
    const texts = turn.content.filter((b) => b.type === 'text' && b.text.length > 0) as Extract<TurnBlock, { type: 'text' }>[];
    if (texts.length > 0) batch.push({ type: 'agent.message', content: texts.map((t) => ({ type: 'text', text: t.text })) });
    for (const b of turn.content) {
      if (b.type !== 'tool_use') continue;
      batch.push({ type: 'agent.tool_use', name: b.name, input: b.input, model_tool_use_id: b.id, hand: this.o.hands.resolveId(sessionId, b.input.hand) });
    }
    batch.push(spanEnd({ is_error: false, model_usage: turn.usage, ttft_ms: turn.ttftMs === null ? null : Math.round(turn.ttftMs * 10) / 10, model_stop_reason: turn.stopReason }));
    // One atomic batch: a crash leaves either the whole turn or none of it.
    await store.emitEvents(sessionId, batch, { fence, idempotencyKey: `turn:${start.id}` });
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
