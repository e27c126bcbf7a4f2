import type { NewEvent, SessionErrorObject } from '~/lib/events';

export interface RetryPolicy {
  /** Retries after the first failed attempt before the session gives up (default 4). */
  maxRetries?: number;
  /** The first back-off (default 500 ms); it doubles each attempt, ±25 % jitter, at most 30 s. */
  baseMs?: number;
}

export interface ModelFailure {
  errorType: SessionErrorObject['type'];
  message: string;
  retryable: boolean;
}

/**
 * What a failed model request leaves in the log: its span's end, then either a reschedule with its
 * back-off (wait `retryInMs`, then ask again) or, once retries are spent or the error is not worth
 * retrying, the error and an idle session. `random` is injected so the policy stays a pure table.
 */
export function afterModelFailure(
  e: ModelFailure,
  attempt: number,
  end: NewEvent,
  policy: RetryPolicy,
  random: () => number = Math.random,
): { events: NewEvent[]; retryInMs: number | null } {
  const exhausted = !e.retryable || attempt > (policy.maxRetries ?? 4);
  if (exhausted) {
    return {
      events: [
        end,
        { type: 'session.error', error: { type: e.errorType, message: e.message, retry_status: { type: e.retryable ? 'exhausted' : 'terminal' } } },
        { type: 'session.status_idle', stop_reason: { type: 'retries_exhausted' }, stop_details: null },
      ],
      retryInMs: null,
    };
  }
  const base = policy.baseMs ?? 500;
  const delay = Math.min(30_000, Math.round(base * 2 ** (attempt - 1) * (0.75 + random() * 0.5)));
  return { events: [end, { type: 'session.status_rescheduled', attempt, retry_in_ms: delay }], retryInMs: delay };
}
