import 'server-only';
import { randomUUID } from 'node:crypto';
import type { SessionAgent } from '~/lib/agent';
import { isDomainError, isStoreUnavailable } from '~/lib/errors';
import { sleep } from '~/lib/sleep';
import { USAGE_EVENT_TYPES } from '~/lib/usage';
import { decideFrom } from '~/server/harness/core/decide';
import { LogView } from '~/server/harness/log-view';
import { SessionWriter } from '~/server/harness/run/commit';
import { runsThreads } from '~/server/harness/core/delegation';
import { DEFAULT_MAX_RUNNING_THREADS, ThreadRun } from '~/server/harness/run/thread-run';
import type { StoreRetry } from '~/server/harness/run/store-retry';
import { policyOf } from '~/server/harness/steps/model-turn';
import { runStep } from '~/server/harness/steps/run-step';
import { type Run, StepAbort, withStep } from '~/server/harness/steps/step-abort';
import type { StepContext, StepDeps } from '~/server/harness/steps/step-context';
import { errorFields, logger } from '~/server/log';
import type { Fence, SessionStore } from '~/server/session/store';
import type { StoredEvent } from '~/lib/events';

const log = logger('harness');

export interface SessionRunOptions {
  store: SessionStore;
  deps: StepDeps;
  retry: StoreRetry;
  instanceId: string;
  leaseTtlMs: number;
  /** At most this many child threads of one session step at once (PADDOCK_MAX_RUNNING_THREADS). */
  maxRunningThreads?: number;
}

/**
 * One session's run on this instance: take the lease (renewed while the run lasts), load the log
 * view, then decide() and do one step at a time until nothing is left to do; an interrupt
 * watcher follows the log meanwhile. Release the lease (with where the log settled) at the end.
 */
export async function runSession(o: SessionRunOptions, sessionId: string, run: Run): Promise<void> {
  const { store, retry } = o;
  const ttl = o.leaseTtlMs;
  let fence: Fence | null;
  try {
    // Nothing is held yet, so the acquire itself is retried. If an acquire committed but its
    // answer was lost, the retry finds the lease taken and returns null: the sweeper wakes the
    // session again once that lease expires.
    fence = await retry.retry(run, sessionId, 'acquire lease', () => store.acquireLease(sessionId, `${o.instanceId}:${randomUUID().slice(0, 8)}`, ttl));
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

  const write = new SessionWriter(store, sessionId, held, retry, run);
  const agent = () => sessionAgent(store, sessionId, run);
  const context = (view: LogView): StepContext => ({
    sessionId,
    view,
    write,
    deps: o.deps,
    epoch: held.epoch,
    loopSignal: run.loop.signal,
    agent,
    budget: () => store.getSession(sessionId).then((s) => s?.budget ?? null),
    usageEvents: () => store.getEvents(sessionId, { types: USAGE_EVENT_TYPES }),
    interruptible: (fn) => withStep(run, fn),
    read: (what, fn) => retry.retry(run, sessionId, what, fn),
    readLog: (to) => store.getEvents(sessionId, { to }),
  });

  // Set when the log, as last read, needs nothing: the release records it, so sweepers stop
  // waking a session whose log ends in something that asks for nothing (an interrupt to an
  // idle session).
  let settledSeq: number | undefined;
  let watcher: Promise<void> = Promise.resolve();
  let view: LogView | null = null;
  // The newest checkpoint and what follows it, plus what a request may show: not the whole log.
  const load = () => retry.retry(run, sessionId, 'read log', () => LogView.load(store, sessionId, agent().then(policyOf)));
  try {
    view = await load();
    // A session that delegates (a roster, or inline agents) runs its threads concurrently under this one lease (thread-run.ts).
    const coordinator = await retry.retry(run, sessionId, 'read agent', agent);
    if (runsThreads(coordinator)) {
      const threads = new ThreadRun({ store, deps: o.deps, retry, sessionId, run, write, epoch: held.epoch, agent: coordinator, maxRunning: o.maxRunningThreads ?? DEFAULT_MAX_RUNNING_THREADS }, view);
      await threads.loadChildren();
      watcher = watchInterrupts(o, sessionId, view.lastSeq, run, (e) => threads.seen(e));
      settledSeq = await threads.run();
      return;
    }
    watcher = watchInterrupts(o, sessionId, view.lastSeq, run);
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
        await runStep(context(view), action);
        view.append(await store.getEvents(sessionId, { from: view.lastSeq + 1 }));
        void checkpoint(store, sessionId, view, false);
        failures = 0;
      } catch (e) {
        if (!isStoreUnavailable(e)) throw e;
        // Whether the step's last write landed is unknown (the connection may have dropped
        // mid-commit): wait, then re-derive everything from the log, as a new harness would.
        await retry.backoff(run, sessionId, 'step', ++failures, e);
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
    if (view) await checkpoint(store, sessionId, view, true);
    await store.releaseLease(held, settledSeq).catch((e: unknown) => log.warn('lease release failed', errorFields(e)));
  }
}

/** A session runs the agent version it was created with; null: the built-in default. A failed read is tried again by the next step. */
function sessionAgent(store: SessionStore, sessionId: string, run: Run): Promise<SessionAgent | null> {
  if (!run.agent) {
    const read = store.getSession(sessionId).then((s) => s?.agent ?? null);
    read.catch(() => {
      if (run.agent === read) run.agent = undefined;
    });
    run.agent = read;
  }
  return run.agent;
}

/**
 * Stores the view's fold when due (every CHECKPOINT_EVERY events, and at the end of a run), so
 * the next wake reads from there. Best effort: a checkpoint not stored only means a longer read.
 */
async function checkpoint(store: SessionStore, sessionId: string, view: LogView, force: boolean): Promise<void> {
  const due = view.dueCheckpoint(force);
  if (!due) return;
  view.checkpointSeq = due.seq;
  await store.writeCheckpoint(sessionId, due).catch((e: unknown) => log.debug('checkpoint not stored', { session: sessionId, seq: due.seq, ...errorFields(e) }));
}

/**
 * Follows the log while the loop runs: a user.interrupt aborts the step in flight. Across a
 * store outage it resumes from the last event it saw.
 */
async function watchInterrupts(o: SessionRunOptions, sessionId: string, afterSeq: number, run: Run, onEvent?: (e: StoredEvent) => void): Promise<void> {
  let cursor = afterSeq;
  for (let attempt = 1; !run.loop.signal.aborted; attempt++) {
    try {
      for await (const e of o.store.follow(sessionId, cursor, run.loop.signal)) {
        cursor = e.seq;
        attempt = 0;
        run.dirty = true;
        // With threads, every event may give an idle thread work, and an interrupt stops the thread it names.
        if (onEvent) {
          onEvent(e);
          continue;
        }
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
      await sleep(o.retry.delayMs(attempt), run.loop.signal).catch(() => undefined);
    }
  }
}
