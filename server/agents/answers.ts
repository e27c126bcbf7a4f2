import 'server-only';
import { ConflictError, InvalidInputError } from '~/lib/errors';
import type { NewEvent, StoredEvent } from '~/lib/events';
import { SELF_HOSTED_HAND } from '~/lib/hand';
import { foldLog } from '~/server/harness/core/decide';
import type { EventLog } from '~/server/session/store';

/** The events whose order decides whether a call still waits for its answer (see foldLog). */
export const ANSWER_TYPES = ['user.message', 'agent.thread_message_received', 'user.interrupt', 'agent.tool_use', 'agent.mcp_tool_use', 'agent.custom_tool_use', 'user.tool_confirmation', 'user.custom_tool_result', 'agent.tool_result', 'agent.mcp_tool_result', 'user.tool_result', 'hand.lost'] as const;

type Answer = Extract<NewEvent, { type: 'user.tool_confirmation' | 'user.custom_tool_result' | 'user.tool_result' }>;

const isAnswer = (e: NewEvent): e is Answer => e.type === 'user.tool_confirmation' || e.type === 'user.custom_tool_result' || e.type === 'user.tool_result';
const callOf = (a: Answer) => (a.type === 'user.custom_tool_result' ? a.custom_tool_use_id : a.tool_use_id);
// A worker's result shares its key with the harness's own result for the call (a lost worker's
// error): exactly one of them is stored.
const keyOf = (a: Answer) => (a.type === 'user.tool_result' ? callOf(a) : `${a.type === 'user.custom_tool_result' ? 'custom' : 'confirm'}:${callOf(a)}`);

/**
 * Answers must answer something that waits: a verdict a call whose policy asks and that has none
 * (nor was given up by a new message or an interrupt), a custom result a custom call the client
 * has not answered. Checked against the log before anything is stored; the UI and `/v1` both go
 * through here. `where(i)` names the answer's place in the request for the error.
 *
 * Returns the idempotency key to store the batch under: a batch answering one call is keyed by
 * it, so of two racing answers exactly one is stored (see `storedAnswerWon`).
 */
export async function checkAnswers(store: Pick<EventLog, 'getEvents'>, sessionId: string, events: readonly NewEvent[], where: (i: number) => string): Promise<string | undefined> {
  const answers = events.map((e, i) => ({ e, i })).filter((x): x is { e: Answer; i: number } => isAnswer(x.e));
  if (answers.length === 0) return undefined;
  const log = await store.getEvents(sessionId, { types: [...ANSWER_TYPES] });
  const byId = new Map(log.map((e) => [e.id, e]));
  // Each thread (multiagent) decides from its own events: a call waits in the fold of its thread.
  const folds = new Map<string | null, ReturnType<typeof foldLog>>();
  const stateOf = (thread: string | null) => {
    let f = folds.get(thread);
    if (!f) folds.set(thread, (f = foldLog(log.filter((x) => (x.session_thread_id ?? null) === thread))));
    return f;
  };
  const seen = new Set<string>();
  for (const { e, i } of answers) {
    const at = where(i);
    const id = callOf(e);
    const call: StoredEvent | undefined = byId.get(id);
    switch (e.type) {
      case 'user.tool_confirmation': {
        // An MCP call asks like any other: its verdict names it by the same field.
        if (call?.type !== 'agent.tool_use' && call?.type !== 'agent.mcp_tool_use') throw new InvalidInputError(`${at}.tool_use_id: session ${sessionId} has no tool call ${id}`);
        if (call.evaluated_permission !== 'ask') throw new InvalidInputError(`${at}.tool_use_id: call ${id} (${call.name}) does not wait for a confirmation: its policy lets it run`);
        const earlier = log.find((x) => x.type === 'user.tool_confirmation' && x.tool_use_id === id);
        if (earlier?.type === 'user.tool_confirmation') throw new ConflictError(`${at}: call ${id} was already answered: ${earlier.result}`);
        if (!stateOf(call.session_thread_id ?? null).awaitingConfirmation.some((c) => c.id === id)) throw new ConflictError(`${at}: call ${id} no longer waits for a confirmation (it was given up by a new message or an interrupt)`);
        break;
      }
      case 'user.custom_tool_result':
        if (call?.type !== 'agent.custom_tool_use') throw new InvalidInputError(`${at}.custom_tool_use_id: ${id} is not a custom tool call of session ${sessionId}`);
        if (!stateOf(call.session_thread_id ?? null).awaitingClient.some((c) => c.id === id)) throw new ConflictError(`${at}: custom tool call ${id} was already answered (or given up by a new message or an interrupt)`);
        break;
      case 'user.tool_result':
        if (call?.type !== 'agent.tool_use' || call.hand !== SELF_HOSTED_HAND) throw new InvalidInputError(`${at}.tool_use_id: ${id} is not a call of session ${sessionId} that waits for a user.tool_result (only a self-hosted environment's tool calls do; others run on Paddock's hands)`);
        if (!stateOf(call.session_thread_id ?? null).awaitingWorker.some((c) => c.id === id)) throw new ConflictError(`${at}: tool call ${id} was already answered (or given up: its worker was lost, or a new message or an interrupt came first)`);
        break;
    }
    if (seen.has(id)) throw new ConflictError(`${at}: call ${id} is answered twice in this request`);
    seen.add(id);
  }
  return answers.length === 1 ? keyOf(answers[0]!.e) : undefined;
}

/**
 * After a keyed store: the events stored under the key are ours, or a racing request's answer that
 * won. Same verdict (a retried request): fine. Another: a conflict, as if it had come first.
 */
export function storedAnswerWon(sent: readonly NewEvent[], stored: readonly StoredEvent[]): void {
  sent.forEach((e, i) => {
    if (!isAnswer(e)) return;
    const got = stored[i];
    const same = got?.type === e.type && (e.type !== 'user.tool_confirmation' || (got.type === 'user.tool_confirmation' && got.result === e.result));
    if (!same) throw new ConflictError(`call ${callOf(e)} was answered meanwhile`);
  });
}
