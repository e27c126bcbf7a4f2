import { z } from 'zod';
import { type StoredEvent, describeZodError } from '~/lib/events';
import { ToolError, type ToolSpec } from '~/lib/hand';
import { jsonSchemaOf } from '~/lib/tool-inputs';

/**
 * The brain's recall: `session_events` reads any slice of the session's own log — the part a
 * context policy left out of its context included — by seq range, type and text, rendered one
 * event per line. Run by the harness, on no hand; offered to agents whose context policy leaves
 * anything out (every policy but `full`).
 */
export const SESSION_EVENTS_TOOL_NAME = 'session_events';

const Input = z
  .object({
    from: z.number().int().optional().describe('First seq to read; negative counts back from the newest event (-20: the last twenty). Default 1.'),
    to: z.number().int().min(1).optional().describe('Last seq to read (inclusive). Default: the newest.'),
    types: z.array(z.string().min(1).max(64)).max(30).optional().describe('Only these event types, e.g. ["user.message", "agent.tool_result"].'),
    query: z.string().min(1).max(200).optional().describe('Only events whose text contains this (case-insensitive).'),
    limit: z.number().int().min(1).max(200).optional().describe('At most this many events (default 50); the newest matches when from is negative, else the first.'),
  })
  .strict();

export const SESSION_EVENTS_TOOL: ToolSpec = {
  name: SESSION_EVENTS_TOOL_NAME,
  description:
    "Read your own session's event log: any part of it, including what is no longer in your context (older turns, cleared tool outputs, what a summary stands for). " +
    'Filter by seq range (from/to; a negative from counts back from the newest), by event type and by text (query). One event per line: seq, type, content.',
  input_schema: jsonSchemaOf(Input),
};

/** One event's line is cut here; the whole answer at MAX_ANSWER. */
const MAX_LINE = 2_000;
const MAX_ANSWER = 40_000;

/** An event as one line: what it says, without ids or times. */
export function renderEvent(e: StoredEvent): string {
  const x = e as { content?: unknown; input?: unknown; name?: string; summary?: string; error?: { type: string; message: string }; reason?: string; hand?: string; is_error?: boolean };
  const text = (blocks: unknown) =>
    Array.isArray(blocks)
      ? blocks
          .map((b: { type?: string; text?: string }) => (b.type === 'text' ? (b.text ?? '') : `[${b.type ?? 'block'}]`))
          .join(' ')
      : typeof blocks === 'string'
        ? blocks
        : '';
  let body: string;
  switch (e.type) {
    case 'user.message':
    case 'agent.message':
      body = text(x.content);
      break;
    case 'agent.tool_use':
    case 'agent.mcp_tool_use':
    case 'agent.custom_tool_use':
      body = `${x.name ?? ''} ${JSON.stringify(x.input ?? {})}${x.hand ? ` on ${x.hand}` : ''}`;
      break;
    case 'agent.tool_result':
    case 'agent.mcp_tool_result':
    case 'user.tool_result':
    case 'user.custom_tool_result':
      body = `${x.is_error ? '(error) ' : ''}${text(x.content)}`;
      break;
    case 'agent.thread_context_compacted':
      body = x.summary ?? '';
      break;
    case 'session.error':
      body = x.error ? `${x.error.type}: ${x.error.message}` : '';
      break;
    default: {
      // Ids (the event's, the span's it closes) mean nothing to the model: left out.
      const rest = Object.fromEntries(Object.entries(e).filter(([k]) => !['seq', 'type', 'processed_at'].includes(k) && k !== 'id' && !k.endsWith('_id')));
      body = Object.keys(rest).length > 0 ? JSON.stringify(rest) : '';
    }
  }
  const line = `#${e.seq} ${e.type}${body ? ` ${body.replace(/\s+/g, ' ').trim()}` : ''}`;
  return line.length > MAX_LINE ? `${line.slice(0, MAX_LINE)} […${line.length - MAX_LINE} more characters: narrow from/to to this seq]` : line;
}

/** Runs one call: the matching events of `events` (the session's whole log), or a ToolError naming the bad input. */
export function sessionEvents(raw: Record<string, unknown>, events: readonly StoredEvent[]): string {
  const parsed = Input.safeParse(raw);
  if (!parsed.success) throw new ToolError(`session_events: ${describeZodError(parsed.error)}`);
  const { from, to, types, query, limit = 50 } = parsed.data;
  const newest = events.at(-1)?.seq ?? 0;
  const start = from === undefined ? 1 : from < 0 ? Math.max(1, newest + from + 1) : from;
  const end = to ?? newest;
  const wanted = types ? new Set(types) : null;
  const needle = query?.toLowerCase();
  const lines: string[] = [];
  for (const e of events) {
    if (e.seq < start || e.seq > end || (wanted && !wanted.has(e.type))) continue;
    const line = renderEvent(e);
    if (needle && !line.toLowerCase().includes(needle)) continue;
    lines.push(line);
  }
  const picked = from !== undefined && from < 0 ? lines.slice(-limit) : lines.slice(0, limit);
  const more = lines.length - picked.length;
  let out = '';
  let shown = 0;
  for (const l of picked) {
    if (out.length + l.length > MAX_ANSWER) break;
    out += `${l}\n`;
    shown += 1;
  }
  const header = `${lines.length} event${lines.length === 1 ? '' : 's'} match in ${start}–${end} (the log has ${newest})${shown < lines.length ? `; showing ${shown}${more > 0 || shown < picked.length ? ': narrow the range or raise limit for the rest' : ''}` : ''}.`;
  return `${header}\n${out}`.trimEnd();
}
