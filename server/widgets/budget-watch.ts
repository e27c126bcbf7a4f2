import 'server-only';
import type { NewEvent, StoredEvent } from '~/lib/events';
import { isDomainError } from '~/lib/errors';
import { BUDGET_SPENT, type BudgetUse, type WidgetSettings, spentBudget } from '~/lib/widget';
import { logger } from '~/server/log';
import { startTicker } from '~/server/ticker';
import { accountLog } from '~/lib/usage';
import type { SessionStore } from '~/server/session/store';
import { BUDGET_CUT_KEY_PREFIX, type WidgetStore } from '~/server/widgets/widget-store';

const log = logger('widget-budget');

/** How often each instance looks at the running widget conversations: a time budget is cut within about this long. */
export const BUDGET_WATCH_MS = 1_000;

/** Running widget conversations looked at per tick, the oldest first (the likeliest to be past their minutes). */
const WATCH_LIMIT = 500;

/** The model tokens a session has used (input, output and cache) and when it began; null when it is gone. */
export async function budgetUse(store: SessionStore, sessionId: string, now = Date.now()): Promise<BudgetUse | null> {
  const session = await store.getSession(sessionId);
  if (!session) return null;
  const events = await store.getEvents(sessionId, { types: ['span.model_request_end'] });
  const { usage } = accountLog(events, session.created_at, now);
  const tokens = usage.input_tokens + usage.output_tokens + usage.cache_read_input_tokens + usage.cache_creation.ephemeral_5m_input_tokens + usage.cache_creation.ephemeral_1h_input_tokens;
  return { tokens, createdAt: Date.parse(session.created_at) };
}

/**
 * What the budget cut stores, in one batch: the interrupt the harness aborts the running step on
 * (wherever it runs: it follows the log), and a terminal `session.error` whose message the widget
 * recognizes ("this conversation has reached its limit") and the owner's view shows as it is.
 */
export function budgetCutEvents(): NewEvent[] {
  return [{ type: 'user.interrupt' }, { type: 'session.error', error: { type: 'unknown_error', message: BUDGET_SPENT, retry_status: { type: 'terminal' } } }];
}

/** The idempotency key of a conversation's budget cut: every instance may store it, the log gets it once. */
export const budgetCutKey = (sessionId: string) => `${BUDGET_CUT_KEY_PREFIX}${sessionId}`;

/** The idempotency key of a conversation's end: stored once, whoever ends it. */
export const budgetEndKey = (sessionId: string) => `${BUDGET_CUT_KEY_PREFIX}${sessionId}:terminated`;

/** What asks the harness for a step: a conversation is not ended while the newest of these is unanswered. */
const INPUT_TYPES = ['user.message', 'user.tool_confirmation', 'user.custom_tool_result', 'user.tool_result'] as const;

const isBudgetNotice = (e: StoredEvent) => e.type === 'session.error' && e.error.message === BUDGET_SPENT;

/**
 * Ends a widget conversation whose budget is spent: `session.status_terminated` (after the notice,
 * stored with it if the conversation was never cut), a final state. Only once its turn has stopped:
 * the session idle and its newest message answered, checked against the log as read (`expectLastSeq`:
 * a message or a turn that starts meanwhile wins, and the end waits for the next look). Keyed, so
 * every instance and `widget.send` may try it and the log gets it once. Whether it is ended now.
 */
export async function endSpentConversation(store: SessionStore, sessionId: string): Promise<boolean> {
  const session = await store.getSession(sessionId);
  if (!session) return false;
  if (session.status === 'terminated') return true;
  if (session.status !== 'idle') return false;
  const upTo = { to: session.last_seq };
  // Input the harness has not taken up yet (a message, a verdict, a result) is not ended over.
  const [newest] = await store.getEvents(sessionId, { ...upTo, types: [...INPUT_TYPES, 'session.status_running', 'session.status_idle'], order: 'desc', limit: 1 });
  if (newest && newest.type !== 'session.status_idle') return false;
  const noticed = (await store.getEvents(sessionId, { ...upTo, types: ['session.error'] })).some(isBudgetNotice);
  const notice = budgetCutEvents().filter((e) => e.type === 'session.error');
  try {
    await store.emitEvents(sessionId, [...(noticed ? [] : notice), { type: 'session.status_terminated' }], { idempotencyKey: budgetEndKey(sessionId), expectLastSeq: session.last_seq });
  } catch (e) {
    // Something was stored since the read: looked at again next time.
    if (isDomainError(e) && e.code === 'seq_conflict') return false;
    throw e;
  }
  return true;
}

/**
 * Cuts a widget conversation's running turn once its budget is spent. The send check
 * (`widget.send`, 412) only refuses the next message; a long turn could otherwise run on past its
 * tokens or minutes. Polled, not pushed: the store has no feed of every append, and following each
 * running widget session would hold a listener per conversation on every instance, while one
 * indexed query a second per instance is cheap. So a time budget is cut within about
 * BUDGET_WATCH_MS, and a token budget within that of the model request whose usage crossed it
 * (the step after it, a tool run or the next request, is aborted by the interrupt).
 *
 * Once the cut turn has stopped (the harness stored its idle), the watch ends the conversation:
 * `session.status_terminated`, a final state every edge refuses input to (the store itself refuses
 * `user.*` events after it), and the harness never wakes it again.
 *
 * Several instances: each runs its own watch over every running widget conversation (not only the
 * turns it hosts). The cut is stored under the idempotency key `budget:<sessionId>`, so however
 * many instances see it spent, the log gets one interrupt and one notice; the harness holding the
 * lease aborts on it. The end is keyed too (`budget:<sessionId>:terminated`): stored once. It is
 * found from the stored cut key, not from this instance's memory, so an instance that restarts
 * between the cut and the end, or another one, still ends it.
 */
export class BudgetWatch {
  /** Conversations this instance already cut and that still show as running: not read again until they stop. */
  #cut = new Set<string>();

  constructor(
    private readonly o: {
      store: SessionStore;
      widgets: WidgetStore;
      /** Lets the harness see the interrupt at once when this instance holds the turn (it follows the log anyway). */
      wake?: (sessionId: string) => Promise<void>;
    },
  ) {}

  /** One look at every running widget conversation; the ids it cut. */
  async tick(now = Date.now()): Promise<string[]> {
    const running = await this.o.widgets.runningSessions(WATCH_LIMIT);
    const ids = new Set(running.map((r) => r.sessionId));
    for (const id of this.#cut) if (!ids.has(id)) this.#cut.delete(id);
    const settings = new Map<string, WidgetSettings | null>();
    const cut: string[] = [];
    for (const { sessionId, agentId } of running) {
      if (this.#cut.has(sessionId)) continue;
      try {
        if (!settings.has(agentId)) settings.set(agentId, await this.o.widgets.settings(agentId));
        // A widget whose settings are gone has no budget to hold it to (turning it off keeps the settings).
        const s = settings.get(agentId);
        if (!s) continue;
        const use = await budgetUse(this.o.store, sessionId, now);
        const spent = use && spentBudget(s, use, now);
        if (!spent) continue;
        await this.o.store.emitEvents(sessionId, budgetCutEvents(), { idempotencyKey: budgetCutKey(sessionId) });
        this.#cut.add(sessionId);
        cut.push(sessionId);
        log.info('widget conversation cut at its budget', { session: sessionId, agent: agentId, spent, tokens: use.tokens });
        void this.o.wake?.(sessionId);
      } catch (e) {
        // Deleted meanwhile: nothing to cut. Anything else is tried again next tick.
        if (isDomainError(e) && e.code === 'not_found') continue;
        throw e;
      }
    }
    await this.#endCut();
    return cut;
  }

  /** Ends the conversations cut earlier (by any instance) whose turn has stopped since. */
  async #endCut(): Promise<void> {
    for (const sessionId of await this.o.widgets.cutIdleSessions(WATCH_LIMIT)) {
      try {
        if (await endSpentConversation(this.o.store, sessionId)) log.info('widget conversation ended at its budget', { session: sessionId });
      } catch (e) {
        if (isDomainError(e) && e.code === 'not_found') continue;
        throw e;
      }
    }
  }

  /** Ticks every `intervalMs` (one tick at a time) until the returned stop is called. */
  start(intervalMs = BUDGET_WATCH_MS): () => void {
    return startTicker({ name: 'budget watch', log, intervalMs, tick: async () => void (await this.tick()) });
  }
}
