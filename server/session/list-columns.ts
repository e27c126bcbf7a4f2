import 'server-only';
import type { NewEvent } from '~/lib/events';
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

/**
 * What a requires_action idle waits for, from the stored payloads of the calls it names: a call
 * whose policy asks first waits for the owner's verdict (`approval`, first: a person must act);
 * any other (a custom tool's call) for the client's result.
 */
export function waitingOnFrom(payloads: readonly (string | undefined)[]): SessionWaitingOn | null {
  let on: SessionWaitingOn | null = null;
  for (const p of payloads) {
    if (p === undefined) continue;
    const call = JSON.parse(p) as { type?: string; evaluated_permission?: string };
    if (call.evaluated_permission === 'ask') return 'approval';
    if (call.type === 'agent.custom_tool_use') on = 'client';
  }
  return on;
}
