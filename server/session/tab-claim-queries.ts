import 'server-only';
import { type Kysely, type RawBuilder, sql } from 'kysely';
import { NotFoundError } from '~/lib/errors';
import type { Database } from '~/server/session/schema';
import { positiveInt } from '~/server/session/session-rows';
import type { TabClaims } from '~/server/session/store';
import { nowOn } from '~/server/session/lease-queries';

/** Browser hands' rows: the tabs alive (on the lease clock), and which tab claimed each call. */
export class TabClaimQueries implements TabClaims {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: (() => RawBuilder<number>) | undefined,
  ) {}

  async touchTab(sessionId: string, hand: string, tabId: string): Promise<void> {
    const seen = nowOn(this.clock);
    await this.db
      .insertInto('hand_tabs')
      .values({ session_id: sessionId, hand, tab_id: tabId, seen_at: seen })
      .onConflict((oc) => oc.columns(['session_id', 'hand', 'tab_id']).doUpdateSet({ seen_at: seen }))
      .execute()
      .catch(async (e: unknown) => {
        if (!(await this.exists(sessionId))) throw new NotFoundError('session', sessionId);
        throw e;
      });
  }

  async liveTabs(sessionId: string, hand: string, withinMs: number): Promise<string[]> {
    const clock = this.clock;
    const since = clock ? sql<number>`${clock()} - cast(${positiveInt('withinMs', withinMs)} as bigint)` : sql<number>`${Date.now() - positiveInt('withinMs', withinMs)}`;
    const rows = await this.db
      .selectFrom('hand_tabs')
      .select('tab_id')
      .where('session_id', '=', sessionId)
      .where('hand', '=', hand)
      .where('seen_at', '>', since)
      .orderBy('tab_id')
      .execute();
    return rows.map((r) => r.tab_id);
  }

  async claimCall(sessionId: string, callId: string, tabId: string): Promise<string> {
    await this.db
      .insertInto('call_claims')
      .values({ session_id: sessionId, call_id: callId, tab_id: tabId })
      .onConflict((oc) => oc.columns(['session_id', 'call_id']).doNothing())
      .execute()
      .catch(async (e: unknown) => {
        if (!(await this.exists(sessionId))) throw new NotFoundError('session', sessionId);
        throw e;
      });
    return (await this.callClaim(sessionId, callId)) ?? tabId;
  }

  async callClaim(sessionId: string, callId: string): Promise<string | null> {
    const row = await this.db.selectFrom('call_claims').select('tab_id').where('session_id', '=', sessionId).where('call_id', '=', callId).executeTakeFirst();
    return row?.tab_id ?? null;
  }

  async pruneHandRows(): Promise<{ tabs: number; claims: number }> {
    // What is over is in the idempotency keys: a hand's end is stored under `hand:<id>:released`
    // or `hand:<id>:lost`, a call's result under the call id. No event payload is parsed.
    const tabs = await this.db
      .deleteFrom('hand_tabs')
      .where((eb) =>
        eb.exists(
          eb
            .selectFrom('idempotency as i')
            .select(sql<number>`1`.as('one'))
            .whereRef('i.session_id', '=', 'hand_tabs.session_id')
            .where((k) =>
              k.or([
                k('i.key', '=', sql<string>`'hand:' || hand_tabs.hand || ':released'`),
                k('i.key', '=', sql<string>`'hand:' || hand_tabs.hand || ':lost'`),
              ]),
            ),
        ),
      )
      .executeTakeFirst();
    const claims = await this.db
      .deleteFrom('call_claims')
      .where((eb) =>
        eb.exists(eb.selectFrom('idempotency as i').select(sql<number>`1`.as('one')).whereRef('i.session_id', '=', 'call_claims.session_id').whereRef('i.key', '=', 'call_claims.call_id')),
      )
      .executeTakeFirst();
    return { tabs: Number(tabs.numDeletedRows), claims: Number(claims.numDeletedRows) };
  }

  /** Whether the session exists: a refusal on a row of a session that is gone says so by name. */
  private async exists(id: string): Promise<boolean> {
    return (await this.db.selectFrom('sessions').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
  }
}
