import { z } from 'zod';
import type { SessionMultiagent, ThreadAgent } from '~/lib/agent';
import { type NewEvent, type StoredEvent, type TextBlock, describeZodError } from '~/lib/events';
import type { ToolSpec } from '~/lib/hand';
import { LIST_AGENTS_TOOL_NAME, SEND_TO_AGENT_TOOL_NAME, spawnedThreadId } from '~/lib/threads';
import { jsonSchemaOf } from '~/lib/tool-inputs';
import type { AgentToolUse } from '~/server/harness/core/decide';

/**
 * The coordinator's delegation tools (multiagent), run by the harness on no hand: `list_agents`
 * (the roster) and `send_to_agent` (a message to a rostered agent: the first one spawns its thread,
 * a later one continues it). Spawning returns at once; the agent's report comes back as a message
 * in a later turn. Pure: the run stores what these return, as one keyed batch per call.
 */

/** The agents a session's primary thread may delegate to (its roster, resolved when it was made). */
export function rosterOfSession(m: SessionMultiagent | null | undefined): ThreadAgent[] {
  if (!m) return [];
  if (m.type === 'coordinator') return m.agents;
  return m.subagents.type === 'enabled' ? m.subagents.predefined_agents : [];
}

const SendInput = z
  .object({
    agent: z.string().min(1).max(256).describe('The agent to send to: its id or its name, as list_agents gives them.'),
    message: z.string().min(1).max(100_000).describe('What to ask of it. It works on its own, in its own context: say everything it needs.'),
  })
  .strict();

export const LIST_AGENTS_TOOL: ToolSpec = {
  name: LIST_AGENTS_TOOL_NAME,
  description: 'List the agents you can delegate to (your roster): each one\'s id, name and description, and its thread if it has one.',
  input_schema: jsonSchemaOf(z.object({}).strict()),
};

export const SEND_TO_AGENT_TOOL: ToolSpec = {
  name: SEND_TO_AGENT_TOOL_NAME,
  description:
    'Send a message to an agent of your roster. The first message starts its thread, a later one continues it. ' +
    'It returns at once: the agent works meanwhile (it shares your workspace), and its report comes back to you as a message in a later turn.',
  input_schema: jsonSchemaOf(SendInput),
};

export const DELEGATION_TOOLS: readonly ToolSpec[] = [LIST_AGENTS_TOOL, SEND_TO_AGENT_TOOL];

/** A session's child threads as the log made them: by thread id, the agent each runs. */
export interface ThreadEntry {
  id: string;
  agentId: string;
  agentName: string;
}

/** What one delegation call stores (one keyed batch): its result, and for a send the thread's start and both sides of the message. */
export function delegationEvents(
  call: AgentToolUse,
  roster: readonly ThreadAgent[],
  threads: readonly ThreadEntry[],
  from: { primaryId: string; agentName: string },
): { events: NewEvent[]; spawned: ThreadEntry | null } {
  const result = (text: string, isError = false): NewEvent => ({ type: 'agent.tool_result', tool_use_id: call.id, content: [{ type: 'text', text }], ...(isError ? { is_error: true } : {}) });
  if (call.name === LIST_AGENTS_TOOL_NAME) {
    const lines = roster.map((a) => {
      const t = threads.find((x) => x.agentId === a.id);
      return `- ${a.name} (id ${a.id})${a.description ? `: ${a.description}` : ''}${t ? ` — thread ${t.id}` : ''}`;
    });
    return { events: [result(roster.length === 0 ? 'You have no agents to delegate to.' : `Agents you can delegate to:\n${lines.join('\n')}`)], spawned: null };
  }
  const parsed = SendInput.safeParse(call.input);
  if (!parsed.success) return { events: [result(`send_to_agent: ${describeZodError(parsed.error)}`, true)], spawned: null };
  const { agent: name, message } = parsed.data;
  const target = roster.find((a) => a.id === name) ?? roster.find((a) => a.name === name);
  if (!target) return { events: [result(`send_to_agent: ${JSON.stringify(name)} is not an agent of your roster (${roster.map((a) => a.name).join(', ') || 'empty'})`, true)], spawned: null };
  const existing = threads.find((t) => t.agentId === target.id);
  const thread = existing ?? { id: spawnedThreadId(call.id), agentId: target.id, agentName: target.name };
  const content: TextBlock[] = [{ type: 'text', text: message }];
  const events: NewEvent[] = [
    ...(existing ? [] : [{ type: 'session.thread_created', session_thread_id: thread.id, agent_name: target.name, agent_id: target.id, parent_thread_id: from.primaryId, workflow_run_id: null } satisfies NewEvent]),
    { type: 'agent.thread_message_sent', content, to_session_thread_id: thread.id, to_agent_name: target.name },
    { type: 'agent.thread_message_received', session_thread_id: thread.id, content, from_session_thread_id: from.primaryId, from_agent_name: from.agentName },
    result(`${existing ? 'Sent to' : 'Started'} ${target.name} (thread ${thread.id}). It works on it now; its report comes back to you as a message in a later turn.`),
  ];
  return { events, spawned: existing ? null : thread };
}

/**
 * What a child thread reports back when it goes idle at the end of its turn: what it said since
 * its last message in, as a message to the primary thread (both sides of it).
 */
export function reportEvents(threadEvents: readonly StoredEvent[], thread: ThreadEntry, primaryId: string): NewEvent[] {
  let lastIn = -1;
  threadEvents.forEach((e, i) => {
    if (e.type === 'agent.thread_message_received') lastIn = i;
  });
  const said = threadEvents
    .slice(lastIn + 1)
    .flatMap((e) => (e.type === 'agent.message' ? e.content.flatMap((b) => (b.type === 'text' && /\S/.test(b.text) ? [b.text] : [])) : []));
  const text = said.length > 0 ? said.join('\n\n') : '(finished without a message)';
  const content: TextBlock[] = [{ type: 'text', text }];
  return [
    { type: 'agent.thread_message_sent', session_thread_id: thread.id, content, to_session_thread_id: primaryId, to_agent_name: null },
    // On the primary thread: `session_thread_id` present but undefined, so a child's writer leaves it off.
    { type: 'agent.thread_message_received', session_thread_id: undefined, content, from_session_thread_id: thread.id, from_agent_name: thread.agentName },
  ];
}

/** A child thread's writes: its id on each, and the session's statuses as the thread's own. */
export function asThreadEvent(e: NewEvent, thread: ThreadEntry): NewEvent {
  const t = { session_thread_id: thread.id, agent_name: thread.agentName };
  switch (e.type) {
    case 'session.status_running':
      return { type: 'session.thread_status_running', ...t };
    case 'session.status_idle':
      return { type: 'session.thread_status_idle', ...t, stop_reason: e.stop_reason, stop_details: null };
    case 'session.status_rescheduled':
      return { type: 'session.thread_status_rescheduled', ...t, ...(e.attempt !== undefined ? { attempt: e.attempt } : {}), ...(e.retry_in_ms !== undefined ? { retry_in_ms: e.retry_in_ms } : {}) };
    case 'session.status_terminated':
      return { type: 'session.thread_status_terminated', ...t };
    default:
      // Events already on a thread (a report's message to the primary) keep theirs.
      return 'session_thread_id' in e ? e : { ...e, session_thread_id: thread.id };
  }
}
