import 'client-only';

/** Callbacks an engine calls back (files changed): one listener's failure never stops the rest. */
export class Listeners {
  private readonly set = new Set<() => void>();

  add(cb: () => void): () => void {
    this.set.add(cb);
    return () => this.set.delete(cb);
  }

  emit(): void {
    for (const cb of [...this.set]) {
      try {
        cb();
      } catch {
        // a listener's failure is its own
      }
    }
  }

  clear(): void {
    this.set.clear();
  }
}
