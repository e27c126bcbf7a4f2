import 'server-only';
import { TRPCError } from '@trpc/server';
import { isStoreUnavailable } from '~/lib/errors';
import type { ShareLinks } from '~/server/access/share-links';
import { errorFields, logger } from '~/server/log';

const log = logger('share');

/** How often an open share view re-reads its link: a revoke (on any instance) ends it within this. */
export const SHARE_RECHECK_MS = 3_000;

export interface ShareWatch {
  /** Aborted with `outer`, or once the link is revoked or expired. */
  signal: AbortSignal;
  /** The error the stream must end with, once the link is dead. */
  ended(): TRPCError | null;
  close(): void;
}

/**
 * Keeps a viewer's stream tied to its link (or a widget visitor's to its widget: `isLive` then
 * re-reads the agent's widget settings): the row is read every `everyMs` (a database outage
 * is not a revoke: the stream goes on and the next read decides).
 */
export function watchShare(shares: Pick<ShareLinks, 'isLive'>, shareId: string, outer: AbortSignal, everyMs = SHARE_RECHECK_MS, endedMessage = 'this share link was revoked or has expired'): ShareWatch {
  const stop = new AbortController();
  let dead: TRPCError | null = null;
  let checking = false;
  const timer = setInterval(() => {
    if (checking || dead) return;
    checking = true;
    shares
      .isLive(shareId)
      .then((live) => {
        if (live) return;
        dead = new TRPCError({ code: 'NOT_FOUND', message: endedMessage });
        stop.abort();
      })
      .catch((e: unknown) => {
        if (!isStoreUnavailable(e)) log.warn('share link re-check failed', { share: shareId, ...errorFields(e) });
      })
      .finally(() => {
        checking = false;
      });
  }, everyMs);
  return {
    signal: AbortSignal.any([outer, stop.signal]),
    ended: () => dead,
    close: () => clearInterval(timer),
  };
}
