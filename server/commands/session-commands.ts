import 'server-only';
import type { z } from 'zod';
import type { SessionUpdateParams } from '~/lib/agent';
import { sessionChanges } from '~/server/commands/session-update';
import { ConflictError, InvalidInputError, NotFoundError } from '~/lib/errors';
import type { NewEvent, StoredEvent } from '~/lib/events';
import { checkAnswers, storedAnswerWon } from '~/server/agents/answers';
import { createSessionFor } from '~/server/agents/new-session';
import { checkEventSize, checkFileWrite } from '~/server/commands/limits';
import { routeToThreads } from '~/server/commands/thread-commands';
import type { SessionDeps } from '~/server/commands/session-deps';
import { notify } from '~/server/commands/webhook-notify';
import { errorFields, logger } from '~/server/log';
import { DEFAULT_TITLE, type Session, type SessionStore, terminatedMessage } from '~/server/session/store';

/**
 * The session commands both edges call (`/v1` handlers and tRPC procedures only parse, authorize
 * and map errors): every rule about a session's lifecycle and what it takes is decided here, once.
 * Refusals are domain errors, which each edge maps to its own shape.
 */
const log = logger('commands');

async function sessionOrThrow(store: SessionStore, id: string): Promise<Session> {
  const session = await store.getSession(id);
  if (!session) throw new NotFoundError('session', id);
  return session;
}

/**
 * A new session (an agent in an environment); woken when it starts with work (an initial
 * message), and then, untitled, named after that message as a later send would name it.
 */
export async function createSession(d: SessionDeps, params: unknown): Promise<Session> {
  const { session, hasWork } = await createSessionFor(d, params);
  await notify(d, 'session.created', session.id);
  if (!hasWork) return session;
  void d.harness.wake(session.id);
  if (session.title !== DEFAULT_TITLE) return session;
  const [first] = await d.store.getEvents(session.id, { types: ['user.message'], limit: 1 }).catch(() => []);
  if (first?.type !== 'user.message') return session;
  await autoTitle(d.store, session.id, first).catch((e: unknown) => log.warn('auto-title failed', { session: session.id, ...errorFields(e) }));
  return (await d.store.getSession(session.id).catch(() => null)) ?? session;
}

/**
 * Title, metadata (a patch: null deletes a key), the agent's tools and MCP servers (never while
 * the session runs) and vault ids; then `session.updated` with only what changed (no event when
 * nothing did), stored with the change in the append's one transaction. The new configuration
 * applies from the next turn.
 */
export async function updateSession(d: SessionDeps, id: string, p: z.output<typeof SessionUpdateParams>): Promise<Session> {
  const current = await sessionOrThrow(d.store, id);
  const { patch, event } = await sessionChanges(d, current, p);
  if (!event) return current;
  // One write: the change and its event commit together (a crash leaves both or neither).
  await d.store.emitEvents(current.id, [event], { sessionPatch: patch });
  return sessionOrThrow(d.store, current.id);
}

export async function archiveSession(d: SessionDeps, id: string): Promise<Session> {
  await sessionOrThrow(d.store, id);
  const archived = await d.store.updateSession(id, { archived: true });
  await notify(d, 'session.archived', id);
  return archived;
}

/**
 * Deletes a session for good: never while it runs (interrupt it first), then its hands end and
 * their workspaces go, then its resources (sealed tokens and git capabilities die with them),
 * then its log and rows.
 */
export async function deleteSession(d: SessionDeps, id: string): Promise<{ id: string }> {
  const session = await sessionOrThrow(d.store, id);
  if (session.status === 'running') throw new ConflictError(`session ${session.id} is running: interrupt it (user.interrupt) before deleting it`);
  await d.hands.deleteSession(session.id);
  await d.repositories.removeSession(session.id);
  await d.work?.sessionDeleted(session.id);
  await d.store.deleteSession(session.id);
  await notify(d, 'session.deleted', session.id);
  return { id: session.id };
}

export interface SendOptions {
  /** The same key again returns the first stored events: a client retrying a send whose answer it lost stores it once. */
  idempotencyKey?: string;
  /** How a refusal names the event it is about (`events[2]`, `event`). */
  where?: (i: number) => string;
}

/**
 * The session, when it takes these events: it exists, is neither terminated (final: 409, as the
 * store answers one that ends meanwhile) nor archived, and each event is within the size caps.
 * Checked before anything is done for them (a file written to a hand, an append).
 */
export async function sendableSession(d: Pick<SessionDeps, 'store' | 'config'>, id: string, events: readonly NewEvent[]): Promise<Session> {
  const session = await sessionOrThrow(d.store, id);
  for (const e of events) {
    checkEventSize(d.config, e);
    if (e.type === 'user.file_edit') checkFileWrite(d.config, e.content);
  }
  if (session.status === 'terminated') throw new ConflictError(terminatedMessage(session.id));
  if (session.archived_at !== null) throw new InvalidInputError(`session ${session.id} is archived and takes no more events`);
  return session;
}

/**
 * Stores what a caller sends to a session, all at once or none: never to a terminated session
 * (final: 409, as the store answers one that ends meanwhile) or an archived one; within the
 * size caps; an answer to a call that asks is keyed by its call (one verdict, whoever races).
 * Then the harness is woken, and an untitled session is named after its first message.
 */
export async function sendEvents(d: SessionDeps, id: string, sent: readonly NewEvent[], opts: SendOptions = {}): Promise<StoredEvent[]> {
  const session = await sendableSession(d, id, sent);
  // With threads: an interrupt goes to the thread it names (none: every thread), an answer to the thread that asked.
  const events = await routeToThreads(d.store, session, sent);
  const answerKey = await checkAnswers(d.store, session.id, events, opts.where ?? ((i) => `events[${i}]`));
  const key = answerKey ?? (opts.idempotencyKey ? `send:${opts.idempotencyKey}` : undefined);
  const stored = await d.store.emitEvents(session.id, events, key ? { idempotencyKey: key } : {});
  storedAnswerWon(events, stored);
  void d.harness.wake(session.id);
  const message = stored.find((e): e is Extract<StoredEvent, { type: 'user.message' }> => e.type === 'user.message');
  // Best effort: the message is stored, so the send succeeds even if naming fails (a failed
  // send would make the user send it again).
  if (message && session.title === DEFAULT_TITLE) await autoTitle(d.store, session.id, message).catch((e: unknown) => log.warn('auto-title failed', { session: session.id, ...errorFields(e) }));
  return stored;
}

/**
 * An untitled session is named after its first message, as people expect from chat apps, whatever
 * came before it in the log (a browser hand attached, a file edited).
 */
export async function autoTitle(store: SessionStore, id: string, message: Extract<StoredEvent, { type: 'user.message' }>): Promise<void> {
  const session = await store.getSession(id);
  const text = message.content.map((c) => (c.type === 'text' ? c.text : '')).join(' ').replace(/\s+/g, ' ').trim();
  if (!session || session.title !== DEFAULT_TITLE || text === '') return;
  const [first] = await store.getEvents(id, { types: ['user.message'], limit: 1 });
  if (first?.id !== message.id) return;
  await store.updateSession(id, { title: text.length > 60 ? `${text.slice(0, 57)}…` : text });
}
