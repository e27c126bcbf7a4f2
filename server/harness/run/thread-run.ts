import 'server-only';
import { type SessionAgent, inlineSessionAgent } from '~/lib/agent';
import { isStoreUnavailable } from '~/lib/errors';
import type { NewEvent, StoredEvent } from '~/lib/events';
import { primaryThreadId, threadOf } from '~/lib/threads';
import { USAGE_EVENT_TYPES } from '~/lib/usage';
import { decideFrom } from '~/server/harness/core/decide';
import { type Delegation, type ThreadEntry, asThreadEvent, delegationOf } from '~/server/harness/core/delegation';
import { LogView } from '~/server/harness/log-view';
import type { SessionWriter } from '~/server/harness/run/commit';
import type { StoreRetry } from '~/server/harness/run/store-retry';
import { policyOf } from '~/server/harness/steps/model-turn';
import { runStep } from '~/server/harness/steps/run-step';
import { type Run, StepAbort, withStep } from '~/server/harness/steps/step-abort';
import type { StepContext, StepDeps, StepWriter, ThreadContext } from '~/server/harness/steps/step-context';
import type { SessionStore } from '~/server/session/store';

/** At most this many threads of one session run a step at once (PADDOCK_MAX_RUNNING_THREADS). */
export const DEFAULT_MAX_RUNNING_THREADS = 25;

/** A child thread's writes go through the run's one writer (one fence), its id on each. */
class ThreadWriter implements StepWriter {
  constructor(
    private readonly inner: StepWriter,
    private readonly entry: ThreadEntry,
  ) {}
  get sessionId(): string {
    return this.inner.sessionId;
  }
  #map(events: readonly NewEvent[]): NewEvent[] {
    return events.map((e) => asThreadEvent(e, this.entry));
  }
  keyed(what: string, events: readonly NewEvent[], key: string, ids?: readonly (string | undefined)[]): Promise<StoredEvent[]> {
    return this.inner.keyed(what, this.#map(events), key, ids);
  }
  once(events: readonly NewEvent[]): Promise<StoredEvent[]> {
    return this.inner.once(this.#map(events));
  }
  ifLogEndsAt(lastSeq: number, events: readonly NewEvent[]): Promise<StoredEvent[] | null> {
    return this.inner.ifLogEndsAt(lastSeq, this.#map(events));
  }
  keyedOnce(event: NewEvent, key: string): Promise<StoredEvent> {
    return this.inner.keyedOnce(asThreadEvent(event, this.entry), key);
  }
}

interface ThreadState {
  /** null: the primary thread. */
  entry: ThreadEntry | null;
  view: LogView;
  /** This thread's step, for an interrupt naming it (shares the run's loop signal). */
  run: Run;
  agent: SessionAgent | null;
  looping: Promise<void> | null;
}

export interface ThreadRunOptions {
  store: SessionStore;
  deps: StepDeps;
  retry: StoreRetry;
  sessionId: string;
  run: Run;
  write: SessionWriter;
  epoch: number;
  /** The session's agent (the coordinator). */
  agent: SessionAgent | null;
  maxRunning: number;
}

/**
 * A session with threads, run under the session's one lease: every thread's steps go through the
 * one fenced writer, and each thread decides from its own fold of the one log. A thread's loop is
 * the single-thread loop (decide, step, read what followed); threads loop concurrently, and a step
 * that gives another thread work (a send, a report) starts that thread's loop. The run ends when,
 * read to the end, no thread has anything to do; it returns the seq it settled at.
 */
export class ThreadRun {
  readonly #threads = new Map<string | null, ThreadState>();
  readonly #primaryId: string;
  readonly #delegation: Delegation;
  #changed: () => void = () => undefined;
  #failure: unknown = null;

  constructor(
    private readonly o: ThreadRunOptions,
    primary: LogView,
  ) {
    this.#primaryId = primaryThreadId(o.sessionId);
    this.#delegation = delegationOf(o.agent);
    this.#threads.set(null, { entry: null, view: primary, run: o.run, agent: o.agent, looping: null });
  }

  /** Every child thread from the log so far (read whole once: a child has no checkpoint of its own). */
  async loadChildren(): Promise<void> {
    const { store, sessionId } = this.o;
    const primary = this.#threads.get(null)!;
    const all = await this.o.retry.retry(this.o.run, sessionId, 'read threads', () => store.getEvents(sessionId, { to: primary.view.lastSeq }));
    for (const e of all) if (e.type === 'session.thread_created') this.#addThread(e, all);
  }

  #addThread(created: Extract<StoredEvent, { type: 'session.thread_created' }>, events: readonly StoredEvent[]): void {
    const id = created.session_thread_id;
    if (this.#threads.has(id)) return;
    let agent: SessionAgent | null;
    let entry: ThreadEntry;
    if (created.inline_agent) {
      // An inline agent lives only in the log: rebuilt from its definition on the coordinator's snapshot.
      agent = this.o.agent ? inlineSessionAgent(this.o.agent, created.agent_name, created.inline_agent) : null;
      entry = { id, agentId: '', agentName: created.agent_name, inline: created.inline_agent };
    } else {
      const { roster } = this.#delegation;
      const def = roster.find((a) => a.id === created.agent_id) ?? roster.find((a) => a.name === created.agent_name);
      agent = def ? { ...def, multiagent: null } : null;
      entry = { id, agentId: created.agent_id ?? def?.id ?? '', agentName: created.agent_name };
    }
    // The view starts at the thread's creation: nothing of it comes before.
    const view = LogView.forThread([], policyOf(agent), id, created.seq - 1);
    view.append(events.filter((e) => e.seq >= created.seq));
    const run: Run = { dirty: false, done: Promise.resolve(), loop: this.o.run.loop, step: null, seenSeq: 0, interruptSeq: 0 };
    this.#threads.set(id, { entry, view, run, agent, looping: null });
  }

  get threads(): ThreadEntry[] {
    return [...this.#threads.values()].flatMap((t) => (t.entry ? [t.entry] : []));
  }

  /**
   * An event the watcher saw: idle threads read it (an answer, a message may give one work while
   * another's step runs on), and an interrupt cuts short its thread's step (none named: the primary's).
   */
  seen(e: StoredEvent): void {
    this.#changed();
    if (e.type !== 'user.interrupt') return;
    const t = this.#threads.get(threadOf(e));
    if (!t) return;
    t.run.interruptSeq = e.seq;
    t.run.step?.abort(new StepAbort('interrupt'));
  }

  #context(t: ThreadState): StepContext {
    const { o } = this;
    const thread: ThreadContext = { primaryId: this.#primaryId, entry: t.entry, delegation: t.entry ? { roster: [], inlineAgents: false } : this.#delegation, threads: () => this.threads };
    return {
      sessionId: o.sessionId,
      view: t.view,
      write: t.entry ? new ThreadWriter(o.write, t.entry) : o.write,
      deps: o.deps,
      epoch: o.epoch,
      loopSignal: o.run.loop.signal,
      agent: () => Promise.resolve(t.agent),
      // One budget for every thread: the session's, against all its threads' usage.
      budget: () => o.store.getSession(o.sessionId).then((s) => s?.budget ?? null),
      usageEvents: () => o.store.getEvents(o.sessionId, { types: USAGE_EVENT_TYPES }),
      interruptible: (fn) => withStep(t.run, fn),
      read: (what, fn) => o.retry.retry(o.run, o.sessionId, what, fn),
      readLog: (to) => o.store.getEvents(o.sessionId, { to }),
      thread,
    };
  }

  /** Reads what follows a view's end into it; new threads found on the way get views of their own. */
  async #catchUp(t: ThreadState): Promise<void> {
    const { store, sessionId } = this.o;
    const events = await store.getEvents(sessionId, { from: t.view.lastSeq + 1 });
    t.view.append(events);
    t.run.seenSeq = t.view.lastSeq;
    for (const e of events) if (e.type === 'session.thread_created') this.#addThread(e, events);
  }

  async #loop(t: ThreadState): Promise<void> {
    for (let failures = 0; ; ) {
      if (this.o.run.loop.signal.aborted) return;
      try {
        await this.#catchUp(t);
        const action = this.#next(t);
        if (action.kind === 'none') return;
        await runStep(this.#context(t), action);
        failures = 0;
        this.#changed();
      } catch (e) {
        if (!isStoreUnavailable(e)) throw e;
        // As in the single-thread loop: whether the last write landed is unknown; the next read tells.
        await this.o.retry.backoff(this.o.run, this.o.sessionId, 'thread step', ++failures, e);
      }
    }
  }

  /**
   * What a thread does next. The primary ends its turn only once no child is at work: its idle is
   * the session's (the work queue takes a log ending in it as settled), and a report to come wakes
   * it anyway.
   */
  #next(t: ThreadState): ReturnType<typeof decideFrom> {
    const action = decideFrom(t.view.fold.state());
    if (t.entry === null && action.kind === 'go_idle' && action.stop_reason.type === 'end_turn' && this.#childAtWork()) return { kind: 'none' };
    return action;
  }

  #childAtWork(): boolean {
    return [...this.#threads.values()].some((c) => c.entry !== null && (c.looping !== null || decideFrom(c.view.fold.state()).kind !== 'none'));
  }

  #running(): number {
    return [...this.#threads.values()].filter((t) => t.looping && t.entry).length;
  }

  /** Starts the loop of every thread with work and none running (children: at most `maxRunning` at once). */
  #kick(): void {
    for (const t of this.#threads.values()) {
      if (t.looping) continue;
      if (this.#next(t).kind === 'none') continue;
      if (t.entry && this.#running() >= this.o.maxRunning) continue;
      t.looping = this.#loop(t)
        .catch((e: unknown) => {
          this.#failure ??= e;
          this.o.run.loop.abort(e instanceof StepAbort ? e : new StepAbort('closing'));
        })
        .finally(() => {
          t.looping = null;
          this.#changed();
        });
    }
  }

  /** Runs every thread until none has work; the seq the whole log settled at (undefined: stopped early). */
  async run(): Promise<number | undefined> {
    const { run } = this.o;
    for (;;) {
      if (run.loop.signal.aborted) break;
      const changed = new Promise<void>((resolve) => {
        this.#changed = resolve;
      });
      run.dirty = false;
      // Idle threads read what the others wrote: a message to one gives it work.
      for (const t of this.#threads.values()) if (!t.looping) await this.o.retry.retry(run, this.o.sessionId, 'read log', () => this.#catchUp(t));
      this.#kick();
      if (![...this.#threads.values()].some((t) => t.looping !== null)) {
        run.seenSeq = this.#threads.get(null)!.view.lastSeq;
        return run.seenSeq;
      }
      await changed;
    }
    await Promise.allSettled([...this.#threads.values()].flatMap((t) => (t.looping ? [t.looping] : [])));
    // A thread's failure (a stale fence, a fault) ends the run as it would a single-thread one.
    const failure = this.#failure;
    if (failure) throw failure instanceof Error ? failure : new Error('a thread failed');
    return undefined;
  }
}
