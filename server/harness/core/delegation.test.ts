import { describe, expect, it } from 'vitest';
import type { ThreadAgent } from '~/lib/agent';
import type { NewEvent } from '~/lib/events';
import { SEND_TO_AGENT_TOOL_NAME } from '~/lib/threads';
import type { AgentToolUse } from '~/server/harness/core/decide';
import { type Delegation, type ThreadEntry, delegationEvents, delegationTools } from '~/server/harness/core/delegation';

const worker: ThreadAgent = {
  id: 'agent_worker',
  type: 'agent',
  version: 1,
  name: 'worker',
  description: 'does the work',
  model: { id: 'claude-fake' },
  system: 'you are worker',
  tools: [],
  mcp_servers: [],
  skills: [],
  execution_identity: null,
};
const from = { primaryId: 'sthr_primary', agentName: 'lead' };
const inlineEnabled: Delegation = { roster: [worker], inlineAgents: true };
const rosterOnly: Delegation = { roster: [worker], inlineAgents: false };

let n = 0;
function call(input: Record<string, unknown>, name = SEND_TO_AGENT_TOOL_NAME): AgentToolUse {
  n++;
  return { type: 'agent.tool_use', id: `sevt_CALL${n}`, name, input, seq: n, session_id: 'sesn_1', processed_at: '2026-12-04T00:00:00.000Z' } as AgentToolUse;
}

const resultOf = (events: readonly NewEvent[]) => events.find((e) => e.type === 'agent.tool_result');
const textOf = (events: readonly NewEvent[]) => JSON.stringify(resultOf(events)?.type === 'agent.tool_result' ? resultOf(events) : null);

describe('inline agents in delegationEvents', () => {
  const define = { agent: 'critic', message: 'review notes.txt', define: { system: 'you are a harsh critic', description: 'reviews' } };

  it('a define spawns a thread whose session.thread_created carries the definition, and no agent id', () => {
    const { events, spawned } = delegationEvents(call(define), inlineEnabled, [], from);
    const created = events.find((e) => e.type === 'session.thread_created');
    expect(created).toMatchObject({ agent_name: 'critic', inline_agent: { system: 'you are a harsh critic', description: 'reviews' }, parent_thread_id: 'sthr_primary' });
    expect(created && 'agent_id' in created).toBe(false);
    expect(spawned).toMatchObject({ agentName: 'critic', inline: { system: 'you are a harsh critic' } });
    expect(events.map((e) => e.type)).toEqual(['session.thread_created', 'agent.thread_message_sent', 'agent.thread_message_received', 'agent.tool_result']);
    expect(resultOf(events)).not.toHaveProperty('is_error');
  });

  it('a second send to an inline agent\'s name continues its thread, with or without the same definition', () => {
    const { spawned } = delegationEvents(call(define), inlineEnabled, [], from);
    const threads: ThreadEntry[] = [spawned!];
    for (const input of [{ agent: 'critic', message: 'and now todo.txt' }, define]) {
      const { events, spawned: again } = delegationEvents(call(input), inlineEnabled, threads, from);
      expect(again).toBeNull();
      expect(events.map((e) => e.type)).toEqual(['agent.thread_message_sent', 'agent.thread_message_received', 'agent.tool_result']);
      expect(events.find((e) => e.type === 'agent.thread_message_received')).toMatchObject({ session_thread_id: spawned!.id });
    }
  });

  it('a different definition for a name already defined is an error result naming its thread', () => {
    const { spawned } = delegationEvents(call(define), inlineEnabled, [], from);
    const { events } = delegationEvents(call({ ...define, define: { system: 'you are kind' } }), inlineEnabled, [spawned!], from);
    expect(events).toHaveLength(1);
    expect(resultOf(events)).toMatchObject({ is_error: true });
    expect(textOf(events)).toContain(`already defined in this session (thread ${spawned!.id})`);
  });

  it('a define when inline agents are not enabled is an error result saying so', () => {
    const { events, spawned } = delegationEvents(call(define), rosterOnly, [], from);
    expect(spawned).toBeNull();
    expect(events).toHaveLength(1);
    expect(resultOf(events)).toMatchObject({ is_error: true });
    expect(textOf(events)).toContain('inline agents are not enabled for this agent');
  });

  it('a define whose name is a rostered agent\'s is an error result', () => {
    const { events, spawned } = delegationEvents(call({ ...define, agent: 'worker' }), inlineEnabled, [], from);
    expect(spawned).toBeNull();
    expect(resultOf(events)).toMatchObject({ is_error: true });
    expect(textOf(events)).toContain('already an agent of your roster');
  });

  it('a send to an unknown name says a define would make it, when inline agents are enabled', () => {
    const { events } = delegationEvents(call({ agent: 'nobody', message: 'hi' }), { roster: [], inlineAgents: true }, [], from);
    expect(resultOf(events)).toMatchObject({ is_error: true });
    expect(textOf(events)).toContain('send with `define`');
  });

  it('list_agents lists the inline agents defined in this session with their threads', () => {
    const { spawned } = delegationEvents(call(define), inlineEnabled, [], from);
    const { events } = delegationEvents(call({}, 'list_agents'), inlineEnabled, [spawned!], from);
    expect(textOf(events)).toContain('- worker (id agent_worker): does the work');
    expect(textOf(events)).toContain(`- critic (inline, defined in this session): reviews — thread ${spawned!.id}`);
  });

  it('offers define in send_to_agent\'s schema only when inline agents are enabled', () => {
    const send = (d: Delegation) => delegationTools(d).find((t) => t.name === SEND_TO_AGENT_TOOL_NAME)!;
    expect(JSON.stringify(send(inlineEnabled).input_schema)).toContain('"define"');
    expect(send(inlineEnabled).description).toContain('define');
    expect(JSON.stringify(send(rosterOnly).input_schema)).not.toContain('"define"');
    expect(send(rosterOnly).description).not.toContain('define');
  });
});
