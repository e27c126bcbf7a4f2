import 'server-only';
import type { NewEvent } from '~/lib/events';
import { isDomainError } from '~/lib/errors';
import { BUDGET_SPENT, type BudgetUse, type WidgetSettings, spentBudget } from '~/lib/widget';
import { logger } from '~/server/log';
import { startTicker } from '~/server/ticker';
import { accountLog } from '~/server/rest/session-object';
import type { SessionStore } from '~/server/session/store';
import type { WidgetStore } from '~/server/widgets/widget-store';

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
export const budgetCutKey = (sessionId: string) => `budget:${sessionId}`;

/**
 * Cuts a widget conversation's running turn once its budget is spent. The send check
 * (`widget.send`, 412) only refuses the next message; a long turn could otherwise run on past its
 * tokens or minutes. Polled, not pushed: the store has no feed of every append, and following each
 * running widget session would hold a listener per conversation on every instance, while one
 * indexed query a second per instance is cheap. So a time budget is cut within about
 * BUDGET_WATCH_MS, and a token budget within that of the model request whose usage crossed it
 * (the step after it, a tool run or the next request, is aborted by the interrupt).
 *
 * Several instances: each runs its own watch over every running widget conversation (not only the
 * turns it hosts). The cut is stored under the idempotency key `budget:<sessionId>`, so however
 * many instances see it spent, the log gets one interrupt and one notice; the harness holding the
 * lease aborts on it. One cut per conversation: after it `widget.send` refuses the visitor, and a
 * turn the owner starts in it later is the owner's to run (the key is taken, nothing more is stored).
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
    return cut;
  }

  /** Ticks every `intervalMs` (one tick at a time) until the returned stop is called. */
  start(intervalMs = BUDGET_WATCH_MS): () => void {
    return startTicker({ name: 'budget watch', log, intervalMs, tick: async () => void (await this.tick()) });
  }
}
