import 'server-only';
import { ConflictError } from '~/lib/errors';
import { type SessionStore, terminatedMessage } from '~/server/session/store';

/**
 * Refuses (409 / CONFLICT) work for a terminated session before anything is done for it: the
 * store refuses its input anyway, but an edge that acts first (an IDE write to a hand) must not
 * leave half of it done. A session that is gone is left to the caller's own not-found answer.
 */
export async function refuseTerminated(store: SessionStore, sessionId: string): Promise<void> {
  const session = await store.getSession(sessionId);
  if (session?.status === 'terminated') throw new ConflictError(terminatedMessage(sessionId));
}
