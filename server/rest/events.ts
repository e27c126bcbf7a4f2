import 'server-only';
import { z } from 'zod';
import { EventTypeSchema, MAX_OUTCOME_ITERATIONS, type NewEvent, TextBlock, ToolResultContent, UserContent } from '~/lib/events';
import { onPrimaryStream } from '~/lib/threads';
import { ID_PATTERN } from '~/lib/ids';
import { CommonQuery, CreatedAtQuery, Limit, List, Page, createdAtRange, parseInput, queryObject } from '~/server/rest/query';
import type { RestRequest, Route } from '~/server/rest/route-table';
import { ApiError } from '~/server/rest/api-error';
import { loadSession } from '~/server/rest/session-id';
import { sendEvents } from '~/server/commands/session-commands';
import { MAX_RUBRIC_CHARS, checkSystemMessages, defineOutcomeEvent } from '~/server/commands/outcome-commands';
import { streamEvents } from '~/server/rest/event-stream';
import { decodeCursor, encodeCursor } from '~/lib/page-cursor';
import { pageOf } from '~/server/session/keyset-page';

const EventId = z.string().regex(ID_PATTERN.event, 'must be an event id (sevt_…)');
const results = { content: z.array(ToolResultContent).max(100).optional(), is_error: z.boolean().nullish() };

/** What a client may send, as the API's send params define them. */
const SendEvent = z.discriminatedUnion('type', [
  z.object({ type: z.literal('user.message'), content: z.array(UserContent).min(1).max(100) }).strict(),
  // The SDK may name the thread to interrupt (multiagent): that thread only; none: every thread.
  z.object({ type: z.literal('user.interrupt'), session_thread_id: z.string().min(1).max(128).nullish() }).strict(),
  z.object({ type: z.literal('user.tool_confirmation'), tool_use_id: EventId, result: z.enum(['allow', 'deny']), deny_message: z.string().max(10_000).nullish() }).strict(),
  z.object({ type: z.literal('user.custom_tool_result'), custom_tool_use_id: EventId, ...results }).strict(),
  z.object({ type: z.literal('user.tool_result'), tool_use_id: EventId, ...results }).strict(),
  z
    .object({
      type: z.literal('user.define_outcome'),
      description: z.string().trim().min(1, 'must not be empty').max(100_000),
      rubric: z.discriminatedUnion('type', [
        z.object({ type: z.literal('text'), content: z.string().trim().min(1, 'must not be empty').max(MAX_RUBRIC_CHARS) }).strict(),
        z.object({ type: z.literal('file'), file_id: z.string().regex(ID_PATTERN.file, 'must be a file id (file_…)') }).strict(),
      ]),
      max_iterations: z.number().int().min(1).max(MAX_OUTCOME_ITERATIONS).nullish(),
    })
    .strict(),
  z.object({ type: z.literal('system.message'), content: z.array(TextBlock.strict()).min(1).max(100) }).strict(),
]);
const SendBody = z.object({ events: z.array(SendEvent).min(1).max(50) }).strict();
type SendEvent = z.output<typeof SendEvent>;

async function send({ rt, params, body, caller }: RestRequest) {
  const session = await loadSession(rt, params.id);
  const { events } = parseInput(SendBody, body, 'body');
  // A worker answers its session's tool calls and sends nothing else.
  if (caller.kind === 'work_item' && events.some((e) => e.type !== 'user.tool_result')) throw new ApiError('permission_error', "a work item's token sends only user.tool_result events");
  checkSystemMessages(events, (i) => `body: events.${i}`);
  const stored = await Promise.all(
    events.map(async (e, i): Promise<NewEvent> =>
      e.type === 'user.interrupt' ? { type: e.type, ...(e.session_thread_id ? { session_thread_id: e.session_thread_id } : {}) } : e.type === 'user.define_outcome' ? defineOutcomeEvent(rt, e, `body: events.${i}`) : e,
    ),
  );
  return { data: await sendEvents(rt, session.id, stored) };
}

const ListQuery = z
  .object({
    limit: Limit(1000, 100),
    page: Page,
    order: z.enum(['asc', 'desc']).default('asc'),
    types: List(EventTypeSchema),
    ...CreatedAtQuery,
    ...CommonQuery,
  })
  .strict();

async function list({ rt, params, query }: RestRequest) {
  const session = await loadSession(rt, params.id);
  const q = parseInput(ListQuery, queryObject(query), 'query');
  const scope = `events:${session.id}:${q.order}`;
  const after = q.page ? decodeCursor(q.page, scope, [z.number().int().nonnegative()])[0] : null;
  const events = await rt.store.getEvents(session.id, {
    order: q.order,
    limit: q.limit + 1,
    ...(after !== null ? (q.order === 'asc' ? { from: after + 1 } : { to: after - 1 }) : {}),
    ...(q.types && q.types.length > 0 ? { types: q.types } : {}),
    processedAt: createdAtRange(q),
  });
  // The session's stream is its primary thread's: a child's own events are on its thread's list (cursors walk the whole log).
  const page = pageOf(events, q.limit, (last) => encodeCursor(scope, [last.seq]));
  return { ...page, data: page.data.filter(onPrimaryStream) };
}

/** /v1/sessions/{id}/events. */
export const eventRoutes: Route[] = [
  { method: 'GET', path: 'sessions/:id/events', callers: { workItem: 'session' }, handler: list },
  { method: 'POST', path: 'sessions/:id/events', callers: { workItem: 'session' }, handler: send },
  { method: 'GET', path: 'sessions/:id/events/stream', callers: { workItem: 'session' }, handler: (req) => streamEvents(req, onPrimaryStream) },
];
