/**
 * Domain errors: thrown by the store and harness, mapped to HTTP/tRPC codes only at the edge.
 * Each carries a stable `code` so callers can branch without instanceof across module copies.
 */
export type DomainErrorCode = 'not_found' | 'invalid_input' | 'stale_fence' | 'seq_conflict' | 'conflict';

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

export function isDomainError(e: unknown): e is DomainError {
  return e instanceof Error && 'code' in e && e.name === 'DomainError';
}
