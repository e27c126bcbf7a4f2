import 'server-only';
import type { LiveDelta, StoredEvent } from '~/lib/events';
import type { Runtime } from '~/server/runtime';

export type FollowItem = { kind: 'event'; event: StoredEvent } | { kind: 'delta'; delta: LiveDelta };

/** Merges the durable follow() with this instance's live deltas into one ordered stream. */
export async function* followWithDeltas(rt: Pick<Runtime, 'store' | 'live'>, sessionId: string, afterSeq: number, outer: AbortSignal): AsyncGenerator<FollowItem> {
  // Our own signal: the consumer may stop reading (return()) without aborting the outer one.
  const stop = new AbortController();
  const signal = AbortSignal.any([outer, stop.signal]);
  const queue: FollowItem[] = [];
  let wakeUp: (() => void) | null = null;
  let failure: unknown = null;
  const push = (item: FollowItem) => {
    queue.push(item);
    wakeUp?.();
  };
  const unsubscribe = rt.live.subscribe(sessionId, (delta) => push({ kind: 'delta', delta }));
  const pump = (async () => {
    for await (const event of rt.store.follow(sessionId, afterSeq, signal)) push({ kind: 'event', event });
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
  } finally {
    signal.removeEventListener('abort', onAbort);
    stop.abort();
    unsubscribe();
    await pump;
  }
}
