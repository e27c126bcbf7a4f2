import 'server-only';
import type { NewEvent } from '~/lib/events';
import { waitingOnOf } from '~/lib/waiting-on';
import { LAST_MESSAGE_CHARS, type SessionWaitingOn } from '~/server/session/store';

/**
 * The first non-blank line of a user or agent message, as the session list shows it (clipped);
 * null for any other event, or a message with no text (it leaves the list's line as it was).
 */
export function listedMessage(e: NewEvent): string | null {
  if (e.type !== 'user.message' && e.type !== 'agent.message') return null;
  const text = e.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
  const line = text.split('\n').map((l) => l.trim()).find((l) => l !== '');
  if (line === undefined) return null;
  return line.length > LAST_MESSAGE_CHARS ? `${line.slice(0, LAST_MESSAGE_CHARS - 1)}…` : line;
}

/** What a requires_action idle waits for, from the stored payloads of the calls it names (lib/waiting-on.ts). */
export function waitingOnFrom(payloads: readonly (string | undefined)[]): SessionWaitingOn | null {
  return waitingOnOf(payloads.map((p) => (p === undefined ? undefined : (JSON.parse(p) as { type?: string; evaluated_permission?: string }))));
}
