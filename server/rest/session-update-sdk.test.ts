import Anthropic from '@anthropic-ai/sdk';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeMessagesApi, textResponse } from '~/server/harness/testing/fake-messages-api';
import { type SdkServer, startSdkServer } from '~/server/rest/testing/sdk-server';
import type { KyselySessionStore } from '~/server/session/kysely-queries';

/** Session update (`session.updated`) and a client's `system.message`, through the official SDK against /v1 and the fake model. */
let sdk: SdkServer;
let fake: FakeMessagesApi;
let client: Anthropic;

beforeEach(async () => {
  sdk = await startSdkServer({ name: 'session-update' });
  ({ fake, client } = sdk);
});

afterEach(() => sdk.close());

async function allEvents(sessionId: string) {
  const events = [];
  for await (const e of client.beta.sessions.events.list(sessionId)) events.push(e);
  return events;
}

async function untilIdle(sessionId: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if ((await allEvents(sessionId)).at(-1)?.type === 'session.status_idle') return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`session ${sessionId} did not go idle`);
}

const badRequest = async (p: Promise<unknown>): Promise<string> => {
  const err = await p.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(Anthropic.BadRequestError);
  return (err as Error).message;
};

describe('session update, through the official SDK', () => {
  it('emits session.updated with only the fields that changed, and none when nothing did', async () => {
    const session = await client.beta.sessions.create({ agent: 'agent_default', environment_id: 'env_default', title: 'First', metadata: { team: 'infra' } });
    const renamed = await client.beta.sessions.update(session.id, { title: 'Second' });
    expect(renamed.title).toBe('Second');
    await client.beta.sessions.update(session.id, { metadata: { owner: 'ana', team: null } });
    await client.beta.sessions.update(session.id, { title: 'Second', metadata: { owner: 'ana' } }); // changes nothing
    await client.beta.sessions.update(session.id, { agent: { tools: [{ type: 'agent_toolset_20260401', default_config: { enabled: false }, configs: [{ name: 'read', enabled: true }] }] } });
    await client.beta.sessions.update(session.id, { metadata: null });

    const updates = (await allEvents(session.id)).filter((e) => e.type === 'session.updated');
    expect(updates.map((u) => Object.keys(u).filter((k) => !['id', 'processed_at', 'seq', 'session_id'].includes(k)).sort())).toEqual([['title', 'type'], ['metadata', 'type'], ['agent', 'type'], ['type']]);
    expect(updates[0]).toMatchObject({ title: 'Second' });
    expect(updates[1]).toMatchObject({ metadata: { owner: 'ana' } });
    expect(JSON.stringify(updates[2]!.agent)).toContain('"read"');
    const got = await client.beta.sessions.retrieve(session.id);
    expect(got.metadata).toEqual({});
    expect(JSON.stringify(got.agent.tools)).toContain('"read"');
  });

  it('stores a change and its session.updated as one write: a failure injected between them leaves neither', async () => {
    const db = (sdk.rt.store as KyselySessionStore).db;
    const session = await client.beta.sessions.create({ agent: 'agent_default', environment_id: 'env_default', title: 'First', metadata: { team: 'infra' } });
    const updates = async () => (await allEvents(session.id)).filter((e) => e.type === 'session.updated');
    // The event's write fails after the row's change was made (or would have been).
    await sql`create trigger fail_updated before insert on events when new.type = 'session.updated' begin select raise(abort, 'injected: event write failed'); end`.execute(db);
    await expect(client.beta.sessions.update(session.id, { title: 'Second', metadata: { owner: 'ana' } })).rejects.toBeInstanceOf(Anthropic.APIError);
    expect(await client.beta.sessions.retrieve(session.id)).toMatchObject({ title: 'First', metadata: { team: 'infra' } });
    expect(await updates()).toEqual([]);
    await sql`drop trigger fail_updated`.execute(db);
    // And the other way: the row's change fails, so no event says it happened.
    await sql`create trigger fail_title before update of title on sessions when new.title = 'Second' begin select raise(abort, 'injected: row write failed'); end`.execute(db);
    await expect(client.beta.sessions.update(session.id, { title: 'Second' })).rejects.toBeInstanceOf(Anthropic.APIError);
    expect(await updates()).toEqual([]);
    await sql`drop trigger fail_title`.execute(db);
    // Nothing was half done: the same update now stores both.
    expect((await client.beta.sessions.update(session.id, { title: 'Second' })).title).toBe('Second');
    expect(await updates()).toMatchObject([{ title: 'Second' }]);
  });

  it('sets vault ids that exist (session.updated names them), and refuses the agent of a running session with a 409', { timeout: 30_000 }, async () => {
    const vault = await client.beta.vaults.create({ display_name: 'ops' });
    const session = await client.beta.sessions.create({ agent: 'agent_default', environment_id: 'env_default' });
    expect((await client.beta.sessions.update(session.id, { vault_ids: [vault.id] })).vault_ids).toEqual([vault.id]);
    expect(await badRequest(client.beta.sessions.update(session.id, { vault_ids: ['vlt_doesnotexist'] }))).toContain('vlt_doesnotexist');
    fake.enqueue({ kind: 'hang' });
    await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'work' }] }] });
    for (let i = 0; i < 200 && (await client.beta.sessions.retrieve(session.id)).status !== 'running'; i++) await new Promise((r) => setTimeout(r, 50));
    const err = await client.beta.sessions.update(session.id, { agent: { tools: [] } }).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.ConflictError);
    await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.interrupt' }] });
    await untilIdle(session.id);
    const updates = (await allEvents(session.id)).filter((e) => e.type === 'session.updated');
    expect(updates).toHaveLength(1);
    expect(updates[0]).toMatchObject({ vault_ids: [vault.id] });
  });

  it('refuses unknown or invalid fields with a 400, changing nothing', async () => {
    const session = await client.beta.sessions.create({ agent: 'agent_default', environment_id: 'env_default', title: 'Kept' });
    const update = (body: Record<string, unknown>) => client.beta.sessions.update(session.id, body);
    expect(await badRequest(update({ colour: 'red' }))).toContain('colour');
    expect(await badRequest(update({ title: 'x'.repeat(201) }))).toContain('title');
    expect(await badRequest(update({ title: 'New', agent: { model: 'claude-x' } }))).toContain('model');
    expect(await badRequest(update({ agent: { tools: [{ type: 'no_such_tool' }] } }))).toContain('agent.tools');
    expect(await badRequest(update({ vault_ids: ['not-a-vault'] }))).toContain('vault_ids');
    expect(await badRequest(update({ budget: { max_list_cost: 1 } }))).toContain('budget');
    expect((await client.beta.sessions.retrieve(session.id)).title).toBe('Kept');
    expect((await allEvents(session.id)).filter((e) => e.type === 'session.updated')).toEqual([]);
  });
});

describe('system.message, through the official SDK', () => {
  it('reaches the model as a system turn after the user turn it accompanies', { timeout: 30_000 }, async () => {
    const session = await client.beta.sessions.create({ agent: 'agent_default', environment_id: 'env_default' });
    fake.enqueue(textResponse('Bonjour.'));
    await client.beta.sessions.events.send(session.id, {
      events: [
        { type: 'user.message', content: [{ type: 'text', text: 'hello' }] },
        { type: 'system.message', content: [{ type: 'text', text: 'Answer in French from now on.' }] },
      ],
    });
    await untilIdle(session.id);
    const messages = fake.requests[0]!.body!.messages as { role: string; content: unknown }[];
    expect(messages.map((m) => m.role)).toEqual(['user', 'system']);
    expect(JSON.stringify(messages[1]!.content)).toContain('Answer in French from now on.');
    expect((await allEvents(session.id)).map((e) => e.type)).toContain('system.message');
  });

  it('refuses a system.message that is not last or follows no user turn', async () => {
    const session = await client.beta.sessions.create({ agent: 'agent_default', environment_id: 'env_default' });
    const sys = { type: 'system.message' as const, content: [{ type: 'text' as const, text: 'x' }] };
    const msg = { type: 'user.message' as const, content: [{ type: 'text' as const, text: 'hi' }] };
    expect(await badRequest(client.beta.sessions.events.send(session.id, { events: [sys] }))).toContain('events.0');
    expect(await badRequest(client.beta.sessions.events.send(session.id, { events: [msg, sys, msg] }))).toContain('events.1');
    expect(await allEvents(session.id)).toEqual([]);
  });
});
