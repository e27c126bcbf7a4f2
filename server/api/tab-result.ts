import 'server-only';
import { TRPCError } from '@trpc/server';
import type { NewEvent, StoredEvent } from '~/lib/events';
import { handsInLog } from '~/lib/hand-log';
import type { Runtime } from '~/server/runtime';

type TabToolResult = Extract<NewEvent, { type: 'user.tool_result' }>;

/**
 * Stores a browser tab's answer to a call, after checking that the answer is the tab's to give:
 * the call exists, is addressed to this hand, the hand is a browser hand, this tab claimed it and
 * nobody answered yet. Anything else is refused and nothing is stored. The tab's own answer sent
 * again (a retry whose reply was lost) returns the stored event.
 */
export async function acceptTabResult(rt: Runtime, a: { sessionId: string; hand: string; tabId: string; event: TabToolResult }): Promise<StoredEvent> {
  const callId = a.event.tool_use_id;
  const answered = await claimedCall(rt, { ...a, toolUseId: callId });
  if (answered?.type === 'user.tool_result') return answered;
  if (answered) throw new TRPCError({ code: 'CONFLICT', message: `call ${callId} was already answered: ${firstText(answered)}` });

  // Same idempotency key as the harness's own result write: whichever lands first is the answer.
  const stored = await rt.store.emitEvent(a.sessionId, a.event, { idempotencyKey: callId });
  if (stored.type !== 'user.tool_result') throw new TRPCError({ code: 'CONFLICT', message: `call ${callId} was answered meanwhile: ${firstText(stored)}` });
  return stored;
}

export interface TabCall {
  sessionId: string;
  hand: string;
  tabId: string;
  toolUseId: string;
}

/**
 * Checks that a call is this tab's to act on: it exists, is addressed to this browser hand, and
 * this tab holds its claim. Returns its answer when it has one already (null: not answered yet).
 */
export async function claimedCall(rt: Runtime, a: TabCall): Promise<StoredEvent | null> {
  const callId = a.toolUseId;
  const events = await rt.store.getEvents(a.sessionId, { types: ['agent.tool_use', 'agent.tool_result', 'user.tool_result', 'hand.provisioned'] });
  const use = events.find((e) => e.type === 'agent.tool_use' && e.id === callId);
  if (!use || use.type !== 'agent.tool_use') throw new TRPCError({ code: 'NOT_FOUND', message: `no call ${callId} in session ${a.sessionId}` });
  if (use.hand !== a.hand) throw new TRPCError({ code: 'FORBIDDEN', message: `call ${callId} is addressed to ${use.hand ?? 'no hand'}, not ${a.hand}` });
  const kind = handsInLog(events).find((h) => h.id === a.hand)?.kind;
  if (kind !== 'browser') throw new TRPCError({ code: 'FORBIDDEN', message: `${a.hand} is not a browser hand: its calls are answered by the server` });
  const holder = await rt.store.callClaim(a.sessionId, callId);
  if (holder !== a.tabId) {
    throw new TRPCError({ code: 'FORBIDDEN', message: holder === null ? `call ${callId} was not claimed: claim it first` : `call ${callId} was claimed by another tab` });
  }
  return events.find((e) => (e.type === 'agent.tool_result' || e.type === 'user.tool_result') && e.tool_use_id === callId) ?? null;
}

/** A call this tab holds and nobody answered yet: what its mounts may be read and written for. */
export async function openClaimedCall(rt: Runtime, a: TabCall): Promise<void> {
  if ((await claimedCall(rt, a)) !== null) throw new TRPCError({ code: 'CONFLICT', message: `call ${a.toolUseId} was already answered` });
}

function firstText(e: StoredEvent): string {
  const content = 'content' in e && Array.isArray(e.content) ? (e.content as { type: string; text?: string }[]) : [];
  const text = content.find((c) => c.type === 'text')?.text ?? e.type;
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
