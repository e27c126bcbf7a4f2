/**
 * Group commit: requests that arrive while a batch is being committed wait for it, then go
 * together as the next batch, so many sessions pay for one transaction (one fsync, a handful of
 * statements) instead of one each. `commit` settles each request of a batch on its own (one
 * failing, e.g. a stale fence, leaves the others stored) and resolves only after the whole
 * transaction committed, so an acknowledged request is durable; if it throws, every request of
 * the batch fails with that error.
 */
export type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

export interface GroupCommitOptions {
  /** Most requests in one batch. */
  maxBatch?: number;
  /** Batches committed at once (more than one only where the database runs transactions side by side). */
  concurrency?: number;
}

interface Pending<Req, Res> {
  req: Req;
  resolve: (v: Res) => void;
  reject: (e: unknown) => void;
}

export class GroupCommit<Req, Res> {
  #queue: Pending<Req, Res>[] = [];
  #running = 0;
  readonly #maxBatch: number;
  readonly #concurrency: number;

  constructor(
    private readonly commit: (batch: readonly Req[]) => Promise<readonly Settled<Res>[]>,
    options: GroupCommitOptions = {},
  ) {
    this.#maxBatch = options.maxBatch ?? 256;
    this.#concurrency = options.concurrency ?? 1;
  }

  #scheduled = false;

  submit(req: Req): Promise<Res> {
    return new Promise<Res>((resolve, reject) => {
      this.#queue.push({ req, resolve, reject });
      // Requests made in the same tick go as one batch, even with a batch slot free.
      if (this.#scheduled) return;
      this.#scheduled = true;
      queueMicrotask(() => {
        this.#scheduled = false;
        this.#pump();
      });
    });
  }

  #pump(): void {
    while (this.#running < this.#concurrency && this.#queue.length > 0) {
      const batch = this.#queue.splice(0, this.#maxBatch);
      this.#running++;
      void this.#run(batch).finally(() => {
        this.#running--;
        this.#pump();
      });
    }
  }

  async #run(batch: Pending<Req, Res>[]): Promise<void> {
    let outcomes: readonly Settled<Res>[];
    try {
      outcomes = await this.commit(batch.map((p) => p.req));
    } catch (error) {
      for (const p of batch) p.reject(error);
      return;
    }
    batch.forEach((p, i) => {
      const o = outcomes[i];
      if (!o) p.reject(new Error('group commit: no outcome for a request'));
      else if (o.ok) p.resolve(o.value);
      else p.reject(o.error);
    });
  }
}
