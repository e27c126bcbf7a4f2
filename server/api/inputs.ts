import { z } from 'zod';
import { EventTypeSchema, UserContent } from '~/lib/events';
import { ID_PATTERN } from '~/lib/ids';

export const SessionId = z.string().regex(ID_PATTERN.session, 'must be a session id (sesn_…)');

export const EventSliceInput = z.object({
  sessionId: SessionId,
  from: z.number().int().optional(),
  to: z.number().int().positive().optional(),
  types: z.array(EventTypeSchema).max(32).optional(),
  limit: z.number().int().positive().max(10_000).optional(),
});

/** What a user may send through the web UI (tool results etc. come with the hands issue). */
export const SendableEvent = z.discriminatedUnion('type', [
  z.object({ type: z.literal('user.message'), content: z.array(UserContent).min(1).max(100) }),
  z.object({ type: z.literal('user.interrupt') }),
]);
