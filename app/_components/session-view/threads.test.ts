import { describe, expect, it } from 'vitest';
import { storedLog } from '~/lib/testing/stored-log';
import { conversation } from '~/app/_components/session-view/derive';
import { eventsOfThread, threadsOf } from '~/app/_components/session-view/threads';

const T = 'sthr_01JZ0000000000000000000000';

describe('a multiagent session on its page', () => {
  const events = storedLog(
    { type: 'user.message', content: [{ type: 'text', text: 'split it' }] },
    { type: 'session.thread_created', session_thread_id: T, agent_name: 'alpha', workflow_run_id: null },
    { type: 'agent.thread_message_sent', content: [{ type: 'text', text: 'do half' }], to_session_thread_id: T, to_agent_name: 'alpha' },
    { type: 'agent.thread_message_received', session_thread_id: T, content: [{ type: 'text', text: 'do half' }], from_session_thread_id: 'sthr_01JZ0000000000000000000001', from_agent_name: 'lead' },
    { type: 'session.thread_status_running', session_thread_id: T, agent_name: 'alpha' },
    { type: 'agent.tool_use', session_thread_id: T, name: 'bash', input: { command: 'ls' }, model_tool_use_id: 'toolu_1', evaluated_permission: 'ask' },
    { type: 'agent.message', session_thread_id: T, content: [{ type: 'text', text: 'half done' }] },
    // Its report: sent by the child, received by the coordinator (both on the API's primary stream).
    { type: 'agent.thread_message_sent', session_thread_id: T, content: [{ type: 'text', text: 'half done' }], to_session_thread_id: 'sthr_01JZ0000000000000000000001' },
    { type: 'agent.thread_message_received', content: [{ type: 'text', text: 'half done' }], from_session_thread_id: T, from_agent_name: 'alpha' },
  );

  it('lists each child with its agent, status and last activity', () => {
    expect(threadsOf(events)).toMatchObject([{ id: T, agentName: 'alpha', status: 'running' }]);
  });

  it("shows the delegation and the report inline in the coordinator's conversation (the report once), with a child's call that waits for a verdict, but not the child's own words", () => {
    const kinds = conversation(eventsOfThread(events, null)).map((i) => i.kind);
    expect(kinds).toEqual(['user', 'thread-sent', 'tool', 'thread-received']);
  });

  it('says a child idle on its call that asks first needs approval, and one idle on a custom tool waits', () => {
    // storedLog numbers ids by position: the call is the second event.
    const call = `sevt_${'2'.padStart(26, '0')}`;
    const idleOn = (ids: string[]) =>
      storedLog(
        { type: 'session.thread_created', session_thread_id: T, agent_name: 'alpha', workflow_run_id: null },
        { type: 'agent.tool_use', session_thread_id: T, name: 'bash', input: { command: 'ls' }, model_tool_use_id: 'toolu_1', evaluated_permission: 'ask' },
        { type: 'session.thread_status_idle', session_thread_id: T, agent_name: 'alpha', stop_reason: { type: 'requires_action', event_ids: ids }, stop_details: null },
      );
    expect(threadsOf(idleOn([call]))[0]?.status).toBe('needs_approval');
    expect(threadsOf(idleOn(['sevt_custom']))[0]?.status).toBe('waiting');
  });

  it("labels a child's waiting call in the coordinator's conversation with the child agent's name, and not in the child's own", () => {
    const primary = conversation(eventsOfThread(events, null), { primary: true }).find((i) => i.kind === 'tool');
    expect(primary).toMatchObject({ kind: 'tool', askedBy: 'alpha' });
    const own = conversation(eventsOfThread(events, T)).find((i) => i.kind === 'tool');
    expect(own && 'askedBy' in own ? own.askedBy : undefined).toBeUndefined();
  });

  it("shows a child's own conversation when it is picked", () => {
    expect(conversation(eventsOfThread(events, T)).map((i) => i.kind)).toEqual(['thread-received', 'tool', 'agent', 'thread-sent']);
  });
});
