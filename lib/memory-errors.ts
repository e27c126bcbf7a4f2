import { ConflictError } from '~/lib/errors';

/** The Managed Agents API's own 409s for memories, with what the SDK's error objects carry. */
export type MemoryConflictType = 'memory_precondition_failed_error' | 'memory_path_conflict_error';

/**
 * A memory write refused because the memory changed (its `content_sha256` is not the one the
 * caller expected) or its path is taken. A ConflictError (409) at both edges; /v1 answers it with
 * its own error type and fields (`conflicting_memory_id`, `conflicting_path`).
 */
export class MemoryConflictError extends ConflictError {
  constructor(
    readonly apiType: MemoryConflictType,
    message: string,
    readonly fields: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}

export function isMemoryConflict(e: unknown): e is MemoryConflictError {
  return e instanceof Error && 'apiType' in e && (e.apiType === 'memory_precondition_failed_error' || e.apiType === 'memory_path_conflict_error');
}
