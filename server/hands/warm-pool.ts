import 'server-only';
import type { Hand } from '~/lib/hand';
import type { ProvisionSpec, Provisioner, SandboxSpec } from '~/server/hands/provisioner';
import { errorFields, logger } from '~/server/log';

const log = logger('hands.pool');

/**
 * Pre-started sandbox hands with the default policy, so a session's first tool call waits
 * milliseconds instead of a process start. A pooled hand is fresh (its own new workspace) and
 * is handed out once: it is never returned to the pool or shared across sessions.
 */
export class WarmPool {
  private readonly ready: Hand[] = [];
  private starting = 0;
  private closed = false;
  private seq = 0;

  constructor(
    private readonly provisioner: Provisioner,
    private readonly spec: SandboxSpec,
    private readonly size: number,
  ) {}

  /** Fills the pool in the background. */
  start(): this {
    this.refill();
    return this;
  }

  get available(): number {
    return this.ready.length;
  }

  /** A ready hand for this spec, or null (then the caller provisions one itself). */
  take(spec: ProvisionSpec): Hand | null {
    // Pooled hands have the default policy and no resource limits: anything else starts fresh.
    if (spec.kind !== this.spec.kind || spec.resources || !sameDomains(spec.allowedDomains, this.spec.allowedDomains)) return null;
    const hand = this.ready.shift() ?? null;
    this.refill();
    return hand;
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled(this.ready.splice(0).map((h) => h.close()));
  }

  private refill(): void {
    while (!this.closed && this.ready.length + this.starting < this.size) {
      this.starting += 1;
      const id = `pool-${++this.seq}`;
      this.provisioner
        .provision(id, this.spec, { signal: new AbortController().signal })
        .then(
          (hand) => {
            if (this.closed) return void hand.close();
            this.ready.push(hand);
            // A pooled hand that dies while waiting is dropped, not handed out.
            void hand.lost.then(() => {
              const i = this.ready.indexOf(hand);
              if (i >= 0) this.ready.splice(i, 1);
              this.refill();
            });
          },
          (e: unknown) => log.warn('warm pool could not start a hand', errorFields(e)),
        )
        .finally(() => {
          this.starting -= 1;
        });
    }
  }
}

function sameDomains(a: readonly string[] = [], b: readonly string[] = []): boolean {
  return a.length === b.length && [...a].sort().join(',') === [...b].sort().join(',');
}
