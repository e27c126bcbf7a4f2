import 'server-only';
import { type Insertable, type Kysely, PostgresAdapter, type Selectable } from 'kysely';
import { NotFoundError } from '~/lib/errors';
import { newId } from '~/lib/ids';
import type { WebhookEventType } from '~/lib/webhook-events';
import { type ListPage, newestFirst } from '~/server/session/keyset-page';
import type { Database, WebhookDeliveriesTable, WebhookEndpointsTable } from '~/server/session/schema';
import { lockOutboxForNewEndpoint } from '~/server/session/webhook-outbox';
import type { WebhookKeys } from '~/server/vault/webhook-keys';

/** An endpoint as the API shows it: never its secret (given once, in `create`'s answer). */
export interface WebhookEndpoint {
  id: string;
  type: 'webhook_endpoint';
  url: string;
  description: string | null;
  event_types: string[];
  created_at: string;
}

export interface DeliveryAttempt {
  at: string;
  status_code: number | null;
  error: string | null;
}

export interface WebhookDelivery {
  id: string;
  type: 'webhook_delivery';
  endpoint_id: string;
  event_id: string;
  event_type: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: DeliveryAttempt[];
  next_attempt_at: string | null;
  created_at: string;
  updated_at: string;
}

const endpointOf = (r: Selectable<WebhookEndpointsTable>): WebhookEndpoint => ({ id: r.id, type: 'webhook_endpoint', url: r.url, description: r.description, event_types: JSON.parse(r.event_types) as string[], created_at: r.created_at });
const deliveryOf = (r: Selectable<WebhookDeliveriesTable>): WebhookDelivery => ({
  id: r.id,
  type: 'webhook_delivery',
  endpoint_id: r.endpoint_id,
  event_id: r.event_id,
  event_type: r.event_type,
  status: r.status,
  attempts: JSON.parse(r.attempts) as DeliveryAttempt[],
  next_attempt_at: r.next_attempt_at,
  created_at: r.created_at,
  updated_at: r.updated_at,
});

/** Ids some events' `data` names besides the subject's: a credential's vault, the thread a session event is about. */
export interface WebhookRefs {
  vault_id?: string;
  session_thread_id?: string;
}

/** A delivery being sent: its payload and where to. */
export interface DueDelivery {
  delivery: WebhookDelivery;
  url: string;
  payload: string;
}

/** Rows per INSERT: far below SQLite's bound-parameter limit (13 columns a row). */
const INSERT_CHUNK = 500;

const liveEndpoints = (db: Kysely<Database>) => db.selectFrom('webhook_endpoints').select(['id', 'event_types']).where('disabled_at', 'is', null).execute();

/**
 * One event's deliveries, one per endpoint subscribed to its type (none listed: all), each the
 * SDK's `BetaWebhookEvent` with one id for all (a receiver dedupes on it). `at`: when it happened.
 */
function deliveryRows(endpoints: ReadonlyArray<{ id: string; event_types: string }>, e: { type: WebhookEventType; data: { id: string } & WebhookRefs; at: string; source: string | null }): Insertable<WebhookDeliveriesTable>[] {
  const to = endpoints.filter((ep) => {
    const types = JSON.parse(ep.event_types) as string[];
    return types.length === 0 || types.includes(e.type);
  });
  if (to.length === 0) return [];
  const now = new Date().toISOString();
  const event = { id: newId('wevt'), created_at: e.at, type: 'event', data: { ...e.data, type: e.type, organization_id: 'paddock', workspace_id: 'default' } };
  const payload = JSON.stringify(event);
  return to.map((ep) => ({ id: newId('whdl'), endpoint_id: ep.id, event_id: event.id, event_type: e.type, payload, status: 'pending' as const, attempts: '[]', next_attempt_at: now, claimed_until: null, created_at: now, updated_at: now, source_id: e.source }));
}

/** Webhook endpoints and deliveries in the session database; signing keys sealed under the master key. */
export class WebhookStore {
  readonly #pg: boolean;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly keys: WebhookKeys,
  ) {
    this.#pg = db.getExecutor().adapter instanceof PostgresAdapter;
  }

  /** A new endpoint and its signing secret: the only time the secret leaves the server. */
  async createEndpoint(p: { url: string; description: string | null; event_types: string[] }): Promise<WebhookEndpoint & { signing_secret: string }> {
    const id = newId('wh');
    const { secret, sealed } = this.keys.create(id);
    const row = { id, url: p.url, description: p.description, event_types: JSON.stringify(p.event_types), sealed_key: sealed, created_at: new Date().toISOString(), disabled_at: null };
    // PostgreSQL: after every append that found no endpoint has committed, before any that will look (webhook-outbox.ts).
    await this.db.transaction().execute(async (trx) => {
      if (this.#pg) await lockOutboxForNewEndpoint(trx);
      await trx.insertInto('webhook_endpoints').values(row).execute();
    });
    return { ...endpointOf(row), signing_secret: secret };
  }

  async getEndpoint(id: string): Promise<WebhookEndpoint> {
    const r = await this.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst();
    if (!r) throw new NotFoundError('webhook endpoint', id);
    return endpointOf(r);
  }

  async listEndpoints(q: { limit: number; page?: string | undefined }): Promise<ListPage<WebhookEndpoint>> {
    const page = await newestFirst(this.db.selectFrom('webhook_endpoints').selectAll(), 'webhook_endpoints', q.page, q.limit);
    return { data: page.data.map(endpointOf), next_page: page.next_page };
  }

  /** The endpoint, its key and its deliveries. */
  async deleteEndpoint(id: string): Promise<{ id: string; type: 'webhook_endpoint_deleted' }> {
    await this.db.transaction().execute(async (trx) => {
      const r = await trx.deleteFrom('webhook_endpoints').where('id', '=', id).executeTakeFirst();
      if (Number(r.numDeletedRows) === 0) throw new NotFoundError('webhook endpoint', id);
      await trx.deleteFrom('webhook_deliveries').where('endpoint_id', '=', id).execute();
    });
    return { id, type: 'webhook_endpoint_deleted' };
  }

  /**
   * One event to every endpoint subscribed to its type (none listed: all), as the SDK's
   * `BetaWebhookEvent`. Best effort for the caller: a failure here never fails what happened.
   */
  async emit(type: WebhookEventType, subjectId: string, refs: WebhookRefs = {}): Promise<void> {
    const endpoints = await liveEndpoints(this.db);
    const rows = deliveryRows(endpoints, { type, data: { id: subjectId, ...refs }, at: new Date().toISOString(), source: null });
    if (rows.length > 0) await this.db.insertInto('webhook_deliveries').values(rows).execute();
  }

  /**
   * Turns the log's webhook events (`webhook_outbox`, written in each append's own transaction)
   * into deliveries. The rows a pass takes are deleted and their deliveries inserted in one
   * transaction: an instance that dies midway leaves them for the next pass, and of two
   * instances racing for a row only the one whose delete removed it queues it. The unique key on
   * (endpoint, log event, type) is the second guard: a row processed twice queues nothing more.
   * Takes at most `limit` rows (500 at most); returns how many it took.
   */
  async drainOutbox(limit = 200): Promise<number> {
    // Two parameters a row in the delete: a pass stays far below SQLite's bound-parameter limit.
    const keys = await this.db.selectFrom('webhook_outbox').select(['source_id', 'event_type']).orderBy('occurred_at').orderBy('seq').limit(Math.min(limit, INSERT_CHUNK)).execute();
    if (keys.length === 0) return 0;
    return this.db.transaction().execute(async (trx) => {
      const taken = await trx
        .deleteFrom('webhook_outbox')
        .where((eb) => eb(eb.refTuple('source_id', 'event_type'), 'in', keys.map((k) => eb.tuple(k.source_id, k.event_type))))
        .returningAll()
        .execute();
      if (taken.length === 0) return 0;
      // One log event can stand for several (a status event and the status it leaves): by name then.
      taken.sort((a, b) => a.occurred_at.localeCompare(b.occurred_at) || a.session_id.localeCompare(b.session_id) || a.seq - b.seq || a.event_type.localeCompare(b.event_type));
      const endpoints = await liveEndpoints(trx);
      const rows = taken.flatMap((o) =>
        deliveryRows(endpoints, {
          type: o.event_type as WebhookEventType,
          data: { id: o.session_id, ...(o.session_thread_id !== null ? { session_thread_id: o.session_thread_id } : {}) },
          at: o.occurred_at,
          source: o.source_id,
        }),
      );
      for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
        await trx
          .insertInto('webhook_deliveries')
          .values(rows.slice(i, i + INSERT_CHUNK))
          .onConflict((oc) => oc.columns(['endpoint_id', 'source_id', 'event_type']).doNothing())
          .execute();
      }
      return taken.length;
    });
  }

  /** Pending deliveries due at `now` that no instance holds. */
  async due(now: string, limit = 20): Promise<string[]> {
    const rows = await this.db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', now)]))
      .orderBy('next_attempt_at')
      .limit(limit)
      .execute();
    return rows.map((r) => r.id);
  }

  /** Holds one delivery until `until` (one attempt at a time across instances); null: another holds it, or it is not due. */
  async claim(id: string, now: string, until: string): Promise<DueDelivery | null> {
    const r = await this.db
      .updateTable('webhook_deliveries')
      .set({ claimed_until: until })
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', now)]))
      .returningAll()
      .executeTakeFirst();
    if (!r) return null;
    const endpoint = await this.db.selectFrom('webhook_endpoints').select('url').where('id', '=', r.endpoint_id).executeTakeFirst();
    if (!endpoint) return null;
    return { delivery: deliveryOf(r), url: endpoint.url, payload: r.payload };
  }

  /** Standard Webhooks headers for one attempt, signed with the endpoint's key (opened in the vault only). */
  async sign(d: DueDelivery, at: Date): Promise<Record<string, string>> {
    const e = await this.db.selectFrom('webhook_endpoints').select('sealed_key').where('id', '=', d.delivery.endpoint_id).executeTakeFirst();
    if (!e) throw new NotFoundError('webhook endpoint', d.delivery.endpoint_id);
    return this.keys.sign(e.sealed_key, d.delivery.endpoint_id, d.delivery.event_id, at, d.payload);
  }

  /** One attempt's outcome appended to the delivery's log; released for the next attempt (or final). */
  async recordAttempt(id: string, attempt: DeliveryAttempt, next: { status: 'pending'; at: string } | { status: 'succeeded' | 'failed' }): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const r = await trx.selectFrom('webhook_deliveries').select('attempts').where('id', '=', id).executeTakeFirst();
      if (!r) return;
      const attempts = [...(JSON.parse(r.attempts) as DeliveryAttempt[]), attempt];
      await trx
        .updateTable('webhook_deliveries')
        .set({ attempts: JSON.stringify(attempts), status: next.status, next_attempt_at: next.status === 'pending' ? next.at : null, claimed_until: null, updated_at: new Date().toISOString() })
        .where('id', '=', id)
        .execute();
    });
  }

  async getDelivery(id: string): Promise<WebhookDelivery> {
    const r = await this.db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirst();
    if (!r) throw new NotFoundError('webhook delivery', id);
    return deliveryOf(r);
  }

  async listDeliveries(q: { limit: number; page?: string | undefined; endpointId?: string | undefined }): Promise<ListPage<WebhookDelivery>> {
    let query = this.db.selectFrom('webhook_deliveries').selectAll();
    if (q.endpointId !== undefined) query = query.where('endpoint_id', '=', q.endpointId);
    const page = await newestFirst(query, 'webhook_deliveries', q.page, q.limit);
    return { data: page.data.map(deliveryOf), next_page: page.next_page };
  }

  /** Sends a delivery again (its log keeps every earlier attempt), from `now`. */
  async redeliver(id: string, now: string): Promise<WebhookDelivery> {
    await this.getDelivery(id);
    await this.db.updateTable('webhook_deliveries').set({ status: 'pending', next_attempt_at: now, claimed_until: null, updated_at: new Date().toISOString() }).where('id', '=', id).execute();
    return this.getDelivery(id);
  }
}
