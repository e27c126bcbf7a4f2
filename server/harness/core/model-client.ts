import type { ModelUsage, SessionErrorObject } from '~/lib/events';
import type { ModelRequest } from '~/server/harness/core/context';

/** One block of a finished model turn. */
export type TurnBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

export interface ModelTurn {
  content: TurnBlock[];
  stopReason: string | null;
  usage: ModelUsage;
  /** From request sent to the first streamed content delta; null if nothing streamed. */
  ttftMs: number | null;
}

export type ModelDelta =
  | { kind: 'text'; index: number; text: string }
  | { kind: 'thinking'; index: number; text: string }
  | { kind: 'tool_input'; index: number; name: string; partial_json: string };

export interface ModelClient {
  /** What is asked, as recorded in `span.model_request_start.model`. */
  readonly label: string;
  readonly model: string;
  readonly isDemo: boolean;
  stream(request: ModelRequest, opts: { signal: AbortSignal; onDelta: (d: ModelDelta) => void }): Promise<ModelTurn>;
  /** The request's input tokens as the model server counts them; null where it cannot (no such endpoint). */
  countTokens?(request: ModelRequest, signal: AbortSignal): Promise<number | null>;
}

/** A failed model call, classified for the retry policy. */
export class ModelError extends Error {
  constructor(
    message: string,
    readonly errorType: SessionErrorObject['type'],
    readonly retryable: boolean,
    readonly status: number | null,
  ) {
    super(message);
    this.name = 'ModelError';
  }
}
