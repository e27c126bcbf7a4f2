import 'server-only';
import type { Hand } from '~/lib/hand';
import type { HandScope } from '~/server/hands/hand-entry';

/**
 * What the registry needs of a session's repositories (the port; the git proxy's
 * `RepositoryHands` in server/proxy is the adapter the runtime plugs in): the hosts its sandbox
 * hands may reach, a clone into each new hand, and the hand's capabilities revoked when it goes.
 * The type lives here, with its user, so the hands import nothing of the proxy.
 */
export interface HandRepositories {
  hosts(sessionId: string): Promise<string[]>;
  /** Never throws: a failed clone is recorded in the session and the session goes on. */
  cloneInto(scope: Pick<HandScope, 'sessionId' | 'emit' | 'signal'>, handId: string, hand: Hand): Promise<void>;
  revoke(sessionId: string, handId: string): Promise<void>;
}
