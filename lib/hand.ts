/**
 * The one contract every execution environment ("hand") implements. A thrown error means the
 * tool failed: the harness turns it into an `is_error` result for the model, never a crash.
 */
/** `local` is an unsandboxed paddock-hand process: only with PADDOCK_ALLOW_UNSANDBOXED=1. */
export type HandKind = 'memory' | 'browser' | 'sandbox' | 'local' | 'remote';

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
  /**
   * Settles (never rejects) with a reason once the hand is gone for good: its process died, its
   * connection closed. A call in flight on a lost hand fails with that reason at once.
   */
  readonly lost: Promise<string>;
  close(): Promise<void>;
}

/** A promise that never settles: the `lost` of a hand that cannot be lost (in-process). */
export const NEVER_LOST: Promise<string> = new Promise<string>(() => undefined);

/**
 * What the model reads about a lost hand, in its context and in the failed call's result: which
 * hand, and that its files went with it (a remote hand's may survive on its side).
 */
export function lostHandText(hand: string, reason: string): string {
  const files = hand.startsWith('remote-') ? 'files it held may be gone' : 'its workspace and files are gone';
  return `hand ${hand} was lost: ${reason}; ${files}. Nothing is re-run on another hand by itself: call provision for a fresh hand (or call a tool without "hand" to get one) and redo what is needed`;
}

/**
 * What a self-hosted session's hand tools are addressed to: not a hand of this server but whichever
 * worker holds the session's work item; its `user.tool_result` answers them. A `hand.lost` naming
 * it fails the calls still open (their worker died mid-call), never re-running them.
 */
export const SELF_HOSTED_HAND = 'self_hosted';

/** The error a call gets when the worker that held it was lost. */
export function lostWorkerText(reason: string): string {
  return `${reason}. The call was not re-run: it may have done some, all or none of its work. Call the tool again to run it on another worker`;
}

/** A tool failure the model should read (bad path, missing file, …), not a harness fault. */
export class ToolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolError';
  }
}
