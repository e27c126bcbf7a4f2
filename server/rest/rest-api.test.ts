import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAnthropicModel } from '~/server/harness/anthropic-model';
import { type FakeMessagesApi, startFakeMessagesApi, textResponse, toolUseResponse } from '~/server/harness/testing/fake-messages-api';
import { testRuntime } from '~/server/harness/testing/test-runtime';
import { handleRest } from '~/server/rest/handler';
import { type FetchServer, serveFetch } from '~/server/rest/testing/serve-fetch';
import type { Runtime } from '~/server/runtime';
import { openSqliteStore } from '~/server/session/sqlite-store';

const KEY = 'test-api-key-0123456789';
let dir: string;
let fake: FakeMessagesApi;
let rt: Runtime;
let server: FetchServer;
let client: Anthropic;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-rest-'));
  fake = await startFakeMessagesApi();
  const store = await openSqliteStore({ file: path.join(dir, 'db.sqlite') });
  rt = testRuntime({
    store,
    model: createAnthropicModel({ apiKey: 'model-key', baseURL: fake.url, model: 'claude-fake-test' }),
    dataDir: dir,
    env: { PADDOCK_API_KEY: KEY },
    harness: { retryBaseMs: 5, leaseTtlMs: 2_000 },
  });
  await rt.agents.ensureDefaults();
  server = await serveFetch((req) => handleRest(req, { runtime: () => Promise.resolve(rt), maxBodyBytes: 256 * 1024 }));
  client = new Anthropic({ apiKey: KEY, baseURL: server.url, maxRetries: 0 });
});

afterEach(async () => {
  await server.close();
  await rt.harness.close();
  await rt.store.close();
  await fake.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Collects streamed events until one matches `until`. */
async function streamUntil(sessionId: string, until: (e: { type: string }) => boolean, params: Parameters<typeof client.beta.sessions.events.stream>[1] = {}) {
  const seen: Array<{ type: string; [k: string]: unknown }> = [];
  const stream = await client.beta.sessions.events.stream(sessionId, params);
  for await (const e of stream) {
    seen.push(e as never);
    if (until(e)) break;
  }
  stream.controller.abort();
  return seen;
}

describe('the Managed Agents API through the official SDK', () => {
  it('creates, versions, lists and archives agents, with the version check', async () => {
    const agent = await client.beta.agents.create({ name: 'Coder', model: 'claude-sonnet-5-5', system: 'Be brief.', tools: [{ type: 'agent_toolset_20260401' }] });
    expect(agent).toMatchObject({ type: 'agent', version: 1, name: 'Coder', model: { id: 'claude-sonnet-5-5' }, system: 'Be brief.' });
    const v2 = await client.beta.agents.update(agent.id, { version: 1, system: 'Be very brief.' });
    expect(v2.version).toBe(2);
    await expect(client.beta.agents.update(agent.id, { version: 1, name: 'stale' })).rejects.toBeInstanceOf(Anthropic.ConflictError);
    expect((await client.beta.agents.retrieve(agent.id, { version: 1 })).system).toBe('Be brief.');
    const versions = [];
    for await (const v of client.beta.agents.versions.list(agent.id)) versions.push(v.version);
    expect(versions).toEqual([2, 1]);
    const listed = [];
    for await (const a of client.beta.agents.list()) listed.push(a.id);
    expect(listed).toContain(agent.id);
    expect((await client.beta.agents.archive(agent.id)).archived_at).not.toBeNull();
    const after = [];
    for await (const a of client.beta.agents.list()) after.push(a.id);
    expect(after).not.toContain(agent.id);
  });

  it('creates, updates, lists, archives and deletes environments; the default cannot be deleted', async () => {
    const env = await client.beta.environments.create({ name: 'web', config: { type: 'cloud', networking: { type: 'limited', allowed_hosts: ['example.com'] } } });
    expect(env).toMatchObject({ type: 'environment', name: 'web', config: { type: 'cloud', networking: { type: 'limited', allowed_hosts: ['example.com'] } } });
    expect((await client.beta.environments.update(env.id, { name: 'web2' })).name).toBe('web2');
    expect((await client.beta.environments.retrieve(env.id)).name).toBe('web2');
    const ids = [];
    for await (const e of client.beta.environments.list()) ids.push(e.id);
    expect(ids).toEqual(expect.arrayContaining([env.id, 'env_default']));
    expect((await client.beta.environments.archive(env.id)).archived_at).not.toBeNull();
    expect(await client.beta.environments.delete(env.id)).toMatchObject({ id: env.id, type: 'environment_deleted' });
    await expect(client.beta.environments.retrieve(env.id)).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    await expect(client.beta.environments.delete('env_default')).rejects.toBeInstanceOf(Anthropic.ConflictError);
    await expect(client.beta.environments.archive('env_default')).rejects.toBeInstanceOf(Anthropic.ConflictError);
    await expect(client.beta.agents.archive('agent_default')).rejects.toBeInstanceOf(Anthropic.ConflictError);
    expect((await client.beta.sessions.create({ agent: 'agent_default', environment_id: 'env_default' })).status).toBe('idle');
  });

  it('runs a session: a call that asks is confirmed, a custom tool is answered by toolRunner, and the idle session has its usage', async () => {
    const agent = await client.beta.agents.create({
      name: 'Asker',
      model: 'claude-sonnet-5-5',
      tools: [
        { type: 'agent_toolset_20260401', configs: [{ name: 'write', permission_policy: { type: 'always_ask' } }] },
        { type: 'custom', name: 'lookup_order', description: 'Looks an order up', input_schema: { type: 'object', properties: { order: { type: 'string' } } } },
      ],
    });
    fake.enqueue(
      toolUseResponse('write', { file_path: 'notes.txt', content: 'hello' }, { text: 'Writing.' }),
      toolUseResponse('lookup_order', { order: '1234' }),
      textResponse('Order 1234 shipped.', { usage: { input_tokens: 50, output_tokens: 7, cache_read_input_tokens: 40 } }),
    );
    const session = await client.beta.sessions.create({ agent: agent.id, environment_id: 'env_default', title: 'orders' });
    expect(session).toMatchObject({ type: 'session', status: 'idle', title: 'orders', agent: { id: agent.id, version: 1 }, environment_id: 'env_default' });

    const waiting = streamUntil(session.id, (e) => e.type === 'session.status_idle');
    await new Promise((r) => setTimeout(r, 50)); // the stream is live from when it opens
    const sent = await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'write a note, then look up order 1234' }] }] });
    expect(sent.data?.[0]).toMatchObject({ type: 'user.message' });
    const first = await waiting;
    const ask = first.find((e) => e.type === 'agent.tool_use')!;
    expect(ask).toMatchObject({ name: 'write', evaluated_permission: 'ask' });
    expect(first.at(-1)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'requires_action', event_ids: [ask.id] } });

    // A confirmation for a call that does not exist is refused, naming the field.
    await expect(client.beta.sessions.events.send(session.id, { events: [{ type: 'user.tool_confirmation', tool_use_id: 'sevt_01J0000000000000000000000X', result: 'allow' }] })).rejects.toThrow(/tool_use_id/);

    const calls: string[] = [];
    const runner = client.beta.sessions.events.toolRunner(session.id, {
      maxIdleMs: 300,
      tools: [
        {
          type: 'custom',
          name: 'lookup_order',
          description: 'Looks an order up',
          input_schema: { type: 'object', properties: { order: { type: 'string' } } },
          run: (input: unknown) => {
            calls.push(JSON.stringify(input));
            return 'order 1234: shipped yesterday';
          },
        } as never,
      ],
      signal: AbortSignal.timeout(10_000),
    });
    const done = (async () => {
      for await (const c of runner) void c;
    })();
    await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.tool_confirmation', tool_use_id: ask.id as string, result: 'allow' }] });
    await done;
    expect(calls).toEqual([JSON.stringify({ order: '1234' })]);
    await expect(client.beta.sessions.events.send(session.id, { events: [{ type: 'user.tool_confirmation', tool_use_id: ask.id as string, result: 'deny' }] })).rejects.toBeInstanceOf(Anthropic.ConflictError);

    const idle = await client.beta.sessions.retrieve(session.id);
    expect(idle.status).toBe('idle');
    expect(idle.usage.input_tokens).toBeGreaterThanOrEqual(50);
    expect(idle.usage.output_tokens).toBeGreaterThanOrEqual(7);
    expect(idle.usage.cache_read_input_tokens).toBeGreaterThanOrEqual(40);
    expect(idle.stats.active_seconds).toBeGreaterThan(0);
    const all = [];
    for await (const e of client.beta.sessions.events.list(session.id)) all.push(e);
    const types = all.map((e) => e.type);
    expect(types).toContain('user.tool_confirmation');
    expect(types).toContain('agent.custom_tool_use');
    expect(types).toContain('user.custom_tool_result');
    expect(all.at(-1)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });
    const answer = all.findLast((e) => e.type === 'agent.message');
    expect(JSON.stringify(answer)).toContain('Order 1234 shipped.');
    const result = all.find((e) => e.type === 'agent.tool_result');
    expect(result).toMatchObject({ tool_use_id: ask.id });
    expect((result as { is_error?: boolean }).is_error).toBeFalsy();
  });

  it('stores one of two racing confirmations (the other is a 409), and refuses a verdict on a call a new message gave up', async () => {
    const agent = await client.beta.agents.create({ name: 'Racer', model: 'claude-sonnet-5-5', tools: [{ type: 'agent_toolset_20260401', configs: [{ name: 'write', permission_policy: { type: 'always_ask' } }] }] });
    const askOnce = async () => {
      fake.enqueue(toolUseResponse('write', { file_path: 'a.txt', content: 'a' }));
      const session = await client.beta.sessions.create({ agent: agent.id, environment_id: 'env_default' });
      const waiting = streamUntil(session.id, (e) => e.type === 'session.status_idle');
      await new Promise((r) => setTimeout(r, 50));
      await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'write a' }] }] });
      const ask = (await waiting).find((e) => e.type === 'agent.tool_use')!;
      return { session, ask: ask.id as string };
    };

    const raced = await askOnce();
    fake.enqueue(textResponse('done'));
    const verdicts = await Promise.allSettled(
      (['allow', 'deny', 'allow'] as const).map((result) => client.beta.sessions.events.send(raced.session.id, { events: [{ type: 'user.tool_confirmation', tool_use_id: raced.ask, result }] })),
    );
    const won = verdicts.filter((v) => v.status === 'fulfilled');
    const lost = verdicts.filter((v) => v.status === 'rejected');
    expect(won.length).toBeGreaterThanOrEqual(1);
    for (const v of lost) expect((v).reason).toBeInstanceOf(Anthropic.ConflictError);
    const confirmations = [];
    for await (const e of client.beta.sessions.events.list(raced.session.id, { types: ['user.tool_confirmation'] })) confirmations.push(e);
    expect(confirmations).toHaveLength(1);

    const given = await askOnce();
    fake.enqueue(textResponse('fine, not writing'));
    const idle = streamUntil(given.session.id, (e) => e.type === 'session.status_idle');
    await new Promise((r) => setTimeout(r, 50));
    await client.beta.sessions.events.send(given.session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'never mind' }] }] });
    await idle;
    const late = client.beta.sessions.events.send(given.session.id, { events: [{ type: 'user.tool_confirmation', tool_use_id: given.ask, result: 'allow' }] });
    await expect(late).rejects.toBeInstanceOf(Anthropic.ConflictError);
    await expect(late).rejects.toThrow(/no longer waits/);
  });

  it('refuses a confirmation, a custom tool result and a message to a terminated session with a 409 naming it, storing nothing; its status reads terminated', async () => {
    const agent = await client.beta.agents.create({ name: 'Asker', model: 'claude-sonnet-5-5', tools: [{ type: 'agent_toolset_20260401', configs: [{ name: 'write', permission_policy: { type: 'always_ask' } }] }] });
    fake.enqueue(toolUseResponse('write', { file_path: 'a.txt', content: 'a' }));
    const session = await client.beta.sessions.create({ agent: agent.id, environment_id: 'env_default' });
    await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'write a' }] }] });
    await rt.harness.wake(session.id);
    const [ask] = await rt.store.getEvents(session.id, { types: ['agent.tool_use'] });
    expect(ask).toBeDefined();
    // Ended as the budget watch ends a widget conversation.
    await rt.store.emitEvent(session.id, { type: 'session.status_terminated' });
    const seq = (await rt.store.getSession(session.id))!.last_seq;
    for (const event of [
      { type: 'user.tool_confirmation' as const, tool_use_id: ask!.id, result: 'allow' as const },
      { type: 'user.custom_tool_result' as const, custom_tool_use_id: ask!.id, content: [{ type: 'text' as const, text: 'forged' }] },
      { type: 'user.message' as const, content: [{ type: 'text' as const, text: 'still there?' }] },
      { type: 'user.interrupt' as const },
    ]) {
      const sent = client.beta.sessions.events.send(session.id, { events: [event] });
      await expect(sent).rejects.toBeInstanceOf(Anthropic.ConflictError);
      await expect(sent).rejects.toThrow(`session ${session.id} is terminated and takes no more events`);
    }
    expect((await rt.store.getSession(session.id))!.last_seq).toBe(seq);
    expect((await client.beta.sessions.retrieve(session.id)).status).toBe('terminated');
    const listed = [];
    for await (const s of client.beta.sessions.list()) listed.push([s.id, s.status]);
    expect(listed).toContainEqual([session.id, 'terminated']);
  });

  it('streams previews of an agent.message under the id it is then stored with', async () => {
    fake.enqueue(textResponse('one two three four', { chunks: 4 }));
    const session = await client.beta.sessions.create({ agent: 'agent_default', environment_id: 'env_default' });
    const seen = streamUntil(session.id, (e) => e.type === 'session.status_idle', { event_deltas: ['agent.message'] });
    await new Promise((r) => setTimeout(r, 50));
    await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'count' }] }] });
    const events = await seen;
    const start = events.find((e) => e.type === 'event_start') as { event: { id: string; type: string } } | undefined;
    expect(start?.event.type).toBe('agent.message');
    const deltas = events.filter((e) => e.type === 'event_delta') as unknown as Array<{ event_id: string; delta: { content: { text: string } } }>;
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.every((d) => d.event_id === start!.event.id)).toBe(true);
    expect(deltas.map((d) => d.delta.content.text).join('')).toBe('one two three four');
    const message = events.find((e) => e.type === 'agent.message');
    expect(message?.id).toBe(start!.event.id);
    expect(events.indexOf(message!)).toBeGreaterThan(events.indexOf(deltas.at(-1) as never));
  });

  it('opens an event stream on an idle session at once: its headers and a first ping frame come before any event', async () => {
    const session = await client.beta.sessions.create({ agent: 'agent_default', environment_id: 'env_default' });
    const res = await fetch(`${server.url}/v1/sessions/${session.id}/events/stream`, { headers: { 'x-api-key': KEY } });
    expect(res.status).toBe(200);
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    const { value } = await reader.read();
    expect(value).toBe('event: ping\ndata: {"type":"ping"}\n\n');
    await reader.cancel();
  });

  it('resumes a stream after a server restart from the last event the client saw (Last-Event-ID): no gap, no duplicate', async () => {
    const session = await client.beta.sessions.create({ agent: 'agent_default', environment_id: 'env_default' });
    const say = (text: string) => rt.store.emitEvent(session.id, { type: 'agent.message', content: [{ type: 'text', text }] });
    /** Reads SSE frames until `n` events arrived; returns them and the last id line. */
    async function read(base: string, n: number, lastId?: string) {
      const res = await fetch(`${base}/v1/sessions/${session.id}/events/stream`, { headers: { 'x-api-key': KEY, ...(lastId ? { 'last-event-id': lastId } : {}) } });
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      let buf = '';
      const frames: Array<{ id?: string; event: string; data: { type: string; content?: Array<{ text: string }> } }> = [];
      while (frames.length < n) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value;
        let cut;
        while ((cut = buf.indexOf('\n\n')) >= 0) {
          const raw = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          const f = Object.fromEntries(raw.split('\n').map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 2)]));
          expect(f.event, 'every frame names its event').toBeTruthy();
          if (f.event === 'ping') continue; // keep-alives (the first one opens the stream)
          frames.push({ ...(f.id ? { id: f.id } : {}), event: f.event!, data: JSON.parse(f.data!) as never });
        }
      }
      await reader.cancel();
      return frames;
    }
    await say('before');
    const live = read(server.url, 2);
    await new Promise((r) => setTimeout(r, 100));
    await say('one');
    await say('two');
    const first = await live;
    expect(first.map((f) => f.data.content?.[0]?.text)).toEqual(['one', 'two']); // live from when it opened
    expect(first.every((f) => f.event === 'agent.message')).toBe(true);

    // The server goes away; three more events land meanwhile; the client comes back to a new one.
    await server.close();
    await say('three');
    await say('four');
    await say('five');
    server = await serveFetch((req) => handleRest(req, { runtime: () => Promise.resolve(rt), maxBodyBytes: 256 * 1024 }));
    const resumed = await read(server.url, 3, first.at(-1)!.id);
    expect(resumed.map((f) => f.data.content?.[0]?.text)).toEqual(['three', 'four', 'five']);
  });

  it('takes a user.interrupt naming its thread, as the SDK may send it (the session has one thread)', async () => {
    const session = await client.beta.sessions.create({ agent: 'agent_default', environment_id: 'env_default' });
    const sent = await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.interrupt', session_thread_id: 'sthr_primary' }] });
    expect(sent.data).toEqual([expect.objectContaining({ type: 'user.interrupt' })]);
    expect((await rt.store.getEvents(session.id)).at(-1)).not.toHaveProperty('session_thread_id');
  });

  it('filters the agents and sessions lists by created_at bounds', async () => {
    const before = await client.beta.agents.create({ name: 'Early', model: 'claude-sonnet-5-5' });
    const s1 = await client.beta.sessions.create({ agent: before.id, environment_id: 'env_default' });
    await new Promise((r) => setTimeout(r, 20));
    const cut = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 20));
    const after = await client.beta.agents.create({ name: 'Late', model: 'claude-sonnet-5-5' });
    const s2 = await client.beta.sessions.create({ agent: after.id, environment_id: 'env_default' });
    const agentIds = async (q: Parameters<typeof client.beta.agents.list>[0]) => (await client.beta.agents.list(q)).data.map((a) => a.id);
    expect(await agentIds({ 'created_at[gte]': cut })).toEqual([after.id]);
    expect(await agentIds({ 'created_at[lte]': cut })).toContain(before.id);
    expect(await agentIds({ 'created_at[lte]': cut })).not.toContain(after.id);
    const sessionIds = async (q: Parameters<typeof client.beta.sessions.list>[0]) => (await client.beta.sessions.list(q)).data.map((x) => x.id);
    expect(await sessionIds({ 'created_at[gt]': cut })).toEqual([s2.id]);
    expect(await sessionIds({ 'created_at[lt]': cut })).toEqual([s1.id]);
    // An offset is a time like any other; a bound that is not a time is a typed 400.
    const sameInstantPlusOne = new Date(Date.parse(cut) + 3_600_000).toISOString().replace('Z', '+01:00');
    expect(await sessionIds({ 'created_at[gt]': sameInstantPlusOne })).toEqual([s2.id]);
    await expect(client.beta.sessions.list({ 'created_at[gt]': 'yesterday' })).rejects.toMatchObject({ status: 400 });
  });

  it('pages through a history of over 100 events both ways, filtered by type', async () => {
    const session = await client.beta.sessions.create({ agent: 'agent_default', environment_id: 'env_default' });
    // Stored directly: the history is what is paged, not how it was made.
    await rt.store.emitEvents(session.id, Array.from({ length: 130 }, (_, i) => ({ type: 'agent.message' as const, content: [{ type: 'text' as const, text: `m${i}` }] })));
    await rt.store.emitEvent(session.id, { type: 'session.status_idle', stop_reason: { type: 'end_turn' }, stop_details: null });
    const asc = [];
    for await (const e of client.beta.sessions.events.list(session.id, { limit: 25 })) asc.push(e);
    expect(asc).toHaveLength(131);
    expect(new Set(asc.map((e) => e.id)).size).toBe(131);
    const first = await client.beta.sessions.events.list(session.id, { limit: 10, order: 'desc', types: ['agent.message'] });
    expect(first.data.map((e) => (e.type === 'agent.message' && e.content[0]?.type === 'text' ? e.content[0].text : ''))).toEqual(Array.from({ length: 10 }, (_, i) => `m${129 - i}`));
    expect(first.hasNextPage()).toBe(true);
    const second = await first.getNextPage();
    expect(second.data[0]).toMatchObject({ content: [{ text: 'm119' }] });
  });

  it('lists sessions in pages both ways, filtered by agent and status, and updates, archives and deletes them', async () => {
    const agent = await client.beta.agents.create({ name: 'Lister', model: 'claude-sonnet-5-5' });
    const made = [];
    for (let i = 0; i < 5; i++) made.push((await client.beta.sessions.create({ agent: agent.id, environment_id: 'env_default', title: `s${i}` })).id);
    await client.beta.sessions.create({ agent: 'agent_default', environment_id: 'env_default' });
    const page1 = await client.beta.sessions.list({ agent_id: agent.id, limit: 2 });
    expect(page1.data.map((s) => s.id)).toEqual([made[4], made[3]]);
    const page2 = await page1.getNextPage();
    expect(page2.data.map((s) => s.id)).toEqual([made[2], made[1]]);
    expect(page2.prev_page).toBeTruthy();
    const back = await client.beta.sessions.list({ agent_id: agent.id, limit: 2, page: page2.prev_page! });
    expect(back.data.map((s) => s.id)).toEqual([made[4], made[3]]);
    const all = [];
    for await (const s of client.beta.sessions.list({ agent_id: agent.id, statuses: ['idle'] })) all.push(s.id);
    expect(all).toHaveLength(5);

    // A session keeps the agent version it was created with; new sessions get the new one.
    await client.beta.agents.update(agent.id, { version: 1, system: 'changed' });
    expect((await client.beta.sessions.retrieve(made[0]!)).agent).toMatchObject({ version: 1, system: null });
    expect((await client.beta.sessions.create({ agent: agent.id, environment_id: 'env_default' })).agent).toMatchObject({ version: 2, system: 'changed' });
    expect((await client.beta.sessions.create({ agent: { type: 'agent', id: agent.id, version: 1 }, environment_id: 'env_default' })).agent.version).toBe(1);
    const updated = await client.beta.sessions.update(made[0]!, { title: 'renamed', metadata: { team: 'a' } });
    expect(updated).toMatchObject({ title: 'renamed', metadata: { team: 'a' } });
    expect((await client.beta.sessions.update(made[0]!, { metadata: { team: null } })).metadata).toEqual({});
    expect((await client.beta.sessions.archive(made[1]!)).archived_at).not.toBeNull();
    const live = [];
    for await (const s of client.beta.sessions.list({ agent_id: agent.id })) live.push(s.id);
    expect(live).not.toContain(made[1]);
    expect(await client.beta.sessions.delete(made[2]!)).toEqual({ id: made[2], type: 'session_deleted' });
    await expect(client.beta.sessions.retrieve(made[2]!)).rejects.toBeInstanceOf(Anthropic.NotFoundError);
  });

  it('refuses a session in an environment its hands cannot honour, naming what, and lists the hosts a limited one allows', async () => {
    const open = await client.beta.environments.create({ name: 'open', config: { type: 'cloud', networking: { type: 'unrestricted' } } });
    await expect(client.beta.sessions.create({ agent: 'agent_default', environment_id: open.id })).rejects.toThrow(/environment_id: .* unrestricted networking/);
    const pkgs = await client.beta.environments.create({ name: 'pkgs', config: { type: 'cloud', packages: { pip: ['pandas'] } } });
    await expect(client.beta.sessions.create({ agent: 'agent_default', environment_id: pkgs.id })).rejects.toThrow(/packages \(pip\)/);
    const hosted = await client.beta.environments.create({ name: 'self', config: { type: 'self_hosted' } });
    // A self-hosted environment runs its sessions' tools on its workers (work-api.test.ts).
    expect(await client.beta.sessions.create({ agent: 'agent_default', environment_id: hosted.id })).toMatchObject({ environment_id: hosted.id });
    await expect(client.beta.sessions.create({ agent: 'agent_default', environment_id: 'env_nope' })).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    await expect(client.beta.sessions.create({ agent: 'agent_default', environment_id: 'env_default', resources: [{ type: 'github_repository', url: 'https://github.com/a/b', authorization_token: 'ghp_secret', mount_path: '/etc/b' }] })).rejects.toThrow(/mount_path: must be under \/workspace\//);
    expect((await client.beta.sessions.list()).data).toHaveLength(1);
  });

  it('answers no key, a wrong key, an unknown id and a malformed body with the API error types and a request-id', async () => {
    const wrong = new Anthropic({ apiKey: 'pdk_wrong', baseURL: server.url, maxRetries: 0 });
    const denied = await wrong.beta.agents.list().catch((e: unknown) => e);
    expect(denied).toBeInstanceOf(Anthropic.AuthenticationError);
    expect((denied as InstanceType<typeof Anthropic.AuthenticationError>).error).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    expect((denied as InstanceType<typeof Anthropic.APIError>).requestID).toMatch(/^req_/);

    const bare = await fetch(`${server.url}/v1/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(bare.status).toBe(401);
    expect(await bare.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });

    const missing = await client.beta.sessions.retrieve('sesn_01J00000000000000000000000').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(Anthropic.NotFoundError);
    expect((missing as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ error: { type: 'not_found_error' } });

    const bad = await client.beta.agents.create({ name: 'x', model: 'claude-sonnet-5-5', skills: [{ type: 'anthropic', skill_id: 'pdf' }] }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(Anthropic.BadRequestError);
    expect((bad as InstanceType<typeof Anthropic.APIError>).message).toMatch(/skills/);

    const junk = await fetch(`${server.url}/v1/agents`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': KEY }, body: '{not json' });
    expect(junk.status).toBe(400);
    expect(await junk.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: 'body: not valid JSON' } });

    const big = await fetch(`${server.url}/v1/agents`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': KEY }, body: JSON.stringify({ name: 'x'.repeat(300 * 1024) }) });
    expect(big.status).toBe(413);
    expect(await big.json()).toMatchObject({ error: { type: 'request_too_large' } });
    expect(await rt.agents.listAgents({})).toMatchObject({ data: [expect.objectContaining({ id: 'agent_default' })] });
  });
});
