import type { LiveDelta } from '~/lib/events';
import type { LiveRelay } from '~/server/session/notifier';

/**
 * Ephemeral token-by-token output for live subscribers. Never stored: the finished
 * `agent.message` is. A subscriber that misses deltas still gets the stored message.
 *
 * With a relay (several instances on PostgreSQL) deltas published here also reach subscribers on
 * the other instances, and theirs reach ours: the harness and the browser's follow need not be
 * on the same instance.
 */
export class LiveBus {
  private readonly listeners = new Map<string, Set<(d: LiveDelta) => void>>();
  private readonly relay: LiveRelay | undefined;

  constructor(relay?: LiveRelay) {
    this.relay = relay;
    relay?.subscribeLive((d) => this.deliver(d));
  }

  publish(delta: LiveDelta): void {
    this.deliver(delta);
    this.relay?.publishLive(delta);
  }

  subscribe(sessionId: string, fn: (d: LiveDelta) => void): () => void {
    let set = this.listeners.get(sessionId);
    if (!set) this.listeners.set(sessionId, (set = new Set()));
    set.add(fn);
    return () => {
      set.delete(fn);
      if (set.size === 0) this.listeners.delete(sessionId);
    };
  }

  private deliver(delta: LiveDelta): void {
    for (const fn of this.listeners.get(delta.session_id) ?? []) fn(delta);
  }
}
