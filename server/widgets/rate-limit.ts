/**
 * Sliding-window counters in this process's memory: how many times a key acted in the last
 * window. Per instance: behind a load balancer each instance counts its own share (the limits
 * then hold per instance; the hourly session cap is counted in the database, so it holds for all).
 */
export class SlidingWindow {
  readonly #hits = new Map<string, number[]>();
  #lastSweep = 0;

  constructor(
    private readonly windowMs: number,
    /** Keys tracked at most (oldest forgotten first): memory stays bounded under a flood of addresses. */
    private readonly maxKeys = 100_000,
  ) {}

  /** Counts a hit for `key` unless it already had `limit` in the window; false when refused (nothing counted). */
  take(key: string, limit: number, now = Date.now()): boolean {
    this.#sweep(now);
    const since = now - this.windowMs;
    const hits = (this.#hits.get(key) ?? []).filter((t) => t > since);
    if (hits.length >= limit) {
      this.#hits.set(key, hits);
      return false;
    }
    hits.push(now);
    this.#hits.delete(key);
    this.#hits.set(key, hits);
    while (this.#hits.size > this.maxKeys) this.#hits.delete(this.#hits.keys().next().value!);
    return true;
  }

  /** Whether `key` could act now (nothing counted). */
  allows(key: string, limit: number, now = Date.now()): boolean {
    const since = now - this.windowMs;
    return (this.#hits.get(key) ?? []).filter((t) => t > since).length < limit;
  }

  #sweep(now: number): void {
    if (now - this.#lastSweep < this.windowMs) return;
    this.#lastSweep = now;
    const since = now - this.windowMs;
    for (const [k, hits] of this.#hits) if (!hits.some((t) => t > since)) this.#hits.delete(k);
  }
}
