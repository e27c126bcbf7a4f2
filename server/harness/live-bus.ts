import type { LiveDelta } from '~/lib/events';

/**
 * Ephemeral token-by-token output for live subscribers on this instance. Never stored: the
 * finished `agent.message` is. A subscriber that misses deltas still gets the stored message.
 */
export class LiveBus {
  private readonly listeners = new Map<string, Set<(d: LiveDelta) => void>>();

  publish(delta: LiveDelta): void {
    for (const fn of this.listeners.get(delta.session_id) ?? []) fn(delta);
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
}
