import 'server-only';
import type { HandRegistry } from '~/server/hands/registry';
import type { Config } from '~/server/config';
import type { NewSessionDeps } from '~/server/agents/new-session';
import type { SessionStore } from '~/server/session/store';
import type { RepositoryStore } from '~/server/proxy/repository-store';
import type { WebhookStore } from '~/server/webhooks/webhook-store';
import type { WorkQueue } from '~/server/commands/work-queue';

/**
 * What the session commands use: the store, the harness to wake, the hands and repositories a
 * deleted session leaves behind. A shape, so both edges pass their runtime as it is.
 */
export interface SessionDeps extends NewSessionDeps {
  store: SessionStore;
  config: Config;
  harness: { wake(sessionId: string): Promise<void> };
  hands: Pick<HandRegistry, 'deleteSession'>;
  repositories: Pick<RepositoryStore, 'add' | 'removeSession'>;
  /** The self-hosted work queue, whose item for a deleted session stops (absent: none). */
  work?: Pick<WorkQueue, 'sessionDeleted'>;
  /** Where lifecycle events go out as webhooks (absent: nowhere). */
  webhooks?: Pick<WebhookStore, 'emit'>;
}
