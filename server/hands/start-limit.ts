import 'server-only';
import type { ProvisionOptions, Provisioner } from '~/server/hands/provisioner';
import { abortReason } from '~/lib/sleep';

interface Waiter {
  start: () => void;
  signal: AbortSignal;
  onAbort: () => void;
}

/**
 * At most `concurrency` hands starting at once, first come first served, and a session waiting
 * for a hand before any warm-pool refill (`background`). A start is mostly CPU (two Node processes
 * booting, the sandbox set up): run all at once on a small machine, twenty starts each take as long
 * as all twenty together; in turn, the first session gets its hand after one start's time.
 * Resumes and re-attachments go through the same gate.
 */
export function limitStarts(inner: Provisioner, concurrency: number): Provisioner {
  let running = 0;
  const foreground: Waiter[] = [];
  const background: Waiter[] = [];

  const next = () => {
    while (running < concurrency) {
      const w = foreground.shift() ?? background.shift();
      if (!w) return;
      w.signal.removeEventListener('abort', w.onAbort);
      running++;
      w.start();
    }
  };

  const slot = (opts: ProvisionOptions): Promise<void> => {
    opts.signal.throwIfAborted();
    if (running < concurrency && foreground.length === 0 && (opts.background || background.length === 0)) {
      running++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const queue = opts.background ? background : foreground;
      const w: Waiter = {
        start: resolve,
        signal: opts.signal,
        onAbort: () => {
          queue.splice(queue.indexOf(w), 1);
          reject(abortReason(opts.signal));
        },
      };
      opts.signal.addEventListener('abort', w.onAbort, { once: true });
      queue.push(w);
      opts.onProgress?.('starting', `waiting for a turn to start (${running} hands starting)`);
    });
  };

  return {
    async provision(handId, spec, opts) {
      await slot(opts);
      try {
        return await inner.provision(handId, spec, opts);
      } finally {
        running--;
        next();
      }
    },
  };
}
