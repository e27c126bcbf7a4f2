import { type DomainError, isDomainError } from '~/lib/errors';
import { isMemoryConflict } from '~/lib/memory-errors';
import { unreachable } from '~/lib/unreachable';

/** The error types of the Managed Agents API, each with the status it is answered with. */
export const ERROR_STATUS = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  conflict_error: 409,
  memory_precondition_failed_error: 409,
  memory_path_conflict_error: 409,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  overloaded_error: 529,
} as const;
export type ApiErrorType = keyof typeof ERROR_STATUS;

/** An error answered as `{type: 'error', error: {type, message}}` with its status. */
export class ApiError extends Error {
  constructor(
    readonly type: ApiErrorType,
    message: string,
    /** Fields an error type carries besides its message (a path conflict's `conflicting_path`). */
    readonly fields: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
  get status(): number {
    return ERROR_STATUS[this.type];
  }
}

function typeOf(e: DomainError): ApiErrorType {
  switch (e.code) {
    case 'not_found':
      return 'not_found_error';
    case 'invalid_input':
    case 'precondition_failed':
      return 'invalid_request_error';
    case 'forbidden':
      return 'permission_error';
    case 'conflict':
    case 'seq_conflict':
    case 'stale_fence':
      return 'conflict_error';
    case 'too_large':
      return 'request_too_large';
    case 'store_unavailable':
      return 'overloaded_error';
    default:
      return unreachable(e.code);
  }
}

/** Domain errors (and a hand's ToolError) become API errors; anything else is not ours to explain. */
export function toApiError(e: unknown): ApiError | null {
  if (e instanceof ApiError) return e;
  if (isMemoryConflict(e)) return new ApiError(e.apiType, e.message, e.fields);
  if (isDomainError(e)) return new ApiError(typeOf(e), e.message);
  if (e instanceof Error && e.name === 'ToolError') return new ApiError('invalid_request_error', e.message);
  return null;
}

export function errorBody(type: ApiErrorType, message: string, fields: Readonly<Record<string, string>> = {}): { type: 'error'; error: { type: ApiErrorType; message: string } } {
  return { type: 'error', error: { ...fields, type, message } };
}
