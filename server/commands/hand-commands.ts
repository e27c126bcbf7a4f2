import 'server-only';
import { randomUUID } from 'node:crypto';
import { ForbiddenError, InvalidInputError, NotFoundError, PreconditionError } from '~/lib/errors';
import type { StoredEvent } from '~/lib/events';
import { handsInLog } from '~/lib/hand-log';
import { HAND_EVENT_TYPES } from '~/server/hands/log-reconcile';
import type { Caller } from '~/server/access/access';
import { sendableSession } from '~/server/commands/session-commands';
import type { Config } from '~/server/config';
import type { HandEntry, HandRegistry, HandScope } from '~/server/hands/registry';
import type { SessionStore } from '~/server/session/store';

/**
 * What people (not the brain) do with a session's hands through the IDE: list and read a hand's
 * files (a share link's viewer: only a hand running now), edit a file (written, then recorded so
 * the brain sees it), move a hand to another session. The rules are here; the edges map errors.
 */
export interface HandDeps {
  store: SessionStore;
  config: Config;
  hands: Pick<HandRegistry, 'resolve' | 'use' | 'transfer'>;
}

/** IDE calls time out like a tool call would, rather than hold a request open. */
const IDE_CALL_MS = 30_000;

/** A user-initiated hand change: no lease fence (it is not the brain writing), idempotent keys. */
export async function userScope(d: Pick<HandDeps, 'store'>, sessionId: string): Promise<HandScope> {
  if (!(await d.store.getSession(sessionId))) throw new NotFoundError('session', sessionId);
  return { sessionId, signal: new AbortController().signal, emit: (event, key) => d.store.emitEvent(sessionId, event, { idempotencyKey: key }) };
}

/** Moves a ready hand, workspace and all, to another session; both logs record it. */
export async function transferHand(d: HandDeps, from: string, handId: string, to: string): Promise<HandEntry> {
  if (from === to) throw new InvalidInputError('to: must be another session');
  const [src, dst] = await Promise.all([userScope(d, from), userScope(d, to)]);
  return d.hands.transfer(src, handId, dst);
}

/** The files of a server-side hand's workspace, for the IDE's file tree. */
export async function listHandFiles(d: HandDeps, caller: Caller, sessionId: string, handId: string): Promise<string[]> {
  const text = await readOnHand(d, caller, sessionId, handId, 'glob', { pattern: '**/*' });
  // glob answers one path per line, or a sentence when nothing matches / the list was capped.
  return text.split('\n').filter((l) => l.length > 0 && !/^(no files match|\[)/.test(l));
}

export function readHandFile(d: HandDeps, caller: Caller, sessionId: string, handId: string, path: string): Promise<string> {
  return readOnHand(d, caller, sessionId, handId, 'read', { file_path: path });
}

/**
 * A user's edit from the IDE: written to the hand, then recorded as `user.file_edit` so the brain
 * sees it. Every rule of a send is checked before the write: a refusal after it would leave the
 * file changed and unrecorded.
 */
export async function editHandFile(d: HandDeps, sessionId: string, handId: string, path: string, content: string): Promise<StoredEvent> {
  const event = { type: 'user.file_edit' as const, hand: handId, path, content };
  await sendableSession(d, sessionId, [event]);
  await runOnHand(d, sessionId, handId, 'write', { file_path: path, content });
  return d.store.emitEvent(sessionId, event);
}

/**
 * An IDE read. The owner's may resume a suspended hand (as any use does); a share link's viewer
 * changes nothing: it reads only a hand that is running now (never resumed, provisioned or
 * counted as use), and nothing when the owner hid the files from the link.
 */
async function readOnHand(d: HandDeps, caller: Caller, sessionId: string, handId: string, tool: 'glob' | 'read', input: Record<string, unknown>): Promise<string> {
  if (caller.kind !== 'viewer') return runOnHand(d, sessionId, handId, tool, input);
  if (caller.hideFiles) throw new ForbiddenError("the owner does not share the hands' files through this link");
  const notLive = () => new PreconditionError(`no hand is live: ${handId}'s files can be read while it runs`);
  const record = handsInLog(await d.store.getEvents(sessionId, { types: [...HAND_EVENT_TYPES] })).find((h) => h.id === handId);
  if (!record || record.kind === 'browser' || record.status !== 'ready' || record.suspended) throw notLive();
  const entry = await d.hands.resolve(await userScope(d, sessionId), handId);
  if (entry.status !== 'ready' || !entry.hand) throw notLive();
  return entry.hand.execute(tool, input, { callId: `share-${randomUUID()}`, signal: AbortSignal.timeout(IDE_CALL_MS) });
}

/** Runs a file tool on a server-side hand for the IDE (never the brain's calls). */
async function runOnHand(d: HandDeps, sessionId: string, handId: string, tool: 'glob' | 'read' | 'write', input: Record<string, unknown>): Promise<string> {
  const scope = await userScope(d, sessionId);
  const entry = await d.hands.resolve(scope, handId);
  if (entry.kind === 'browser' || !entry.hand) throw new InvalidInputError(`hand ${handId} lives in a browser tab: read it there`);
  // Through `use`: the user's reads count as use (an idle hand is not suspended under them).
  return d.hands.use(scope, entry, (hand) => hand.execute(tool, input, { callId: `ide-${randomUUID()}`, signal: AbortSignal.timeout(IDE_CALL_MS) }));
}
