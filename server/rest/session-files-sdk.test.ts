import { createHash, randomBytes } from 'node:crypto';
import type Anthropic from '@anthropic-ai/sdk';
import { BadRequestError, toFile } from '@anthropic-ai/sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeMessagesApi, textResponse, toolUseResponse } from '~/server/harness/testing/fake-messages-api';
import { type SdkServer, startSdkServer } from '~/server/rest/testing/sdk-server';

/**
 * The Files API with sessions, end to end on real parts: the official SDK against the /v1 handler,
 * the scripted fake model, and a real sandboxed paddock-hand (bubblewrap) reading the upload at
 * /mnt/session/uploads and leaving an output that comes back through `files.list({scope_id})`.
 */
let sdk: SdkServer;
let fake: FakeMessagesApi;
let client: Anthropic;

beforeEach(async () => {
  sdk = await startSdkServer({ name: 'session-files', sandbox: true, mounts: true });
  ({ fake, client } = sdk);
});

afterEach(() => sdk.close());

async function untilIdle(sessionId: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const last = (await client.beta.sessions.events.list(sessionId, { order: 'desc', limit: 1 })).data[0];
    if (last?.type === 'session.status_idle') return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`session ${sessionId} did not go idle`);
}

describe('files in a session, through the official SDK', () => {
  it('mounts an upload a bash call reads, and collects an output downloaded byte-identical', { timeout: 120_000 }, async () => {
    const input = Buffer.concat([Buffer.from('name,qty\nbolts,12\n'), randomBytes(64)]);
    const uploaded = await client.beta.files.upload({ file: await toFile(input, 'parts.csv', { type: 'text/csv' }) });
    const session = await client.beta.sessions.create({ agent: 'agent_default', environment_id: 'env_default', resources: [{ type: 'file', file_id: uploaded.id, mount_path: 'in/parts.csv' }] });
    fake.enqueue(
      toolUseResponse('bash', { command: 'head -c 18 /mnt/session/uploads/in/parts.csv; sha256sum < /mnt/session/uploads/in/parts.csv; mkdir -p /mnt/session/outputs/out && cp /mnt/session/uploads/in/parts.csv /mnt/session/outputs/out/copy.bin && echo from-the-hand > /mnt/session/outputs/note.txt' }),
      textResponse('Copied.'),
    );
    await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'copy the parts list' }] }] });
    await untilIdle(session.id);

    const events = [];
    for await (const e of client.beta.sessions.events.list(session.id)) events.push(e);
    const result = events.find((e) => e.type === 'agent.tool_result');
    const text = JSON.stringify(result);
    expect(text).toContain('name,qty\\nbolts,12\\n');
    expect(text).toContain(createHashHex(input));

    const outputs = (await client.beta.files.list({ scope_id: session.id })).data;
    expect(outputs.map((f) => f.filename).sort()).toEqual(['note.txt', 'out/copy.bin']);
    const copy = outputs.find((f) => f.filename === 'out/copy.bin')!;
    expect(copy).toMatchObject({ size_bytes: input.length, scope: { type: 'session', id: session.id } });
    const downloaded = Buffer.from(await (await client.beta.files.download(copy.id)).arrayBuffer());
    expect(downloaded.equals(input)).toBe(true);
    // The upload itself is not the session's: it stays out of the session's outputs.
    expect(outputs.map((f) => f.id)).not.toContain(uploaded.id);
  });
});

describe('memory stores and skills in a session, through the official SDK', () => {
  it('mounts the agent’s skill read-only and the session’s memory stores as they are at each call; a write goes back as a version by the session, one to a read-only store is a tool error', { timeout: 120_000 }, async () => {
    const skillMd = '---\nname: pdf-tools\ndescription: Fill PDF forms.\n---\nRun fill.py.\n';
    const skill = await client.beta.skills.create({ files: [await toFile(Buffer.from(skillMd), 'pdf-tools/SKILL.md'), await toFile(Buffer.from('print(1)\n'), 'pdf-tools/fill.py')] });
    const agent = await client.beta.agents.create({ name: 'with a skill', model: 'claude-fake-test', tools: [{ type: 'agent_toolset_20260401' }], skills: [{ type: 'custom', skill_id: skill.id }] });
    const notes = await client.beta.memoryStores.create({ name: 'team notes' });
    const memory = await client.beta.memoryStores.memories.create(notes.id, { path: '/projects/paddock.md', content: 'Uses kysely.' });
    const handbook = await client.beta.memoryStores.create({ name: 'handbook' });
    await client.beta.memoryStores.memories.create(handbook.id, { path: '/rules.md', content: 'Be kind.' });
    const session = await client.beta.sessions.create({
      agent: agent.id,
      environment_id: 'env_default',
      resources: [
        { type: 'memory_store', memory_store_id: notes.id },
        { type: 'memory_store', memory_store_id: handbook.id, access: 'read_only' },
      ],
    });
    // The attached stores are the session's resources too: listed, retrievable by the store's id,
    // fixed for its life (neither removed nor added on a running session).
    const listed = [];
    for await (const r of client.beta.sessions.resources.list(session.id)) listed.push(r);
    expect(listed).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'memory_store', memory_store_id: notes.id, name: 'team notes', mount_path: '/mnt/memory/team-notes', access: 'read_write' }),
        expect.objectContaining({ type: 'memory_store', memory_store_id: handbook.id, access: 'read_only' }),
      ]),
    );
    expect(listed).toHaveLength(2);
    expect(await client.beta.sessions.resources.retrieve(handbook.id, { session_id: session.id })).toMatchObject({ type: 'memory_store', name: 'handbook' });
    const removed = await client.beta.sessions.resources.delete(notes.id, { session_id: session.id }).catch((e: unknown) => e);
    expect(removed).toBeInstanceOf(BadRequestError);
    expect((removed as Error).message).toContain('stays attached');
    const addStore = { type: 'memory_store', memory_store_id: handbook.id } as unknown as Parameters<typeof client.beta.sessions.resources.add>[1];
    const added = await client.beta.sessions.resources.add(session.id, addStore).catch((e: unknown) => e);
    expect(added).toBeInstanceOf(BadRequestError);
    expect((added as Error).message).toContain('attached when the session is created');
    expect((await client.beta.sessions.retrieve(session.id)).resources).toHaveLength(2);
    // The second call is asked for only once the store has changed under the session.
    let changed!: () => void;
    const storeChanged = new Promise<void>((r) => (changed = r));
    fake.enqueue(
      toolUseResponse('bash', { command: 'cat /mnt/memory/team-notes/projects/paddock.md; echo; cat /mnt/memory/handbook/rules.md; echo; cat /mnt/skills/pdf-tools/SKILL.md; ls /mnt/skills/pdf-tools; echo x > /mnt/memory/handbook/rules.md && echo WROTE' }),
      toolUseResponse('bash', { command: "cat /mnt/memory/team-notes/projects/paddock.md && mkdir -p /mnt/memory/team-notes/decisions && echo 'PostgreSQL to scale.' > /mnt/memory/team-notes/decisions/db.md" }, { endAfter: storeChanged }),
      textResponse('Read.'),
    );
    await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'read your notes' }] }] });
    for (let i = 0; i < 600 && fake.requests.filter((r) => r.path === '/v1/messages').length < 2; i++) await new Promise((r) => setTimeout(r, 50));
    await client.beta.memoryStores.memories.update(memory.id, { memory_store_id: notes.id, content: 'Uses kysely and zod.' });
    changed();
    await untilIdle(session.id);

    const results = [];
    for await (const e of client.beta.sessions.events.list(session.id)) if (e.type === 'agent.tool_result') results.push(JSON.stringify(e.content));
    expect(results[0]).toContain('Uses kysely.\\nBe kind.\\n---\\nname: pdf-tools');
    expect(results[0]).toContain('SKILL.md\\nfill.py');
    expect(results[0]).toMatch(/changes to memory were not saved:\\n- \/mnt\/memory\/handbook\/rules\.md: memory store handbook is mounted read-only/);
    expect(results[1]).toContain('Uses kysely and zod.');
    const written = (await client.beta.memoryStores.memories.list(notes.id, { path_prefix: '/decisions/', view: 'full' })).data;
    expect(written).toMatchObject([{ type: 'memory', path: '/decisions/db.md', content: 'PostgreSQL to scale.\n' }]);
    const versions = (await client.beta.memoryStores.memoryVersions.list(notes.id, { session_id: session.id })).data;
    expect(versions).toMatchObject([{ operation: 'created', path: '/decisions/db.md', created_by: { type: 'session_actor', session_id: session.id } }]);
    expect((await client.beta.memoryStores.memories.list(handbook.id, { view: 'full' })).data).toMatchObject([{ path: '/rules.md', content: 'Be kind.' }]);
  });
});

const createHashHex = (b: Buffer) => createHash('sha256').update(b).digest('hex');
