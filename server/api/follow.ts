import 'server-only';
import { NotFoundError, isStoreUnavailable } from '~/lib/errors';
import type { LiveDelta, StoredEvent } from '~/lib/events';
import { backoffMs, sleep } from '~/lib/sleep';
import { logger } from '~/server/log';
import type { Runtime } from '~/server/runtime';
import { RESTARTING_MESSAGE, stoppingSignal } from '~/server/shutdown';

const log = logger('follow');

/**
 * `store` says whether the session store answers: available once the follow has started, then
 * false (with the message to show) when it becomes unreachable and true again when it is back.
 * The stream itself stays open across an outage.
 */
export type FollowItem =
  | { kind: 'event'; event: StoredEvent }
  | { kind: 'delta'; delta: LiveDelta }
  | { kind: 'store'; available: boolean; message: string | null }
  /** The last item before the stream ends because this server is stopping: follow again (it retries until a server answers). */
  | { kind: 'restarting'; message: string };

/** Retry pace while the store is unreachable: soon after a blip, at most every few seconds. */
const RETRY_BASE_MS = 100;
const RETRY_MAX_MS = 2_000;

/**
 * Merges the durable follow() with this instance's live deltas into one ordered stream. While the
 * store is unreachable it reports so (kind `store`), keeps retrying from its cursor, and reports
 * the store back once a read succeeds: no gap, no duplicate, and the client knows why it waits.
 */
export async function* followWithDeltas(rt: Pick<Runtime, 'store' | 'live'>, sessionId: string, afterSeq: number, outer: AbortSignal): AsyncGenerator<FollowItem> {
  // Our own signal: the consumer may stop reading (return()) without aborting the outer one.
  const stop = new AbortController();
  const stopping = stoppingSignal();
  const signal = AbortSignal.any([outer, stop.signal, stopping]);
  const queue: FollowItem[] = [];
  let wakeUp: (() => void) | null = null;
  let failure: unknown = null;
  const push = (item: FollowItem) => {
    queue.push(item);
    wakeUp?.();
  };
  const unsubscribe = rt.live.subscribe(sessionId, (delta) => push({ kind: 'delta', delta }));
  const pump = (async () => {
    let cursor = afterSeq;
    let down = false;
    for (let attempt = 1; !signal.aborted; attempt++) {
      try {
        // A read that succeeds says the store answers (even with no event waiting): the client
        // learns the follow is healthy at the start and again after every outage.
        if (!(await rt.store.getSession(sessionId))) throw new NotFoundError('session', sessionId);
        if (down) log.info('store reachable again; following', { session: sessionId, afterSeq: cursor });
        down = false;
        attempt = 0;
        push({ kind: 'store', available: true, message: null });
        for await (const event of rt.store.follow(sessionId, cursor, signal)) {
          cursor = event.seq;
          push({ kind: 'event', event });
        }
        return;
      } catch (e) {
        if (!isStoreUnavailable(e) || signal.aborted) throw e;
        if (!down) {
          down = true;
          log.warn('store unreachable; follow retrying', { session: sessionId, afterSeq: cursor, detail: e.detail });
          push({ kind: 'store', available: false, message: e.message });
        }
        await sleep(backoffMs(attempt, RETRY_BASE_MS, RETRY_MAX_MS), signal).catch(() => undefined);
      }
    }
  })().catch((e: unknown) => {
    failure = e;
    wakeUp?.();
  });
  const onAbort = () => wakeUp?.();
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    while (!signal.aborted) {
      const next = queue.shift();
      if (next) {
        yield next;
        continue;
      }
      if (failure) throw failure instanceof Error ? failure : new Error('follow failed', { cause: failure });
      await new Promise<void>((resolve) => {
        wakeUp = resolve;
      });
      wakeUp = null;
    }
    if (stopping.aborted && !outer.aborted) yield { kind: 'restarting', message: RESTARTING_MESSAGE };
  } finally {
    signal.removeEventListener('abort', onAbort);
    stop.abort();
    unsubscribe();
    await pump;
  }
}
