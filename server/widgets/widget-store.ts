import 'server-only';
import { type Kysely, sql } from 'kysely';
import { InvalidInputError, NotFoundError } from '~/lib/errors';
import { type WidgetSettings, type WidgetSettingsInput, WidgetSettingsInput as SettingsSchema } from '~/lib/widget';
import type { Database } from '~/server/session/schema';

/** A visitor's conversation as its widget lists it: nothing but what the visitor itself wrote and saw. */
export interface VisitorSession {
  id: string;
  title: string;
  status: string;
  created_at: string;
  updated_at: string;
}

/** What the owner's session list shows of a widget session (never the visitor's id). */
export interface WidgetMark {
  agent_id: string;
  origin: string;
}

/** The idempotency key a conversation's budget cut is stored under is this and its session id. */
export const BUDGET_CUT_KEY_PREFIX = 'budget:';

/** Conversations one visitor keeps listed (the newest). */
const VISITOR_LIST_LIMIT = 50;

/**
 * The widget's rows (migration 0009_widgets): per-agent settings, and the sessions widgets
 * started, each bound to one visitor (the SHA-256 of its id, never the id) and origin.
 */
export class WidgetStore {
  constructor(private readonly db: Kysely<Database>) {}

  async settings(agentId: string): Promise<WidgetSettings | null> {
    const row = await this.db.selectFrom('widget_settings').selectAll().where('agent_id', '=', agentId).executeTakeFirst();
    if (!row) return null;
    // Stored by save() after validation; parsed again so a hand-edited row cannot widen anything.
    const parsed = SettingsSchema.safeParse(JSON.parse(row.body));
    if (!parsed.success) return null;
    return { ...parsed.data, agent_id: agentId, updated_at: row.updated_at };
  }

  async save(agentId: string, input: WidgetSettingsInput, now = Date.now()): Promise<WidgetSettings> {
    const agent = await this.db.selectFrom('agents').select(['id', 'archived_at']).where('id', '=', agentId).executeTakeFirst();
    if (!agent) throw new NotFoundError('agent', agentId);
    if (agent.archived_at !== null && input.enabled) throw new InvalidInputError('enabled: an archived agent cannot have a widget');
    const env = await this.db.selectFrom('environments').select('id').where('id', '=', input.environment_id).executeTakeFirst();
    if (!env) throw new InvalidInputError(`environment_id: environment ${input.environment_id} not found`);
    const body = JSON.stringify({ ...input, allowed_origins: [...new Set(input.allowed_origins)] });
    const updated_at = new Date(now).toISOString();
    await this.db
      .insertInto('widget_settings')
      .values({ agent_id: agentId, body, updated_at })
      .onConflict((oc) => oc.column('agent_id').doUpdateSet({ body, updated_at }))
      .execute();
    return (await this.settings(agentId))!;
  }

  async recordSession(row: { sessionId: string; agentId: string; origin: string; visitorHash: string }, now = Date.now()): Promise<void> {
    await this.db.insertInto('widget_sessions').values({ session_id: row.sessionId, agent_id: row.agentId, origin: row.origin, visitor_hash: row.visitorHash, created_at: now }).execute();
  }

  /** Whether the visitor started this session through this agent's widget. */
  async owns(visitorHash: string, agentId: string, sessionId: string): Promise<boolean> {
    const row = await this.db.selectFrom('widget_sessions').select('session_id').where('session_id', '=', sessionId).where('visitor_hash', '=', visitorHash).where('agent_id', '=', agentId).executeTakeFirst();
    return row !== undefined;
  }

  /** The visitor's own conversations with this agent, newest first. */
  async visitorSessions(visitorHash: string, agentId: string): Promise<VisitorSession[]> {
    return this.db
      .selectFrom('widget_sessions')
      .innerJoin('sessions', 'sessions.id', 'widget_sessions.session_id')
      .select(['sessions.id', 'sessions.title', 'sessions.status', 'sessions.created_at', 'sessions.updated_at'])
      .where('widget_sessions.visitor_hash', '=', visitorHash)
      .where('widget_sessions.agent_id', '=', agentId)
      .orderBy('widget_sessions.created_at', 'desc')
      .orderBy('widget_sessions.session_id', 'desc')
      .limit(VISITOR_LIST_LIMIT)
      .execute();
  }

  /** Sessions this agent's widget started since `since` (epoch ms): the hourly cap, on every instance alike. */
  async startedSince(agentId: string, since: number): Promise<number> {
    const r = await this.db
      .selectFrom('widget_sessions')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('agent_id', '=', agentId)
      .where('created_at', '>=', since)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  /**
   * Widget conversations whose session is running (or retrying a model request): what the budget
   * watch looks at each tick. A join on the sessions' status (no index on it: widget rows are few
   * next to a deployment's sessions, and only running ones come back).
   */
  async runningSessions(limit: number): Promise<{ sessionId: string; agentId: string }[]> {
    const rows = await this.db
      .selectFrom('widget_sessions')
      .innerJoin('sessions', 'sessions.id', 'widget_sessions.session_id')
      .select(['widget_sessions.session_id', 'widget_sessions.agent_id'])
      .where('sessions.status', 'in', ['running', 'rescheduling'])
      .orderBy('widget_sessions.created_at')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ sessionId: r.session_id, agentId: r.agent_id }));
  }

  /**
   * Widget conversations cut at their budget (the cut's key is stored) whose turn has stopped since,
   * not terminated yet: what the budget watch ends. Few at any time: each is ended within a tick.
   */
  async cutIdleSessions(limit: number): Promise<string[]> {
    const rows = await this.db
      .selectFrom('widget_sessions')
      .innerJoin('sessions', 'sessions.id', 'widget_sessions.session_id')
      .select('widget_sessions.session_id')
      .where('sessions.status', '=', 'idle')
      .where((eb) =>
        eb.exists(
          eb
            .selectFrom('idempotency as i')
            .select(sql<number>`1`.as('one'))
            .whereRef('i.session_id', '=', 'widget_sessions.session_id')
            .where('i.key', '=', sql<string>`cast(${BUDGET_CUT_KEY_PREFIX} as text) || widget_sessions.session_id`),
        ),
      )
      .orderBy('widget_sessions.created_at')
      .limit(limit)
      .execute();
    return rows.map((r) => r.session_id);
  }

  /** Every origin a widget session came from (the owner's list filter). */
  async origins(): Promise<string[]> {
    const rows = await this.db.selectFrom('widget_sessions').select('origin').distinct().orderBy('origin').limit(500).execute();
    return rows.map((r) => r.origin);
  }

  /** Which of these sessions a widget started, and from where. */
  async marks(sessionIds: readonly string[]): Promise<Map<string, WidgetMark>> {
    if (sessionIds.length === 0) return new Map();
    const rows = await this.db.selectFrom('widget_sessions').select(['session_id', 'agent_id', 'origin']).where('session_id', 'in', [...sessionIds]).execute();
    return new Map(rows.map((r) => [r.session_id, { agent_id: r.agent_id, origin: r.origin }]));
  }
}
