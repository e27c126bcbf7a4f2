/**
 * Domain errors: thrown by the store and harness, mapped to HTTP/tRPC codes only at the edge.
 * Each carries a stable `code` so callers can branch without instanceof across module copies.
 */
export type DomainErrorCode = 'not_found' | 'invalid_input' | 'forbidden' | 'precondition_failed' | 'stale_fence' | 'seq_conflict' | 'conflict' | 'too_large' | 'store_unavailable';

export class DomainError extends Error {
  constructor(
    readonly code: DomainErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export class NotFoundError extends DomainError {
  constructor(what: string, id: string) {
    super('not_found', `${what} ${id} not found`);
  }
}

export class InvalidInputError extends DomainError {
  constructor(message: string) {
    super('invalid_input', message);
  }
}

/** A caller who may see the session but not do or see this (a share link's viewer, say). */
export class ForbiddenError extends DomainError {
  constructor(message: string) {
    super('forbidden', message);
  }
}

/** Right request, wrong moment: what it needs is not there now (a hand that is not running). */
export class PreconditionError extends DomainError {
  constructor(message: string) {
    super('precondition_failed', message);
  }
}

/** Input over a configured limit; the message names the limit and its setting. */
export class TooLargeError extends DomainError {
  constructor(message: string) {
    super('too_large', message);
  }
}

/** A request that is well-formed but not allowed now (a result for a call already answered). */
export class ConflictError extends DomainError {
  constructor(message: string) {
    super('conflict', message);
  }
}

/** An append carried a lease epoch older than the session's: the writer lost its lease. */
export class StaleFenceError extends DomainError {
  constructor(
    readonly sessionId: string,
    readonly fenceEpoch: number,
    readonly currentEpoch: number,
  ) {
    super('stale_fence', `stale fence for ${sessionId}: epoch ${fenceEpoch} < current ${currentEpoch}`);
  }
}

/** An append expected the log to end at a given seq, and it did not (someone appended first). */
export class SeqConflictError extends DomainError {
  constructor(
    readonly sessionId: string,
    readonly expected: number,
    readonly actual: number,
  ) {
    super('seq_conflict', `log of ${sessionId} ends at seq ${actual}, expected ${expected}`);
  }
}

/**
 * The session store cannot be reached (database restarting, connection dropped, refused). Transient:
 * the harness and followers retry; a request that got it may or may not have been applied if the
 * connection dropped mid-commit, so callers re-read the log rather than assume either.
 */
export class StoreUnavailableError extends DomainError {
  constructor(
    readonly store: string,
    /** What the driver said (errno or SQLSTATE and message), for logs; never shown to users. */
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super('store_unavailable', `the session store (${store}) is unreachable; retrying`);
    if (options && 'cause' in options) this.cause = options.cause;
  }
}

export function isDomainError(e: unknown): e is DomainError {
  return e instanceof Error && 'code' in e && e.name === 'DomainError';
}

export function isStoreUnavailable(e: unknown): e is StoreUnavailableError {
  return isDomainError(e) && e.code === 'store_unavailable';
}
