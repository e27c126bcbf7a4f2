import 'server-only';
import type { NewEvent, StoredEvent } from '~/lib/events';
import { isDomainError } from '~/lib/errors';
import type { StepWriter } from '~/server/harness/steps/step-context';
import type { Run } from '~/server/harness/steps/step-abort';
import type { StoreRetry } from '~/server/harness/run/store-retry';
import type { EventLog, Fence } from '~/server/session/store';

/**
 * The one way a run writes its session's log. Every write carries the run's fence (a harness
 * that lost its lease is refused). A keyed write is stored once whoever repeats it, so it is
 * retried across a store outage until it lands; an unkeyed one is tried once (a repeat could
 * store it twice), and a store failure goes up to the loop, which re-reads the log.
 */
export class SessionWriter implements StepWriter {
  constructor(
    private readonly store: Pick<EventLog, 'emitEvent' | 'emitEvents'>,
    readonly sessionId: string,
    readonly fence: Fence,
    private readonly retry: StoreRetry,
    private readonly run: Run,
  ) {}

  /** Stored once under `key`, retried until the store answers. `ids`: the ids to store events under. */
  keyed(what: string, events: readonly NewEvent[], key: string, ids?: readonly (string | undefined)[]): Promise<StoredEvent[]> {
    return this.retry.retry(this.run, this.sessionId, what, () => this.store.emitEvents(this.sessionId, events, { fence: this.fence, idempotencyKey: key, ...(ids ? { ids } : {}) }));
  }

  /** One try, unkeyed. */
  once(events: readonly NewEvent[]): Promise<StoredEvent[]> {
    return this.store.emitEvents(this.sessionId, events, { fence: this.fence });
  }

  /**
   * One try, unkeyed, and only if the log still ends at `lastSeq`: null when something else was
   * appended since (the caller re-reads the log and decides again).
   */
  async ifLogEndsAt(lastSeq: number, events: readonly NewEvent[]): Promise<StoredEvent[] | null> {
    try {
      return await this.store.emitEvents(this.sessionId, events, { fence: this.fence, expectLastSeq: lastSeq });
    } catch (e) {
      if (isDomainError(e) && e.code === 'seq_conflict') return null;
      throw e;
    }
  }

  /** Keyed, one try: a failure goes up to whoever decides again (the loop, or a hand's registry). */
  keyedOnce(event: NewEvent, key: string): Promise<StoredEvent> {
    return this.store.emitEvent(this.sessionId, event, { fence: this.fence, idempotencyKey: key });
  }
}
