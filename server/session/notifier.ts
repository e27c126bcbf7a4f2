import type { LiveDelta } from '~/lib/events';

/**
 * Wake-up hints for follow(). A hint says only "session X may have events up to seq N"; readers
 * always re-read the log from their own cursor, so a lost, late or duplicated hint can delay a
 * follower but never make it skip or repeat an event.
 *
 * The in-process notifier suits one server instance (embedded SQLite). A PostgreSQL variant
 * implements the same interface: notify() becomes `pg_notify(channel, 'session_id:seq')` and one
 * LISTEN connection fans the hints out to local subscribers.
 */
export interface Notifier {
  /** Called by the store after a commit that appended events up to `seq`. */
  notify(sessionId: string, seq: number): void;
  /** Calls `onHint` for every hint about the session until the returned function is called. */
  subscribe(sessionId: string, onHint: (seq: number) => void): () => void;
  /** Carries live deltas between server instances; absent where there is only one. */
  readonly relay?: LiveRelay;
}

/**
 * Live deltas (token output, hand progress) of harnesses on other instances: the harness may run
 * on one instance while the browser follows through another. Best effort, like the deltas
 * themselves: a delta lost on the way only means the stored message appears without its preview.
 */
export interface LiveRelay {
  /** Sends a delta of this process to the other instances (not back to this one). */
  publishLive(delta: LiveDelta): void;
  /** Calls `onDelta` for every delta another instance published, until the returned function is called. */
  subscribeLive(onDelta: (delta: LiveDelta) => void): () => void;
}

export class InProcessNotifier implements Notifier {
  readonly #listeners = new Map<string, Set<(seq: number) => void>>();

  notify(sessionId: string, seq: number): void {
    const set = this.#listeners.get(sessionId);
    if (!set) return;
    // Copy: a listener may unsubscribe while we iterate.
    for (const onHint of [...set]) onHint(seq);
  }

  subscribe(sessionId: string, onHint: (seq: number) => void): () => void {
    let set = this.#listeners.get(sessionId);
    if (!set) {
      set = new Set();
      this.#listeners.set(sessionId, set);
    }
    // A wrapper, so the same function subscribed twice is two subscriptions.
    const entry = (seq: number) => onHint(seq);
    set.add(entry);
    return () => {
      const current = this.#listeners.get(sessionId);
      if (!current) return;
      current.delete(entry);
      if (current.size === 0) this.#listeners.delete(sessionId);
    };
  }

  /** Number of sessions with at least one subscriber (for tests and leak checks). */
  get subscribedSessions(): number {
    return this.#listeners.size;
  }

  /** Every session with a subscriber: what a "wake everyone" must hint. */
  sessions(): string[] {
    return [...this.#listeners.keys()];
  }
}

/**
 * A latch over one subscription, for a single waiter in a read-then-wait loop. Subscribe (create
 * it) BEFORE the first read: a hint that arrives while the caller is reading is remembered, so
 * the next wait() returns at once instead of sleeping past it.
 */
export class WakeUp {
  #pending = false;
  #release: (() => void) | null = null;
  readonly #unsubscribe: () => void;

  constructor(notifier: Notifier, sessionId: string) {
    this.#unsubscribe = notifier.subscribe(sessionId, () => {
      if (this.#release) this.#release();
      else this.#pending = true;
    });
  }

  /** Resolves on the next hint (or at once if one came since the last wait), or on abort. */
  wait(signal: AbortSignal): Promise<void> {
    if (this.#pending || signal.aborted) {
      this.#pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const release = () => {
        signal.removeEventListener('abort', release);
        this.#release = null;
        resolve();
      };
      this.#release = release;
      signal.addEventListener('abort', release, { once: true });
    });
  }

  close(): void {
    this.#unsubscribe();
    this.#release?.();
  }
}
