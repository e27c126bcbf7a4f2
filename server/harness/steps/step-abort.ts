import 'server-only';
import type { SessionAgent } from '~/lib/agent';

/** Why a step was cut short: the user interrupted, the lease was lost, or the harness is closing. */
export class StepAbort extends Error {
  constructor(readonly why: 'interrupt' | 'lease_lost' | 'closing') {
    super(`step aborted: ${why}`);
    this.name = 'StepAbort';
  }
}

/** One session's run on this instance: from the lease acquired to its release. */
export interface Run {
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

export function newRun(): Run {
  return { dirty: false, done: Promise.resolve(), loop: new AbortController(), step: null, seenSeq: 0, interruptSeq: 0 };
}

/**
 * Runs `fn` as the run's interruptible step: an interrupt aborts it and resolves with the
 * StepAbort; the loop ending (lease lost, closing) rejects with it.
 */
export async function withStep<T>(run: Run, fn: (signal: AbortSignal) => Promise<T>): Promise<T | StepAbort> {
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
