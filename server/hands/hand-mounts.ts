import 'server-only';
import type { Hand } from '~/lib/hand';
import { type HandMountPoint, type SessionMounts, mountPointOf } from '~/server/hands/mount-port';
import { ToolError } from '~/lib/hand';
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
  const refused: string[] = [];
  let result: T;
  try {
    result = await fn(hand);
  } finally {
    try {
      const changed = await point.changedOutputs();
      if (changed.length > 0) await mounts.saveOutputs(sessionId, changed);
    } catch (e) {
      log.warn('outputs not collected', { session: sessionId, hand: handId, ...errorFields(e) });
    }
    refused.push(...(await saveMemory(mounts, sessionId, handId, point)));
  }
  // A change to a memory store that did not go back (a conflict, a read-only store) fails the call,
  // so the agent knows; the file holds the store's version again at the next call.
  if (refused.length > 0) {
    throw new ToolError(memoryRefusalText(outputOf(result), refused));
  }
  return result;
}

/**
 * A call's error text when changes to memory were refused: what the command printed (null: it
 * printed nothing to keep), then one line per refused file. A browser tab's result says the same
 * (server/api/tab-mounts.ts).
 */
export function memoryRefusalText(output: string | null, refused: readonly string[]): string {
  const notice = `these changes to memory were not saved:\n${refused.map((r) => `- ${r}`).join('\n')}\nEach file now holds what its store holds; read it again before changing it.`;
  return output === null ? `the command ran, but ${notice}` : `${output}\n\nThe command ran, but ${notice}`;
}

/** The call's text, when the result carries one (a tool call's `{ text }`), so the error keeps what the command printed. */
function outputOf(result: unknown): string | null {
  if (typeof result === 'string') return result;
  const text = (result as { text?: unknown } | null)?.text;
  return typeof text === 'string' ? text : null;
}

async function saveMemory(mounts: SessionMounts, sessionId: string, handId: string, point: HandMountPoint): Promise<string[]> {
  if (!point.changedMemory) return [];
  try {
    const changes = await point.changedMemory();
    return changes.length > 0 ? await mounts.saveMemory(sessionId, changes) : [];
  } catch (e) {
    log.warn('memory changes not written back', { session: sessionId, hand: handId, ...errorFields(e) });
    return ['the memory folder could not be read back; nothing of it was saved'];
  }
}
