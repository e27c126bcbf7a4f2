import 'server-only';
import type { Hand } from '~/lib/hand';
import { type SessionMounts, mountPointOf } from '~/server/hands/mount-port';
import { errorFields, logger } from '~/server/log';

const log = logger('mounts');

/**
 * One use of a hand with the session's mounts around it: before the call the hand's read-only
 * mounts are made the session's current ones (a file added to a running session is there for the
 * next call), after it (even a failed one) the outputs it changed are kept as files. Neither step
 * fails the call: a fault is logged, and the next call tries again.
 */
export async function withMounts<T>(mounts: SessionMounts | undefined, sessionId: string, handId: string, hand: Hand, fn: (hand: Hand) => Promise<T>): Promise<T> {
  const point = mountPointOf(hand);
  if (!mounts || !point) return fn(hand);
  try {
    await point.sync(await mounts.mountsFor(sessionId));
  } catch (e) {
    log.warn('mounts not placed', { session: sessionId, hand: handId, ...errorFields(e) });
  }
  try {
    return await fn(hand);
  } finally {
    try {
      const changed = await point.changedOutputs();
      if (changed.length > 0) await mounts.saveOutputs(sessionId, changed);
    } catch (e) {
      log.warn('outputs not collected', { session: sessionId, hand: handId, ...errorFields(e) });
    }
  }
}
