import 'server-only';
import type { WebhookEventType } from '~/lib/webhook-events';
import type { SessionDeps } from '~/server/commands/session-deps';
import { errorFields, logger } from '~/server/log';
import type { WebhookRefs } from '~/server/webhooks/webhook-store';

const log = logger('webhooks');

/** Queues a webhook event for what just happened; never fails the command it reports (logged instead). */
export async function notify(d: Pick<SessionDeps, 'webhooks'>, type: WebhookEventType, id: string, refs?: WebhookRefs): Promise<void> {
  if (!d.webhooks) return;
  await d.webhooks.emit(type, id, refs).catch((e: unknown) => log.warn('webhook event not queued', { type, id, ...errorFields(e) }));
}

/**
 * Archives (`archive`) and reports it once: archiving one already archived changes nothing and
 * sends nothing (`current`, read first, says which it was).
 */
export async function archiveNotifying<T extends { archived_at: string | null }>(
  d: Pick<SessionDeps, 'webhooks'>,
  type: WebhookEventType,
  id: string,
  current: () => Promise<T>,
  archive: () => Promise<T>,
  refs?: WebhookRefs,
): Promise<T> {
  const was = await current();
  const archived = await archive();
  if (was.archived_at === null) await notify(d, type, id, refs);
  return archived;
}
