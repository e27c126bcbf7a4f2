import 'server-only';
import { type StoreUnavailableError, isStoreUnavailable } from '~/lib/errors';
import { backoffMs, sleep } from '~/lib/sleep';
import { logger } from '~/server/log';
import { metrics } from '~/server/metrics/metrics';
import type { Run } from '~/server/harness/steps/step-abort';

const log = logger('harness');

export interface StoreRetryOptions {
  /** Back-off while the session store is unreachable: first wait, and the longest (default 200 ms, 5 s). */
  baseMs?: number;
  maxMs?: number;
}

/** The harness's one rule for a store that does not answer: wait, with back-off, and try again. */
export class StoreRetry {
  #count = 0;
  constructor(private readonly o: StoreRetryOptions) {}

  /** How many times a step, read or write was retried because the store was unreachable. */
  get count(): number {
    return this.#count;
  }

  delayMs(attempt: number): number {
    return backoffMs(attempt, this.o.baseMs ?? 200, this.o.maxMs ?? 5_000);
  }

  /**
   * Runs a store call until the store answers: only for calls that are safe to repeat (reads,
   * idempotency-keyed appends, the lease acquire). Ends with the loop (StepAbort) or any other error.
   */
  async retry<T>(run: Run, sessionId: string, what: string, fn: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn();
      } catch (e) {
        if (!isStoreUnavailable(e)) throw e;
        await this.backoff(run, sessionId, what, attempt, e);
      }
    }
  }

  /** Counts and logs one retry, then waits (rejects with the loop's StepAbort if it ends meanwhile). */
  async backoff(run: Run, sessionId: string, what: string, attempt: number, e: StoreUnavailableError): Promise<void> {
    this.#count++;
    metrics().storeErrors.inc({ operation: what });
    const delay = this.delayMs(attempt);
    const fields = { session: sessionId, what, attempt, retryInMs: delay, detail: e.detail };
    if (attempt === 1) log.warn('session store unreachable; retrying', fields);
    else log.debug('session store still unreachable', fields);
    await sleep(delay, run.loop.signal);
  }
}
