import 'server-only';
import { logger } from '~/server/log';
import { metrics } from '~/server/metrics/metrics';
import type { Leases, TabClaims } from '~/server/session/store';
import { startTicker } from '~/server/ticker';

const log = logger('harness');
/** How often the sweeper prunes the store's rows of ended hands and answered calls. */
const PRUNE_EVERY_MS = 60_000;

export interface SweeperHost {
  store: Pick<Leases, 'sessionsNeedingWork'> & Pick<TabClaims, 'pruneHandRows'>;
  /** Whether this instance runs the session now. */
  isRunning(sessionId: string): boolean;
  wake(sessionId: string): void;
  closing(): boolean;
}

/** Periodically wakes sessions that need work and have no live lease (e.g. a crashed harness). */
export function startSweeper(host: SweeperHost, intervalMs: number): () => void {
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
      const pruned = await host.store.pruneHandRows();
      if (pruned.tabs + pruned.claims > 0) log.debug('pruned hand rows', pruned);
    }
    const waiting = await host.store.sessionsNeedingWork(50);
    const seen = unclaimed;
    unclaimed = new Set(waiting.filter((w) => !w.leaseExpired).map((w) => w.id));
    for (const { id, leaseExpired } of waiting) {
      if (host.isRunning(id) || !(leaseExpired || seen.has(id))) continue;
      // A lease that lapsed: its harness died or stopped, and this one takes the session over.
      if (leaseExpired) metrics().takeovers.inc();
      host.wake(id);
    }
  };
  // During an outage the sweeper keeps ticking and re-wakes sessions when it ends.
  return startTicker({ name: 'sweep', log, intervalMs, tick, paused: () => host.closing(), runNow: true });
}
