/**
 * Group commit: appends that arrive while a commit is on disk wait for it, then share the next
 * transaction, so many sessions pay for one fsync instead of one each. Each piece of work runs
 * inside its own savepoint: one failing (stale fence, bad seq) rolls back only itself. A promise
 * resolves only after the whole transaction committed, so an acknowledged append is durable.
 */
export interface SavepointOps<Tx> {
  begin(tx: Tx): Promise<void>;
  release(tx: Tx): Promise<void>;
  rollback(tx: Tx): Promise<void>;
}

type Work<Tx> = (tx: Tx) => Promise<unknown>;
interface Pending<Tx> {
  work: Work<Tx>;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

export class GroupCommit<Tx> {
  private queue: Pending<Tx>[] = [];
  private flushing = false;

  constructor(
    private readonly transaction: (fn: (tx: Tx) => Promise<void>) => Promise<void>,
    private readonly savepoint: SavepointOps<Tx>,
    private readonly maxBatch = 256,
  ) {}

  submit<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (v: unknown) => void, reject });
      if (!this.flushing) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch);
        const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
        try {
          await this.transaction(async (tx) => {
            for (const p of batch) {
              // A lone piece of work needs no savepoint: its failure aborts the transaction.
              if (batch.length === 1) {
                outcomes.push({ ok: true, value: await p.work(tx) });
                continue;
              }
              await this.savepoint.begin(tx);
              try {
                const value = await p.work(tx);
                await this.savepoint.release(tx);
                outcomes.push({ ok: true, value });
              } catch (error) {
                await this.savepoint.rollback(tx);
                outcomes.push({ ok: false, error });
              }
            }
          });
        } catch (error) {
          // The commit itself failed (or the lone work threw): nothing in the batch is stored.
          for (const p of batch) p.reject(error);
          continue;
        }
        batch.forEach((p, i) => {
          const o = outcomes[i]!;
          if (o.ok) p.resolve(o.value);
          else p.reject(o.error);
        });
      }
    } finally {
      this.flushing = false;
    }
  }
}
