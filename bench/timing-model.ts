import type { Harness } from '~/server/harness/harness';
import type { ModelClient, ModelTurn } from '~/server/harness/core/model-client';
import type { SessionStore } from '~/server/session/store';

/** A one-word answer, at once. */
export const OK_TURN: ModelTurn = {
  content: [{ type: 'text', text: 'ok' }],
  stopReason: 'end_turn',
  usage: { input_tokens: 0, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  ttftMs: 0,
};

/**
 * A model that records when the harness asks for a turn (and, by a `[run-…]` tag in the request,
 * which run asked first) and answers at once: what is timed is the harness, not a model.
 */
export class TimingModel implements ModelClient {
  readonly label = 'bench';
  readonly model = 'bench-model';
  readonly isDemo = false;
  readonly calls: number[] = [];
  readonly byTag = new Map<string, number>();

  stream(request: unknown): Promise<ModelTurn> {
    const now = performance.now();
    this.calls.push(now);
    const tag = /\[(run-[\w-]+)\]/.exec(JSON.stringify(request))?.[1];
    if (tag !== undefined && !this.byTag.has(tag)) this.byTag.set(tag, now);
    return Promise.resolve(OK_TURN);
  }
}

/**
 * `wake(id)` → its model request, in ms. Checks what was measured: exactly one model call, and the
 * session idle afterwards (wake resolves once the turn is stored).
 */
export async function timeWake(harness: Harness, model: TimingModel, store: SessionStore, id: string): Promise<number> {
  const before = model.calls.length;
  const t0 = performance.now();
  await harness.wake(id);
  const calledAt = model.calls[before];
  if (calledAt === undefined || model.calls.length !== before + 1) throw new Error(`wake(${id}) made ${model.calls.length - before} model calls, wanted 1`);
  const session = await store.getSession(id);
  if (session?.status !== 'idle') throw new Error(`wake(${id}) left the session ${session?.status ?? 'missing'}, wanted idle`);
  return calledAt - t0;
}
