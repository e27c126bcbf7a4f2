import { z } from 'zod';
import { EventTypeSchema, ToolResultContent, UserContent } from '~/lib/events';
import { ID_PATTERN } from '~/lib/ids';

export const SessionId = z.string().regex(ID_PATTERN.session, 'must be a session id (sesn_…)');

export const EventSliceInput = z.object({
  sessionId: SessionId,
  from: z.number().int().optional(),
  to: z.number().int().positive().optional(),
  types: z.array(EventTypeSchema).max(32).optional(),
  limit: z.number().int().positive().max(10_000).optional(),
});

/** What a user (or their browser tab) may send through the web UI. */
export const SendableEvent = z.discriminatedUnion('type', [
  z.object({ type: z.literal('user.message'), content: z.array(UserContent).min(1).max(100) }),
  z.object({ type: z.literal('user.interrupt') }),
  z.object({ type: z.literal('user.file_edit'), hand: z.string().min(1).max(100), path: z.string().min(1).max(4096), content: z.string().max(256 * 1024) }),
  // A browser tab's answer to a call addressed to its hand (stored once per tool_use_id).
  z.object({
    type: z.literal('user.tool_result'),
    tool_use_id: z.string().regex(/^sevt_/, 'must be the id of an agent.tool_use event'),
    content: z.array(ToolResultContent).max(100).optional(),
    is_error: z.boolean().optional(),
  }),
]);
