import { z } from 'zod';
import type { SessionAgent, ThreadAgent } from '~/lib/agent';
import { InlineAgentDefinition, type NewEvent, type StoredEvent, type TextBlock, describeZodError } from '~/lib/events';
import type { ToolSpec } from '~/lib/hand';
import { LIST_AGENTS_TOOL_NAME, SEND_TO_AGENT_TOOL_NAME, spawnedThreadId } from '~/lib/threads';
import { jsonSchemaOf } from '~/lib/tool-inputs';
import { unreachable } from '~/lib/unreachable';
import type { AgentToolUse } from '~/server/harness/core/decide';

/**
 * The coordinator's delegation tools (multiagent), run by the harness on no hand: `list_agents`
 * (the roster, and the inline agents defined so far) and `send_to_agent` (a message to an agent:
 * the first one spawns its thread, a later one continues it; with inline agents enabled, a send
 * may define a new agent). Spawning returns at once; the agent's report comes back as a message
 * in a later turn. Pure: the run stores what these return, as one keyed batch per call.
 */

/** What a session's primary thread may delegate to: its roster (resolved when the session was made), and whether it may define inline agents. */
export interface Delegation {
  roster: readonly ThreadAgent[];
  inlineAgents: boolean;
}

const NO_DELEGATION: Delegation = { roster: [], inlineAgents: false };

/** The one reading of a session agent's `multiagent` for its threads, whatever shape it was given in. */
export function delegationOf(agent: SessionAgent | null | undefined): Delegation {
  const m = agent?.multiagent;
  if (!m) return NO_DELEGATION;
  switch (m.type) {
    case 'coordinator':
      return { roster: m.agents, inlineAgents: false };
    case 'multiagent_20261001':
      return m.subagents.type === 'enabled' ? { roster: m.subagents.predefined_agents, inlineAgents: m.subagents.inline_agents.type === 'enabled' } : NO_DELEGATION;
    default:
      return unreachable(m);
  }
}

/** Whether the primary thread delegates at all (an empty roster still does when it may define inline agents). */
export function delegates(d: Delegation): boolean {
  return d.roster.length > 0 || d.inlineAgents;
}

/** Whether a session runs threads: its agent delegates. */
export function runsThreads(agent: SessionAgent | null | undefined): boolean {
  return delegates(delegationOf(agent));
}

const AgentName = z.string().min(1).max(256);
const Define = z
  .object({
    system: InlineAgentDefinition.shape.system.describe('The new agent\'s system prompt: who it is and how it works.'),
    description: z.string().max(2048).optional().describe('What it is for, as list_agents shows it.'),
  })
  .strict();
const SendFields = {
  agent: AgentName.describe('The agent to send to: its id or its name, as list_agents gives them.'),
  message: z.string().min(1).max(100_000).describe('What to ask of it. It works on its own, in its own context: say everything it needs.'),
};
/** What a send is parsed with, whether or not inline agents are enabled (a `define` they do not allow gets its own error). */
const SendInput = z.object({ ...SendFields, define: Define.optional() }).strict();
const SendInputRosterOnly = z.object(SendFields).strict();
const SendInputWithDefine = z
  .object({
    ...SendFields,
    agent: AgentName.describe('The agent to send to: its id or its name, as list_agents gives them; with `define`, the name of the new agent (not one of your roster).'),
    define: Define.optional().describe('Defines a new agent named `agent` for this session (not saved): it runs your model and tools with this system prompt. Give it only on the first send; later sends to that name continue its thread.'),
  })
  .strict();

export const LIST_AGENTS_TOOL: ToolSpec = {
  name: LIST_AGENTS_TOOL_NAME,
  description: 'List the agents you can delegate to (your roster, and agents you defined in this session): each one\'s name, id and description, and its thread if it has one.',
  input_schema: jsonSchemaOf(z.object({}).strict()),
};

const SEND_DESCRIPTION =
  'Send a message to an agent of your roster. The first message starts its thread, a later one continues it. ' +
  'It returns at once: the agent works meanwhile (it shares your workspace), and its report comes back to you as a message in a later turn.';

export const SEND_TO_AGENT_TOOL: ToolSpec = { name: SEND_TO_AGENT_TOOL_NAME, description: SEND_DESCRIPTION, input_schema: jsonSchemaOf(SendInputRosterOnly) };

/** send_to_agent as offered when the coordinator may define inline agents: `define` is described only then. */
export const SEND_TO_AGENT_INLINE_TOOL: ToolSpec = {
  name: SEND_TO_AGENT_TOOL_NAME,
  description: `${SEND_DESCRIPTION} You may also define a new agent for this session with \`define\` (its system prompt): it is not saved, runs your model and tools, and cannot delegate itself.`,
  input_schema: jsonSchemaOf(SendInputWithDefine),
};

export const DELEGATION_TOOLS: readonly ToolSpec[] = [LIST_AGENTS_TOOL, SEND_TO_AGENT_TOOL];

/** The delegation tools a coordinator is offered. */
export function delegationTools(d: Delegation): readonly ToolSpec[] {
  return d.inlineAgents ? [LIST_AGENTS_TOOL, SEND_TO_AGENT_INLINE_TOOL] : DELEGATION_TOOLS;
}

/** A session's child threads as the log made them: by thread id, the agent each runs. */
export interface ThreadEntry {
  id: string;
  /** The rostered agent's id ('' for an inline agent). */
  agentId: string;
  agentName: string;
  /** An inline agent's definition, as its `session.thread_created` carries it; absent: a rostered agent. */
  inline?: InlineAgentDefinition;
}

const sameDefinition = (a: InlineAgentDefinition, b: InlineAgentDefinition) => a.system === b.system && a.description === b.description;

/** What one delegation call stores (one keyed batch): its result, and for a send the thread's start and both sides of the message. */
export function delegationEvents(
  call: AgentToolUse,
  delegation: Delegation,
  threads: readonly ThreadEntry[],
  from: { primaryId: string; agentName: string },
): { events: NewEvent[]; spawned: ThreadEntry | null } {
  const { roster } = delegation;
  const result = (text: string, isError = false): NewEvent => ({ type: 'agent.tool_result', tool_use_id: call.id, content: [{ type: 'text', text }], ...(isError ? { is_error: true } : {}) });
  const fail = (text: string) => ({ events: [result(`send_to_agent: ${text}`, true)], spawned: null });
  const inlineThreads = threads.filter((t) => t.inline !== undefined);
  if (call.name === LIST_AGENTS_TOOL_NAME) {
    const lines = [
      ...roster.map((a) => {
        const t = threads.find((x) => x.inline === undefined && x.agentId === a.id);
        return `- ${a.name} (id ${a.id})${a.description ? `: ${a.description}` : ''}${t ? ` — thread ${t.id}` : ''}`;
      }),
      ...inlineThreads.map((t) => `- ${t.agentName} (inline, defined in this session)${t.inline?.description ? `: ${t.inline.description}` : ''} — thread ${t.id}`),
    ];
    const define = delegation.inlineAgents ? '\nYou can also define a new agent with send_to_agent\'s `define`.' : '';
    return { events: [result(lines.length === 0 ? `You have no agents to delegate to.${define}` : `Agents you can delegate to:\n${lines.join('\n')}${define}`)], spawned: null };
  }
  const parsed = SendInput.safeParse(call.input);
  if (!parsed.success) return fail(describeZodError(parsed.error));
  const { agent: name, message, define } = parsed.data;
  const rostered = roster.find((a) => a.id === name) ?? roster.find((a) => a.name === name);
  const inlineThread = inlineThreads.find((t) => t.agentName === name);
  let target: { agentId: string; name: string; inline?: InlineAgentDefinition };
  if (define) {
    if (!delegation.inlineAgents) return fail('inline agents are not enabled for this agent: `define` is not allowed; send to an agent of your roster');
    if (rostered) return fail(`${JSON.stringify(name)} is already an agent of your roster: give the new agent another name, or send without \`define\``);
    const def: InlineAgentDefinition = { system: define.system, description: define.description ?? null };
    // The same definition again continues its thread (a model may repeat itself); a different one would silently be ignored.
    if (inlineThread && !sameDefinition(inlineThread.inline!, def)) return fail(`${JSON.stringify(name)} is already defined in this session (thread ${inlineThread.id}): send without \`define\` to continue it, or define an agent of another name`);
    target = { agentId: '', name, inline: def };
  } else if (rostered) target = { agentId: rostered.id, name: rostered.name };
  else if (inlineThread) target = { agentId: '', name, inline: inlineThread.inline! };
  else {
    const known = [...roster.map((a) => a.name), ...inlineThreads.map((t) => t.agentName)].join(', ') || 'none';
    return fail(`${JSON.stringify(name)} is not an agent of your roster${delegation.inlineAgents ? ' nor one you defined' : ''} (${known})${delegation.inlineAgents ? '; to make a new one, send with `define`' : ''}`);
  }
  const existing = target.inline ? inlineThread : threads.find((t) => t.inline === undefined && t.agentId === target.agentId);
  const thread: ThreadEntry = existing ?? { id: spawnedThreadId(call.id), agentId: target.agentId, agentName: target.name, ...(target.inline ? { inline: target.inline } : {}) };
  const content: TextBlock[] = [{ type: 'text', text: message }];
  const created: NewEvent = {
    type: 'session.thread_created',
    session_thread_id: thread.id,
    agent_name: target.name,
    ...(target.inline ? { inline_agent: target.inline } : { agent_id: target.agentId }),
    parent_thread_id: from.primaryId,
    workflow_run_id: null,
  };
  const events: NewEvent[] = [
    ...(existing ? [] : [created]),
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
