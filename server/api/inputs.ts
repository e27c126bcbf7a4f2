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
  // The size cap is a setting (PADDOCK_MAX_FILE_WRITE_BYTES), checked in the procedure.
  z.object({ type: z.literal('user.file_edit'), hand: z.string().min(1).max(100), path: z.string().min(1).max(4096), content: z.string() }),
  // The owner's verdict on a call whose policy asks first; checked against the log in the procedure.
  z.object({
    type: z.literal('user.tool_confirmation'),
    tool_use_id: z.string().regex(ID_PATTERN.event, 'must be the id of an agent.tool_use event (sevt_…)'),
    result: z.enum(['allow', 'deny']),
    deny_message: z.string().max(10_000).nullish(),
  }),
]);

export const TabId = z.string().min(8).max(64).regex(/^[\w-]+$/, 'must be a tab id');
export const HandId = z.string().min(1).max(100);
export const ToolUseId = z.string().regex(ID_PATTERN.event, 'must be the id of an agent.tool_use event (sevt_…)');
/** What attachBrowser returned: proves the request comes from the tab that attached. */
export const TabSecret = z.string().min(1).max(200);

/** A browser tab's answer to a call addressed to its hand, claimed by that tab. */
export const TabResult = z.object({
  sessionId: SessionId,
  hand: HandId,
  tabId: TabId,
  tabSecret: TabSecret,
  toolUseId: ToolUseId,
  content: z.array(ToolResultContent).max(100),
  is_error: z.boolean().optional(),
  /** Changes to memory that `hands.saveMemory` refused during this call: the result becomes an error naming them. */
  memoryRefused: z.array(z.string().min(1).max(2000)).max(100).optional(),
});

export const AgentId = z.string().regex(/^agent_[A-Za-z0-9]{1,64}$/, 'must be an agent id (agent_…)');
export const EnvironmentId = z.string().regex(/^env_[A-Za-z0-9]{1,64}$/, 'must be an environment id (env_…)');
/** A page cursor as the agent store hands it out (`next_page`). */
export const PageCursor = z.string().max(200).nullish();
