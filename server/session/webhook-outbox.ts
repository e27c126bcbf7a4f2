import 'server-only';
import { type Insertable, type Kysely, sql } from 'kysely';
import type { Database, Tx, WebhookOutboxTable } from '~/server/session/schema';

/**
 * The log's webhook outbox rows of one append, kept only for types some enabled endpoint may want
 * (one listing no types wants all): with no endpoint, an append writes no row, and the ticker has
 * nothing to drain. The test is part of the INSERT itself (no cache to go stale, no extra round
 * trip). A subscription is matched by text (`"type"` in its JSON list): a false match (`_` is a
 * LIKE wildcard) only keeps a row the drain then sends nowhere; a true one is never missed.
 *
 * PostgreSQL, across instances: the INSERT takes `webhook_outbox`'s ROW EXCLUSIVE lock before its
 * snapshot, and a new endpoint is made under SHARE on the same table (`lockOutboxForNewEndpoint`),
 * which conflicts. So an endpoint's creation waits for every append that already tested (and found
 * no endpoint) to commit, and every append after it sees the endpoint: each event committed after
 * an endpoint exists has its row. SQLite has one writer at a time: the test is always current.
 */
export async function insertOutbox(trx: Tx, rows: readonly Insertable<WebhookOutboxTable>[]): Promise<void> {
  if (rows.length === 0) return;
  const values = sql.join(rows.map((r) => sql`(${r.source_id}, ${r.event_type}, ${r.session_id}, ${r.session_thread_id ?? null}, ${r.seq}, ${r.occurred_at})`));
  await sql`with v(source_id, event_type, session_id, session_thread_id, seq, occurred_at) as (values ${values})
    insert into webhook_outbox (source_id, event_type, session_id, session_thread_id, seq, occurred_at)
    select cast(v.source_id as text), cast(v.event_type as text), cast(v.session_id as text), cast(v.session_thread_id as text), cast(v.seq as integer), cast(v.occurred_at as text) from v
    where exists (select 1 from webhook_endpoints e where e.disabled_at is null and (e.event_types = '[]' or e.event_types like '%"' || cast(v.event_type as text) || '"%'))`.execute(trx);
}

/** Taken by the transaction that makes (or enables) an endpoint, on PostgreSQL: see `insertOutbox`. */
export async function lockOutboxForNewEndpoint(trx: Kysely<Database>): Promise<void> {
  await sql`lock table webhook_outbox in share mode`.execute(trx);
}
