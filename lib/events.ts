import { BudgetLimit } from '~/lib/budget-limit';
import { z } from 'zod';
import { McpServerListing } from '~/lib/mcp-listing';

/**
 * The session event vocabulary: the single source of truth for every boundary (REST, tRPC,
 * store, browser mirror). Shapes and field names mirror the Managed Agents API
 * (`@anthropic-ai/sdk/resources/beta/sessions/events.d.ts`); Paddock's additions are marked.
 */

// ── content blocks ──────────────────────────────────────────────────────────
export const TextBlock = z.object({ type: z.literal('text'), text: z.string() });
const Base64Source = z.object({ type: z.literal('base64'), media_type: z.string().min(1), data: z.string() });
const UrlSource = z.object({ type: z.literal('url'), url: z.url() });
const FileSource = z.object({ type: z.literal('file'), file_id: z.string().min(1) });
const PlainTextSource = z.object({ type: z.literal('text'), media_type: z.literal('text/plain'), data: z.string() });
export const ImageBlock = z.object({
  type: z.literal('image'),
  source: z.discriminatedUnion('type', [Base64Source, UrlSource, FileSource]),
});
export const DocumentBlock = z.object({
  type: z.literal('document'),
  source: z.discriminatedUnion('type', [Base64Source, PlainTextSource, UrlSource, FileSource]),
  title: z.string().nullish(),
  context: z.string().nullish(),
});
export const RedactedBlock = z.object({ type: z.literal('redacted') });
/** Paddock addition: thinking is kept (with its signature) so tool loops can replay it. */
export const ThinkingBlock = z.object({ type: z.literal('thinking'), thinking: z.string(), signature: z.string() });

export const UserContent = z.discriminatedUnion('type', [TextBlock, ImageBlock, DocumentBlock, RedactedBlock]);
export const ToolResultContent = z.discriminatedUnion('type', [TextBlock, ImageBlock, DocumentBlock]);
export type TextBlock = z.infer<typeof TextBlock>;
export type UserContent = z.infer<typeof UserContent>;
export type ToolResultContent = z.infer<typeof ToolResultContent>;

const retryStatus = z.object({ type: z.enum(['retrying', 'exhausted', 'terminal']) });
export const SessionErrorObject = z.object({
  type: z.enum([
    'unknown_error',
    'model_overloaded_error',
    'model_rate_limited_error',
    'model_request_failed_error',
    'mcp_connection_failed_error',
    'mcp_authentication_failed_error',
    'tool_use_limit_reached_error',
    'repository_authentication_error',
    'repository_forbidden_error',
    'repository_not_found_error',
    'repository_checkout_error',
    'repository_clone_error',
  ]),
  message: z.string(),
  retry_status: retryStatus,
  /** On the mcp_* types: the server (by its name in the agent's `mcp_servers`). */
  mcp_server_name: z.string().min(1).optional(),
  /** The repository errors' (the SDK's): which repository could not be cloned or checked out. */
  repository_url: z.string().nullable().optional(),
});
export type SessionErrorObject = z.infer<typeof SessionErrorObject>;

export const ModelUsage = z.object({
  input_tokens: z.number().int().nonnegative(),
  output_tokens: z.number().int().nonnegative(),
  cache_creation_input_tokens: z.number().int().nonnegative(),
  cache_read_input_tokens: z.number().int().nonnegative(),
});
export type ModelUsage = z.infer<typeof ModelUsage>;

export const StopReason = z.discriminatedUnion('type', [
  z.object({ type: z.literal('end_turn') }),
  z.object({ type: z.literal('requires_action'), event_ids: z.array(z.string()) }),
  z.object({ type: z.literal('retries_exhausted') }),
  /** The session's list cost reached its budget (or a model without a list price ran under one): no new request starts. */
  z.object({ type: z.literal('budget_reached') }),
]);
export type StopReason = z.infer<typeof StopReason>;

/** Outcomes: how a grader judges, and what it can say (`needs_revision` asks the agent for another iteration). */
export const MAX_OUTCOME_ITERATIONS = 20;
export const DEFAULT_OUTCOME_ITERATIONS = 3;
export const OutcomeRubric = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), content: z.string().min(1).max(262_144) }),
  z.object({ type: z.literal('file'), file_id: z.string().min(1) }),
]);
export const OUTCOME_RESULTS = ['satisfied', 'needs_revision', 'max_iterations_reached', 'failed', 'interrupted'] as const;
export const OutcomeResult = z.enum(OUTCOME_RESULTS);
export type OutcomeResult = z.infer<typeof OutcomeResult>;

// ── event payloads (what a writer supplies; the store adds id, seq, session_id, processed_at) ──
const toolResultFields = {
  tool_use_id: z.string().min(1),
  content: z.array(ToolResultContent).optional(),
  is_error: z.boolean().nullish(),
};

/** A session thread's id (multiagent): `sthr_…`. */
export const ThreadId = z.string().regex(/^sthr_[0-9A-Za-z]{1,64}$/, 'must be a session thread id (sthr_…)');
/**
 * Which thread an event belongs to: absent on the primary thread's (the coordinator's) events,
 * a child thread's id on its own (lib/threads.ts). The stored field the SDK calls `session_thread_id`.
 */
const onThread = { session_thread_id: ThreadId.optional() };

/**
 * An inline agent as its coordinator defined it (multiagent `inline_agents` enabled): the rest
 * (model, tools, MCP servers, skills) is the coordinator's own, without `multiagent` (depth 1).
 */
export const InlineAgentDefinition = z.object({ system: z.string().min(1).max(100_000), description: z.string().max(2048).nullable() }).strict();
export type InlineAgentDefinition = z.infer<typeof InlineAgentDefinition>;

export const NewEvent = z.discriminatedUnion('type', [
  z.object({ ...onThread, type: z.literal('user.message'), content: z.array(UserContent).min(1) }),
  z.object({ ...onThread, type: z.literal('user.interrupt') }),
  z.object({
    ...onThread,
    type: z.literal('user.tool_confirmation'),
    tool_use_id: z.string().min(1),
    result: z.enum(['allow', 'deny']),
    deny_message: z.string().nullish(),
  }),
  z.object({ ...onThread, type: z.literal('user.tool_result'), ...toolResultFields }),
  z.object({
    ...onThread,
    type: z.literal('user.custom_tool_result'),
    custom_tool_use_id: z.string().min(1),
    content: z.array(ToolResultContent).optional(),
    is_error: z.boolean().nullish(),
  }),
  // Paddock addition: the user changed a file in a hand from the IDE; the brain reads it next turn.
  z.object({
    ...onThread,
    type: z.literal('user.file_edit'),
    hand: z.string().min(1).max(100),
    path: z.string().min(1).max(4096),
    content: z.string().max(256 * 1024),
  }),
  z.object({
    ...onThread,
    type: z.literal('agent.message'),
    content: z.array(z.discriminatedUnion('type', [TextBlock, RedactedBlock])),
    /** Paddock addition: the answer as far as it streamed before the user interrupted it. */
    interrupted: z.literal(true).optional(),
  }),
  // Paddock addition: `content` keeps the thinking text and signature for replay.
  z.object({ ...onThread, type: z.literal('agent.thinking'), content: z.array(ThinkingBlock).optional() }),
  z.object({
    ...onThread,
    type: z.literal('agent.tool_use'),
    name: z.string().min(1),
    input: z.record(z.string(), z.unknown()),
    /** Paddock addition: Claude's own `toolu_…` id, to rebuild the Messages API history. */
    model_tool_use_id: z.string().min(1),
    /** Paddock addition: the hand that runs (or ran) the call. */
    hand: z.string().optional(),
    /**
     * The agent's permission policy for this call, evaluated when the model made it: `ask` waits
     * for a `user.tool_confirmation` before it runs. Absent on events stored before policies.
     */
    evaluated_permission: z.enum(['allow', 'ask', 'deny']).optional(),
  }),
  z.object({ ...onThread, type: z.literal('agent.tool_result'), ...toolResultFields, hand: z.string().optional() }),
  z.object({
    ...onThread,
    type: z.literal('agent.mcp_tool_use'),
    name: z.string().min(1),
    mcp_server_name: z.string().min(1),
    input: z.record(z.string(), z.unknown()),
    model_tool_use_id: z.string().min(1),
    /** As on agent.tool_use: the policy of the server's toolset for this tool, evaluated when the model made the call. */
    evaluated_permission: z.enum(['allow', 'ask', 'deny']).optional(),
  }),
  z.object({
    ...onThread,
    type: z.literal('agent.mcp_tool_result'),
    mcp_tool_use_id: z.string().min(1),
    content: z.array(ToolResultContent).optional(),
    is_error: z.boolean().nullish(),
  }),
  /** A call of a custom tool: the client runs it and answers with `user.custom_tool_result`. */
  z.object({
    ...onThread,
    type: z.literal('agent.custom_tool_use'),
    name: z.string().min(1),
    input: z.record(z.string(), z.unknown()),
    /** Paddock addition, as on agent.tool_use. */
    model_tool_use_id: z.string().min(1),
  }),
  z.object({
    ...onThread,
    type: z.literal('agent.thread_context_compacted'),
    /** Paddock additions: the summary the model wrote, the seq range it stands for, and what asking for it cost. */
    summary: z.string().optional(),
    from_seq: z.number().int().min(1).optional(),
    to_seq: z.number().int().min(1).optional(),
    model_usage: ModelUsage.optional(),
  }),
  z.object({ ...onThread, type: z.literal('session.status_running') }),
  z.object({
    ...onThread,
    type: z.literal('session.status_idle'),
    stop_reason: StopReason,
    stop_details: z.null().default(null),
  }),
  // Paddock addition: which attempt failed and when the next one starts.
  z.object({
    ...onThread,
    type: z.literal('session.status_rescheduled'),
    attempt: z.number().int().positive().optional(),
    retry_in_ms: z.number().int().nonnegative().optional(),
  }),
  z.object({ ...onThread, type: z.literal('session.status_terminated') }),
  /**
   * A point-in-time snapshot of the session's cumulative usage (every model request, the grader's
   * too), its list cost and its budget then (a budget check stores one at the cap; an outcome's
   * verdict stores one beside it).
   */
  z.object({
    ...onThread,
    type: z.literal('session.usage'),
    usage: z.object({
      input_tokens: z.number().int().nonnegative(),
      output_tokens: z.number().int().nonnegative(),
      cache_read_input_tokens: z.number().int().nonnegative(),
      cache_creation: z.object({ ephemeral_5m_input_tokens: z.number().int().nonnegative(), ephemeral_1h_input_tokens: z.number().int().nonnegative() }),
      list_cost: z.object({ amount: z.string(), currency: z.literal('USD') }).optional(),
      active_seconds: z.number().nonnegative().optional(),
    }),
    budget: BudgetLimit.nullable().optional(),
  }),
  z.object({ ...onThread, type: z.literal('session.error'), error: SessionErrorObject }),
  // Paddock addition: `model` names what was asked (a Claude id, or the offline demo brain).
  z.object({
    ...onThread,
    type: z.literal('span.model_request_start'),
    model: z.string().optional(),
    /** Paddock addition: the request's input as estimated when it was built (calibrates later estimates against the usage reported). */
    estimated_input_tokens: z.number().int().min(0).optional(),
    /**
     * Paddock addition, under a `window` context policy that left turns out: the seq of the first
     * model turn the request showed. The next request's window starts from here (it never moves
     * back), so a wake reads the log from here on, not all of it.
     */
    window_from_seq: z.number().int().min(1).optional(),
  }),
  z.object({
    ...onThread,
    type: z.literal('span.model_request_end'),
    model_request_start_id: z.string().min(1),
    is_error: z.boolean().nullable(),
    model_usage: ModelUsage,
    // Paddock additions: measured latencies and Claude's own stop reason.
    ttft_ms: z.number().nonnegative().nullish(),
    duration_ms: z.number().nonnegative().optional(),
    model_stop_reason: z.string().nullish(),
  }),
  /**
   * An outcome the agent works toward at once (no message needed); a grader judges each finished
   * turn against the rubric (span.outcome_evaluation_*). A file rubric is stored resolved to its
   * text, as the API does (`rubric_file_id`, Paddock addition, names the file it came from).
   */
  z.object({
    ...onThread,
    type: z.literal('user.define_outcome'),
    outcome_id: z.string().regex(/^outc_/, 'must start with outc_'),
    description: z.string().min(1),
    rubric: OutcomeRubric,
    max_iterations: z.number().int().min(1).max(MAX_OUTCOME_ITERATIONS).nullable(),
    rubric_file_id: z.string().min(1).optional(),
  }),
  z.object({ ...onThread, type: z.literal('span.outcome_evaluation_start'), outcome_id: z.string().min(1), iteration: z.number().int().min(0) }),
  /** A heartbeat while the grader works. */
  z.object({ ...onThread, type: z.literal('span.outcome_evaluation_ongoing'), outcome_id: z.string().min(1), iteration: z.number().int().min(0) }),
  z.object({
    ...onThread,
    type: z.literal('span.outcome_evaluation_end'),
    outcome_evaluation_start_id: z.string().min(1),
    outcome_id: z.string().min(1),
    iteration: z.number().int().min(0),
    result: OutcomeResult,
    explanation: z.string(),
    usage: ModelUsage,
  }),
  /** A mid-conversation system turn a client sends with a user turn: the model sees it as `role: "system"`. */
  z.object({ ...onThread, type: z.literal('system.message'), content: z.array(TextBlock).min(1) }),
  /** What a session update changed, and only that (`agent` whole when its tools or MCP servers changed). */
  z.object({
    ...onThread,
    type: z.literal('session.updated'),
    title: z.string().nullable().optional(),
    metadata: z.record(z.string(), z.string()).optional(),
    agent: z.record(z.string(), z.unknown()).optional(),
    vault_ids: z.array(z.string()).optional(),
    budget: BudgetLimit.nullable().optional(),
  }),
  // Paddock's own: hand lifecycle.
  z.object({
    ...onThread,
    type: z.literal('hand.provisioned'),
    hand: z.string().min(1),
    kind: z.string().min(1),
    /** How long provisioning took. */
    provision_ms: z.number().nonnegative().optional(),
    /** Per-command limits the hand enforces, when asked for. */
    resources: z.object({ memory_mb: z.number().int().positive().optional(), cpu_seconds: z.number().int().positive().optional() }).optional(),
    /** Set when the hand came from another session, which keeps working in the same workspace. */
    transferred_from: z.object({ session_id: z.string().min(1), hand: z.string().min(1) }).optional(),
    /**
     * A remote hand's operator-configured endpoint name: what a later harness (after a crash, on
     * another instance) re-attaches by. Never a URL or token: those stay in the server's config.
     */
    endpoint: z.string().min(1).optional(),
  }),
  /** A harness that took the session over re-connected to a hand that outlived the previous one. */
  z.object({ ...onThread, type: z.literal('hand.reattached'), hand: z.string().min(1), reattach_ms: z.number().nonnegative().optional() }),
  z.object({
    ...onThread,
    type: z.literal('hand.released'),
    hand: z.string().min(1),
    transferred_to: z.object({ session_id: z.string().min(1), hand: z.string().min(1) }).optional(),
  }),
  z.object({ ...onThread, type: z.literal('hand.lost'), hand: z.string().min(1), reason: z.string() }),
  /**
   * The hand's process was stopped to free the machine (idle for a while, or the least recently
   * used past the cap on live hands). Its workspace stays; the next call resumes it, same name.
   */
  z.object({ ...onThread, type: z.literal('hand.suspended'), hand: z.string().min(1), reason: z.enum(['idle', 'cap', 'shutdown']) }),
  /** A suspended hand runs again on the same workspace. */
  z.object({ ...onThread, type: z.literal('hand.resumed'), hand: z.string().min(1), resume_ms: z.number().nonnegative().optional() }),
  /**
   * Paddock's own: the tools of the session's MCP servers, listed once (before its first model
   * request) so every later request, on any instance, offers byte-identical tool definitions.
   */
  z.object({ ...onThread, type: z.literal('mcp.tools_listed'), servers: z.array(McpServerListing).max(20) }),
  /** A session's repository was cloned into the hand through the git proxy (a failure is a `session.error`). */
  z.object({ ...onThread, type: z.literal('hand.repository_cloned'), hand: z.string().min(1), resource_id: z.string().min(1), repository_url: z.string(), mount_path: z.string(), clone_ms: z.number().nonnegative().optional() }),
  // Session threads (multiagent): a child thread's life and the messages between threads.
  z.object({
    type: z.literal('session.thread_created'),
    session_thread_id: ThreadId,
    agent_name: z.string(),
    workflow_run_id: z.null().default(null),
    /** Paddock addition: the roster agent the thread runs. */
    agent_id: z.string().min(1).optional(),
    parent_thread_id: ThreadId.nullish(),
    /**
     * Paddock addition: the inline agent the thread runs (defined by the coordinator at spawn, not
     * saved), so a harness rebuilt from the log runs the same agent. No default: kept trusted on read.
     */
    inline_agent: InlineAgentDefinition.optional(),
  }),
  z.object({ type: z.literal('session.thread_status_running'), session_thread_id: ThreadId, agent_name: z.string() }),
  z.object({ type: z.literal('session.thread_status_idle'), session_thread_id: ThreadId, agent_name: z.string(), stop_reason: StopReason, stop_details: z.null().default(null) }),
  z.object({ type: z.literal('session.thread_status_rescheduled'), session_thread_id: ThreadId, agent_name: z.string(), attempt: z.number().int().positive().optional(), retry_in_ms: z.number().int().nonnegative().optional() }),
  z.object({ type: z.literal('session.thread_status_terminated'), session_thread_id: ThreadId, agent_name: z.string() }),
  z.object({ ...onThread, type: z.literal('agent.thread_message_sent'), content: z.array(UserContent), to_session_thread_id: ThreadId, to_agent_name: z.string().nullish() }),
  z.object({ ...onThread, type: z.literal('agent.thread_message_received'), content: z.array(UserContent), from_session_thread_id: ThreadId, from_agent_name: z.string().nullish() }),
]);
export type NewEvent = z.infer<typeof NewEvent>;
export type NewEventInput = z.input<typeof NewEvent>;
export type EventType = NewEvent['type'];
export type NewEventOf<T extends EventType> = Extract<NewEvent, { type: T }>;

export const EVENT_TYPES: EventType[] = NewEvent.options.map((o) => o.shape.type.value);

/**
 * Events beside the conversation: appended at any time (a tab attaches its hand, a hand is lost
 * while the session is idle, the user saves a file), they never give the harness work. The store
 * does not let them decide whether a session needs a harness; decide() ignores them.
 */
export const SIDE_EVENT_TYPES: ReadonlySet<EventType> = new Set<EventType>([
  'hand.provisioned',
  'hand.reattached',
  'hand.released',
  'hand.lost',
  'hand.suspended',
  'hand.resumed',
  'hand.repository_cloned',
  'user.file_edit',
  'mcp.tools_listed',
  'span.outcome_evaluation_ongoing',
  'session.updated',
  'session.usage',
]);
export const EventTypeSchema = z.enum(EVENT_TYPES as [EventType, ...EventType[]]);

/** Fields every stored event carries in addition to its payload. */
export const StoredFields = z.object({
  id: z.string().regex(/^sevt_/, 'must start with sevt_'),
  session_id: z.string().regex(/^sesn_/, 'must start with sesn_'),
  seq: z.number().int().positive(),
  processed_at: z.iso.datetime(),
});
export type StoredFields = z.infer<typeof StoredFields>;
export type StoredEvent = NewEvent & StoredFields;
export type StoredEventOf<T extends EventType> = NewEventOf<T> & StoredFields;

export function parseNewEvent(input: unknown): NewEvent {
  return NewEvent.parse(input);
}

export function parseStoredEvent(input: unknown): StoredEvent {
  const fields = StoredFields.parse(input);
  const payload = NewEvent.parse(input);
  return { ...payload, ...fields };
}

/** Events a user (or a program acting for one) may send into a session. */
export const USER_EVENT_TYPES = ['user.message', 'user.interrupt', 'user.tool_confirmation', 'user.tool_result', 'user.custom_tool_result', 'user.define_outcome'] as const;
export type UserEventType = (typeof USER_EVENT_TYPES)[number];

/** A short, human label of where a zod error points: `content.0.text: expected string`. */
export function describeZodError(err: z.ZodError): string {
  // One message per field (its first failed check): a bad URL is not also reported as a URL with a query.
  const byPath = new Map<string, string>();
  for (const i of err.issues) {
    const where = i.path.length > 0 ? i.path.join('.') : '(root)';
    if (!byPath.has(where)) byPath.set(where, `${where}: ${i.message}`);
  }
  return [...byPath.values()].join('; ');
}

// ── live deltas: streamed to subscribers, never stored ──────────────────────
export type LiveDelta =
  | { kind: 'hand'; session_id: string; hand: string; hand_kind: string; phase: 'starting' | 'ready' | 'failed'; detail?: string }
  /** `event_id`: the id the finished agent.message (agent.thinking) will be stored under. */
  | { kind: 'text'; session_id: string; model_request_start_id: string; index: number; text: string; event_id?: string }
  | { kind: 'thinking'; session_id: string; model_request_start_id: string; index: number; text: string; event_id?: string }
  | { kind: 'tool_input'; session_id: string; model_request_start_id: string; index: number; name: string; partial_json: string };
