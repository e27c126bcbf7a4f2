/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortReason(signal));
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(abortReason(signal!));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new DOMException('aborted', 'AbortError');
}

/** Exponential back-off for the given attempt (1, 2, …): base·2^(attempt-1), capped, ±25% jitter. */
export function backoffMs(attempt: number, baseMs: number, maxMs: number): number {
  return Math.round(Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1)) * (0.75 + Math.random() * 0.5));
}
