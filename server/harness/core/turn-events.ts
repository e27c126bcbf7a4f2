import type { NewEvent } from '~/lib/events';
import { SELF_HOSTED_HAND } from '~/lib/hand';
import type { McpToolEntry } from '~/lib/mcp-tools';
import { WEB_FETCH_TOOL, isHandTool } from '~/lib/tools';
import { type AgentTool, routeTool } from '~/lib/toolset';
import type { ModelTurn, TurnBlock } from '~/server/harness/core/model-client';
import { SESSION_EVENTS_TOOL_NAME } from '~/server/harness/core/session-events';
import { isDelegationTool } from '~/lib/threads';

export interface TurnRouting {
  /** The session's agent's tools; null: the built-in default (no policy evaluated). */
  tools: readonly AgentTool[] | null;
  /** The agent's enabled MCP tools, by the name the model calls them. */
  mcpTools: ReadonlyMap<string, McpToolEntry>;
  /** The recall tool (session_events) is offered under the session's context policy. */
  recall: boolean;
  /** The delegation tools (list_agents, send_to_agent) are offered: the primary thread of a session with a roster. */
  delegation?: boolean;
  /** The hand a hand tool's call goes to when it names none. */
  currentHand: string | null;
  /** A self-hosted session: its hand tools are addressed to its worker (SELF_HOSTED_HAND). */
  selfHosted?: boolean;
  /** Ids the turn's message and thinking are stored under (live previews carry them already). */
  messageId: string;
  thinkingId: string;
}

/**
 * A finished model turn as the events stored for it, in order: its thinking, its text, one call
 * event per tool use (routed: an MCP call, the recall tool, a custom tool's call for the client,
 * or a toolset call addressed to its hand with the agent's policy evaluated now), then `end`.
 * `ids` names the id each event is stored under (undefined: a new one).
 */
export function turnEvents(turn: ModelTurn, r: TurnRouting, end: NewEvent): { events: NewEvent[]; ids: (string | undefined)[] } {
  const events: NewEvent[] = [];
  const thinking = turn.content.filter((b): b is Extract<TurnBlock, { type: 'thinking' }> => b.type === 'thinking');
  if (thinking.length > 0) events.push({ type: 'agent.thinking', content: thinking });
  const texts = turn.content.filter((b): b is Extract<TurnBlock, { type: 'text' }> => b.type === 'text' && b.text.length > 0);
  if (texts.length > 0) events.push({ type: 'agent.message', content: texts.map((t) => ({ type: 'text', text: t.text })) });
  for (const b of turn.content) {
    if (b.type !== 'tool_use') continue;
    const mcp = r.mcpTools.get(b.name);
    if (mcp) {
      events.push({ type: 'agent.mcp_tool_use', name: mcp.tool, mcp_server_name: mcp.server, input: b.input, model_tool_use_id: b.id, evaluated_permission: mcp.permission });
      continue;
    }
    // The agent's policy is evaluated now and stored with the call: a call that asks waits for
    // the user's confirmation, a custom tool's call waits for the client's result.
    if ((b.name === SESSION_EVENTS_TOOL_NAME && r.recall) || (r.delegation && isDelegationTool(b.name))) {
      events.push({ type: 'agent.tool_use', name: b.name, input: b.input, model_tool_use_id: b.id, evaluated_permission: 'allow' });
      continue;
    }
    const route = r.tools ? routeTool(r.tools, b.name) : null;
    if (route?.kind === 'custom') {
      events.push({ type: 'agent.custom_tool_use', name: b.name, input: b.input, model_tool_use_id: b.id });
      continue;
    }
    // Each call is addressed to the hand it will run on (named, or the current one), so a browser
    // tab can see in the log which calls are its own. web_fetch runs on no hand: never addressed
    // to one (a browser tab would claim it).
    const named = typeof b.input.hand === 'string' && b.input.hand.length > 0 && b.name !== WEB_FETCH_TOOL.name ? b.input.hand : undefined;
    const hand = r.selfHosted && isHandTool(b.name) ? SELF_HOSTED_HAND : (named ?? (isHandTool(b.name) ? (r.currentHand ?? undefined) : undefined));
    const permission = route === null ? undefined : route.kind === 'toolset' ? route.permission : 'deny';
    events.push({ type: 'agent.tool_use', name: b.name, input: b.input, model_tool_use_id: b.id, ...(hand ? { hand } : {}), ...(permission ? { evaluated_permission: permission } : {}) });
  }
  events.push(end);
  return { events, ids: events.map((e) => (e.type === 'agent.message' ? r.messageId : e.type === 'agent.thinking' ? r.thinkingId : undefined)) };
}

/** Whether a turn calls any tool (its calls then need the current hand's name). */
export function callsTools(turn: ModelTurn): boolean {
  return turn.content.some((b) => b.type === 'tool_use');
}

/**
 * A turn the user interrupted, as stored: the text streamed so far as an `agent.message` marked
 * `interrupted` (under the id its live preview carried, so the reader keeps what they saw and the
 * model sees what it said), then `end`. Thinking and half-made tool calls are dropped: neither
 * can be replayed unfinished (a thinking block needs its signature, a call its whole input).
 */
export function interruptedTurnEvents(streamedText: string, messageId: string, end: NewEvent): { events: NewEvent[]; ids: (string | undefined)[] } {
  if (!/\S/.test(streamedText)) return { events: [end], ids: [undefined] };
  return {
    events: [{ type: 'agent.message', content: [{ type: 'text', text: streamedText }], interrupted: true }, end],
    ids: [messageId, undefined],
  };
}
