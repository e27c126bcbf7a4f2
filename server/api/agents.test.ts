import { describe, expect, it } from 'vitest';
import { createCaller } from '~/server/api/root';
import { OWNER } from '~/server/access/testing/callers';
import { demoRuntimePerTest, rejection } from '~/server/api/testing/demo-runtime';

const runtime = demoRuntimePerTest('paddock-agents-api-');

const api = () => createCaller({ runtime: runtime(), caller: OWNER });

const toolset = (policy: Record<string, 'always_allow' | 'always_ask'>) => ({
  type: 'agent_toolset_20260401' as const,
  configs: Object.entries(policy).map(([name, type]) => ({ name: name as 'bash', enabled: true, permission_policy: { type } })),
});

describe('agents over tRPC', () => {
  it('creates an agent, updates it into a new version, lists both versions and archives it', async () => {
    const a = await api().agents.create({ name: 'Reviewer', model: 'claude-sonnet-4-5', system: 'Review.', tools: [toolset({ bash: 'always_ask' })] });
    expect(a).toMatchObject({ name: 'Reviewer', version: 1, model: { id: 'claude-sonnet-4-5' }, system: 'Review.' });
    expect(await api().agents.get({ id: a.id })).toMatchObject({ id: a.id, version: 1 });

    const b = await api().agents.update({ id: a.id, version: 1, name: 'Reviewer 2' });
    expect(b).toMatchObject({ id: a.id, version: 2, name: 'Reviewer 2', system: 'Review.' });
    expect((await api().agents.get({ id: a.id, version: 1 })).name).toBe('Reviewer');
    expect((await api().agents.versions({ id: a.id })).data.map((v) => v.version)).toEqual([2, 1]);
    expect((await api().agents.list({})).data.map((x) => x.id)).toContain(a.id);

    expect((await api().agents.archive({ id: a.id })).archived_at).not.toBeNull();
    expect((await api().agents.list({})).data.map((x) => x.id)).not.toContain(a.id);
    expect((await api().agents.list({ includeArchived: true })).data.map((x) => x.id)).toContain(a.id);
  });

  it('answers an update from a stale version with CONFLICT and writes no version', async () => {
    const a = await api().agents.create({ name: 'A', model: 'm' });
    await api().agents.update({ id: a.id, version: 1, system: 'first' });
    const e = await rejection(api().agents.update({ id: a.id, version: 1, system: 'second' }));
    expect(e.code).toBe('CONFLICT');
    expect((await api().agents.get({ id: a.id })).system).toBe('first');
    expect((await api().agents.versions({ id: a.id })).data).toHaveLength(2);
  });

  it('refuses a malformed agent with BAD_REQUEST naming the field, and stores nothing', async () => {
    const e = await rejection(api().agents.create({ name: 'x', model: 'm', tools: [{ type: 'custom', name: 'bad name!', description: 'd', input_schema: { type: 'object' } }] }));
    expect(e.code).toBe('BAD_REQUEST');
    expect(e.message).toContain('must be 1-64 letters, digits');
    expect((await rejection(api().agents.get({ id: 'sesn_nope' }))).code).toBe('BAD_REQUEST');
    expect((await rejection(api().agents.get({ id: 'agent_01UNKNOWN' }))).code).toBe('NOT_FOUND');
    expect((await api().agents.list({})).data.filter((a) => a.name === 'x')).toEqual([]);
  });

  it('keeps the default agent: archiving it is a CONFLICT', async () => {
    expect((await api().agents.get({ id: 'agent_default' })).name).toBe('Default agent');
    expect((await rejection(api().agents.archive({ id: 'agent_default' }))).code).toBe('CONFLICT');
    expect((await api().agents.get({ id: 'agent_default' })).archived_at).toBeNull();
  });
});

describe('environments over tRPC', () => {
  it('creates, edits, archives and deletes an environment', async () => {
    const env = await api().environments.create({
      name: 'Web',
      config: { type: 'cloud', networking: { type: 'limited', allowed_hosts: ['example.com'], allow_package_managers: true }, packages: { npm: ['left-pad'] } },
    });
    expect(env.config).toMatchObject({ type: 'cloud', networking: { type: 'limited', allowed_hosts: ['example.com'], allow_package_managers: true }, packages: { npm: ['left-pad'], pip: [] } });
    const edited = await api().environments.update({ id: env.id, description: 'open', config: { type: 'cloud', networking: { type: 'unrestricted' } } });
    expect(edited).toMatchObject({ description: 'open', config: { networking: { type: 'unrestricted' } } });
    expect((await api().environments.get({ id: env.id })).description).toBe('open');
    expect((await api().environments.archive({ id: env.id })).archived_at).not.toBeNull();
    expect((await api().environments.list({})).data.map((e) => e.id)).not.toContain(env.id);
    expect(await api().environments.delete({ id: env.id })).toEqual({ id: env.id, type: 'environment_deleted' });
    expect((await rejection(api().environments.get({ id: env.id }))).code).toBe('NOT_FOUND');
  });

  it('refuses a bad host or a type change with BAD_REQUEST, and deleting or archiving the default with CONFLICT', async () => {
    const bad = await rejection(api().environments.create({ name: 'x', config: { type: 'cloud', networking: { type: 'limited', allowed_hosts: ['not a host'] } } }));
    expect(bad.code).toBe('BAD_REQUEST');
    expect(bad.message).toContain('must be a host name');
    const env = await api().environments.create({ name: 'y' });
    expect((await rejection(api().environments.update({ id: env.id, config: { type: 'self_hosted' } }))).code).toBe('BAD_REQUEST');
    expect((await rejection(api().environments.delete({ id: 'env_default' }))).code).toBe('CONFLICT');
    expect((await rejection(api().environments.archive({ id: 'env_default' }))).code).toBe('CONFLICT');
    expect((await api().environments.get({ id: 'env_default' })).archived_at).toBeNull();
  });
});

describe('sessions.create with an agent and an environment', () => {
  it('runs the default agent in the default environment when none is named', async () => {
    const s = await api().sessions.create({});
    expect(s).toMatchObject({ agent: { id: 'agent_default', version: 1 }, environment_id: 'env_default' });
  });

  it('snapshots the named agent version and environment; an unknown or archived one is refused', async () => {
    const a = await api().agents.create({ name: 'Mine', model: 'claude-x', system: 'Be brief.' });
    const env = await api().environments.create({ name: 'Box' });
    const s = await api().sessions.create({ title: 't', agentId: a.id, environmentId: env.id });
    expect(s).toMatchObject({ title: 't', agent: { id: a.id, version: 1, system: 'Be brief.' }, environment_id: env.id });
    await api().agents.update({ id: a.id, system: 'Changed.' });
    expect((await api().sessions.get({ id: s.id })).agent?.system).toBe('Be brief.');

    expect((await rejection(api().sessions.create({ agentId: 'agent_01NOSUCHAGENT' }))).code).toBe('NOT_FOUND');
    await api().agents.archive({ id: a.id });
    const archived = await rejection(api().sessions.create({ agentId: a.id }));
    expect(archived.code).toBe('BAD_REQUEST');
    expect(archived.message).toContain('archived');
    expect((await rejection(api().sessions.create({ agentId: 'nope' }))).code).toBe('BAD_REQUEST');
    expect((await api().sessions.list({})).data).toHaveLength(1);
  });
});

describe('tool confirmations over events.send', () => {
  /** A session whose agent asks before writing, left waiting on the demo brain's write call. */
  async function waitingCall(): Promise<{ sessionId: string; callId: string }> {
    const a = await api().agents.create({ name: 'Careful', model: 'm', tools: [toolset({ write: 'always_ask' })] });
    const s = await api().sessions.create({ agentId: a.id });
    await api().events.send({ sessionId: s.id, event: { type: 'user.message', content: [{ type: 'text', text: 'write notes.txt: hi' }] } });
    await runtime().harness.wake(s.id);
    const events = await api().events.list({ sessionId: s.id });
    const call = events.find((e) => e.type === 'agent.tool_use');
    expect(call).toMatchObject({ name: 'write', evaluated_permission: 'ask' });
    expect(events.at(-1)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'requires_action', event_ids: [call!.id] } });
    return { sessionId: s.id, callId: call!.id };
  }

  it('refuses a verdict, a message and an interrupt to a terminated session with CONFLICT naming it, storing nothing', async () => {
    const { sessionId, callId } = await waitingCall();
    // Ended as the budget watch ends a widget conversation.
    await runtime().store.emitEvent(sessionId, { type: 'session.status_terminated' });
    const seq = (await runtime().store.getSession(sessionId))!.last_seq;
    for (const event of [
      { type: 'user.tool_confirmation' as const, tool_use_id: callId, result: 'allow' as const },
      { type: 'user.message' as const, content: [{ type: 'text' as const, text: 'go on' }] },
      { type: 'user.interrupt' as const },
    ]) {
      const e = await rejection(api().events.send({ sessionId, event }));
      expect(e.code).toBe('CONFLICT');
      expect(e.message).toBe(`session ${sessionId} is terminated and takes no more events`);
    }
    expect((await runtime().store.getSession(sessionId))!.last_seq).toBe(seq);
    expect((await api().sessions.get({ id: sessionId })).status).toBe('terminated');
  });

  it('runs a call that asked once the owner allows it, and stores one verdict only', async () => {
    const { sessionId, callId } = await waitingCall();
    const confirm = (result: 'allow' | 'deny') => api().events.send({ sessionId, event: { type: 'user.tool_confirmation', tool_use_id: callId, result } });
    const allowed = await confirm('allow');
    expect(allowed).toMatchObject({ type: 'user.tool_confirmation', result: 'allow' });
    // Answered once: any later verdict is refused, naming the first.
    const again = await rejection(confirm('deny'));
    expect(again.code).toBe('CONFLICT');
    expect(again.message).toContain('already answered: allow');
    expect((await rejection(confirm('allow'))).code).toBe('CONFLICT');
    await runtime().harness.wake(sessionId);
    const events = await api().events.list({ sessionId });
    expect(events.filter((e) => e.type === 'user.tool_confirmation')).toHaveLength(1);
    const result = events.find((e) => e.type === 'agent.tool_result');
    expect(result).toMatchObject({ tool_use_id: callId, content: [{ type: 'text', text: expect.stringContaining('wrote') as unknown }] });
    expect(result?.type === 'agent.tool_result' && result.is_error).toBeFalsy();
    expect(events.at(-1)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });
    expect((await rejection(confirm('allow'))).code).toBe('CONFLICT');
  });

  it('stores exactly one of two racing verdicts and refuses the other with CONFLICT', async () => {
    const { sessionId, callId } = await waitingCall();
    const verdicts = await Promise.allSettled(
      (['allow', 'deny'] as const).map((result) => api().events.send({ sessionId, event: { type: 'user.tool_confirmation', tool_use_id: callId, result } })),
    );
    expect(verdicts.filter((v) => v.status === 'fulfilled')).toHaveLength(1);
    const lost = verdicts.find((v) => v.status === 'rejected');
    expect((lost as PromiseRejectedResult).reason).toMatchObject({ code: 'CONFLICT' });
    expect(await api().events.list({ sessionId, types: ['user.tool_confirmation'] })).toHaveLength(1);
  });

  it('answers a denied call with the owner\'s message, never running it', async () => {
    const { sessionId, callId } = await waitingCall();
    await api().events.send({ sessionId, event: { type: 'user.tool_confirmation', tool_use_id: callId, result: 'deny', deny_message: 'not that file' } });
    await runtime().harness.wake(sessionId);
    const result = (await api().events.list({ sessionId })).find((e) => e.type === 'agent.tool_result');
    expect(result).toMatchObject({ tool_use_id: callId, is_error: true, content: [{ type: 'text', text: expect.stringContaining('not that file') as unknown }] });
  });

  it('refuses a verdict on a call that does not exist, did not ask, or was given up, and stores nothing', async () => {
    const { sessionId, callId } = await waitingCall();
    const send = (tool_use_id: string) => api().events.send({ sessionId, event: { type: 'user.tool_confirmation', tool_use_id, result: 'allow' } });
    expect((await rejection(send('sevt_01NOSUCHCALL0000000000000'))).code).toBe('BAD_REQUEST');
    const other = await api().sessions.create({});
    expect((await rejection(api().events.send({ sessionId: other.id, event: { type: 'user.tool_confirmation', tool_use_id: callId, result: 'allow' } }))).code).toBe('BAD_REQUEST');
    const notCall = (await api().events.list({ sessionId, types: ['user.message'] }))[0]!.id;
    expect((await rejection(send(notCall))).code).toBe('BAD_REQUEST');
    // A new message gives the waiting call up: a late verdict is a CONFLICT.
    await api().events.send({ sessionId, event: { type: 'user.message', content: [{ type: 'text', text: 'never mind' }] } });
    const late = await rejection(send(callId));
    expect(late.code).toBe('CONFLICT');
    expect(late.message).toContain('no longer waits');
    expect(await api().events.list({ sessionId, types: ['user.tool_confirmation'] })).toEqual([]);
  });

  it('refuses a verdict on a call its policy let run with BAD_REQUEST', async () => {
    const s = await api().sessions.create({});
    await api().events.send({ sessionId: s.id, event: { type: 'user.message', content: [{ type: 'text', text: 'write a.txt: x' }] } });
    await runtime().harness.wake(s.id);
    const call = (await api().events.list({ sessionId: s.id, types: ['agent.tool_use'] }))[0]!;
    const e = await rejection(api().events.send({ sessionId: s.id, event: { type: 'user.tool_confirmation', tool_use_id: call.id, result: 'allow' } }));
    expect(e.code).toBe('BAD_REQUEST');
    expect(e.message).toContain('does not wait');
  });
});
