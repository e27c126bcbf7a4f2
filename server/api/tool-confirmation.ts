import 'server-only';
import { TRPCError } from '@trpc/server';
import type { NewEventOf, StoredEvent } from '~/lib/events';
import { foldLog } from '~/server/harness/decide';
import type { Runtime } from '~/server/runtime';

type Confirmation = NewEventOf<'user.tool_confirmation'>;

/** The events whose order decides whether a call still waits for its verdict (see foldLog). */
const CONFIRMATION_TYPES = ['user.message', 'user.interrupt', 'agent.tool_use', 'agent.custom_tool_use', 'user.tool_confirmation', 'user.custom_tool_result', 'agent.tool_result', 'user.tool_result'] as const;

/**
 * Stores the owner's verdict on a call whose policy asks first, after checking the log: the call
 * is this session's, it asked, and it still waits (no verdict, no result, not given up by a new
 * message or an interrupt). A verdict on an answered call is a CONFLICT naming the first one.
 * Keyed `confirm:<call id>`, so of two racing verdicts exactly one is stored; the loser is told.
 */
export async function acceptToolConfirmation(rt: Runtime, sessionId: string, event: Confirmation): Promise<StoredEvent> {
  const callId = event.tool_use_id;
  const events = await rt.store.getEvents(sessionId, { types: [...CONFIRMATION_TYPES] });
  const use = events.find((e) => e.id === callId);
  if (use?.type !== 'agent.tool_use') throw new TRPCError({ code: 'BAD_REQUEST', message: `tool_use_id: session ${sessionId} has no tool call ${callId}` });
  if (use.evaluated_permission !== 'ask') throw new TRPCError({ code: 'BAD_REQUEST', message: `tool_use_id: call ${callId} (${use.name}) does not wait for a confirmation: its policy lets it run` });

  const earlier = events.find((e) => e.type === 'user.tool_confirmation' && e.tool_use_id === callId);
  if (earlier?.type === 'user.tool_confirmation') throw new TRPCError({ code: 'CONFLICT', message: `call ${callId} was already answered: ${earlier.result}` });
  if (!foldLog(events).awaitingConfirmation.some((c) => c.id === callId)) {
    throw new TRPCError({ code: 'CONFLICT', message: `call ${callId} no longer waits for a confirmation (it was answered, or given up by a new message or an interrupt)` });
  }
  const stored = await rt.store.emitEvent(sessionId, event, { idempotencyKey: `confirm:${callId}` });
  if (stored.type !== 'user.tool_confirmation' || stored.result !== event.result) {
    throw new TRPCError({ code: 'CONFLICT', message: `call ${callId} was answered meanwhile` });
  }
  return stored;
}
