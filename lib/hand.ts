/**
 * The one contract every execution environment ("hand") implements. A thrown error means the
 * tool failed: the harness turns it into an `is_error` result for the model, never a crash.
 */
export type HandKind = 'memory' | 'browser' | 'sandbox' | 'remote';

export interface ToolSpec {
  name: string;
  description: string;
  input_schema: { type: 'object'; properties: Record<string, unknown>; required?: string[] };
}

export interface ExecuteContext {
  /** Stable across retries of the same call (the `agent.tool_use` event id). */
  callId: string;
  signal: AbortSignal;
}

export interface Hand {
  readonly id: string;
  readonly kind: HandKind;
  tools(): Promise<ToolSpec[]>;
  execute(name: string, input: unknown, ctx: ExecuteContext): Promise<string>;
  close(): Promise<void>;
}

/** A tool failure the model should read (bad path, missing file, …), not a harness fault. */
export class ToolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolError';
  }
}
