import 'server-only';
import { type OutboundPolicy, isOutboundRefused, outboundFetch } from '~/server/net/outbound';
import { errorFields, logger } from '~/server/log';
import type { WebhookStore } from '~/server/webhooks/webhook-store';

const log = logger('webhooks');

/** Wait before attempt n+1 after n failed ones; after the last, the delivery is failed (redeliver sends it again). */
export const RETRY_DELAYS_MS = [5_000, 30_000, 2 * 60_000, 10 * 60_000, 60 * 60_000, 6 * 60 * 60_000];
const ATTEMPT_TIMEOUT_MS = 10_000;
const CLAIM_MS = 60_000;

export interface DeliveryDeps {
  webhooks: WebhookStore;
  /** The one outbound address policy (server/net): public addresses, and what the operator listed. */
  policy?: OutboundPolicy;
  /** The retry clock (tests inject one); absent: the real time. */
  now?: () => Date;
}

/**
 * One delivery pass (every instance runs it on the ticker): each due delivery is claimed, POSTed
 * to its endpoint signed per Standard Webhooks, and its attempt logged with the status code. A 2xx
 * succeeds; anything else (a refused address included) is retried after RETRY_DELAYS_MS.
 */
export async function deliverDue(d: DeliveryDeps): Promise<number> {
  const now = d.now ? d.now() : new Date();
  let sent = 0;
  for (const id of await d.webhooks.due(now.toISOString())) {
    const due = await d.webhooks.claim(id, now.toISOString(), new Date(now.getTime() + CLAIM_MS).toISOString());
    if (!due) continue;
    const failures = due.delivery.attempts.filter((a) => a.status_code === null || a.status_code < 200 || a.status_code >= 300).length;
    let status_code: number | null = null;
    let error: string | null = null;
    try {
      const headers = await d.webhooks.sign(due, now);
      const res = await outboundFetch(d.policy)(due.url, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'user-agent': 'Paddock-Webhooks/1' },
        body: due.payload,
        redirect: 'error',
        signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
      });
      status_code = res.status;
      await res.body?.cancel().catch(() => undefined);
    } catch (e) {
      // Never the URL's credentials or what answered there: the kind of failure only.
      error = isOutboundRefused(e) ? 'refused: the address is not public and not listed in PADDOCK_OUTBOUND_ALLOW' : e instanceof Error && e.name === 'TimeoutError' ? 'timed out' : 'connection failed';
      log.debug('webhook attempt failed', { delivery: id, why: error, ...errorFields(e) });
    }
    const ok = status_code !== null && status_code >= 200 && status_code < 300;
    const delay = RETRY_DELAYS_MS[failures];
    const next = ok ? { status: 'succeeded' as const } : delay === undefined ? { status: 'failed' as const } : { status: 'pending' as const, at: new Date(now.getTime() + delay).toISOString() };
    await d.webhooks.recordAttempt(id, { at: now.toISOString(), status_code, error }, next);
    if (ok) sent++;
  }
  return sent;
}

/** Outbox rows a pass takes, and passes a tick may make before it delivers (a backlog drains over ticks). */
const OUTBOX_BATCH = 200;
const OUTBOX_PASSES = 5;

/**
 * The ticker's work on every instance: the session log's webhook events queued first (so this
 * tick already sends them), then every due delivery.
 */
export async function webhookTick(d: DeliveryDeps): Promise<void> {
  for (let pass = 0; pass < OUTBOX_PASSES; pass++) {
    if ((await d.webhooks.drainOutbox(OUTBOX_BATCH)) < OUTBOX_BATCH) break;
  }
  await deliverDue(d);
}
