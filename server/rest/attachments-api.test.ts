import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Anthropic, { toFile } from '@anthropic-ai/sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sessionMountSources } from '~/server/commands/session-attachments';
import { createAnthropicModel } from '~/server/harness/anthropic-model';
import { type FakeMessagesApi, startFakeMessagesApi, textResponse } from '~/server/harness/testing/fake-messages-api';
import { testRuntime } from '~/server/harness/testing/test-runtime';
import { handleRest } from '~/server/rest/handler';
import { type FetchServer, serveFetch } from '~/server/rest/testing/serve-fetch';
import type { Runtime } from '~/server/runtime';
import { openSqliteStore } from '~/server/session/sqlite-store';

const KEY = 'attachments-api-key-0123456789';
const SKILL_MD = '---\nname: pdf-tools\ndescription: Fill and merge PDF forms.\n---\n# PDF tools\n';
let dir: string;
let fake: FakeMessagesApi;
let rt: Runtime;
let server: FetchServer;
let client: Anthropic;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-attach-'));
  fake = await startFakeMessagesApi();
  const store = await openSqliteStore({ file: path.join(dir, 'db.sqlite') });
  rt = testRuntime({ store, model: createAnthropicModel({ apiKey: 'model-key', baseURL: fake.url, model: 'claude-fake-test' }), dataDir: dir, env: { PADDOCK_API_KEY: KEY }, harness: { retryBaseMs: 5, leaseTtlMs: 2_000 } });
  await rt.agents.ensureDefaults();
  server = await serveFetch((req) => handleRest(req, { runtime: () => Promise.resolve(rt), maxBodyBytes: 256 * 1024, maxUploadBytes: 1024 * 1024 }));
  client = new Anthropic({ apiKey: KEY, baseURL: server.url, maxRetries: 0 });
});

afterEach(async () => {
  await server.close();
  await rt.harness.close();
  await rt.store.close();
  await fake.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const skill = async () => client.beta.skills.create({ files: [await toFile(Buffer.from(SKILL_MD), 'pdf-tools/SKILL.md'), await toFile(Buffer.from('print(1)\n'), 'pdf-tools/fill.py')] });

async function sessionCount(): Promise<number> {
  return (await rt.store.listSessions({ limit: 100 })).data.length;
}

describe("an agent's skills", () => {
  it('accepts custom skills (latest unless pinned) and refuses an unknown id with a 404 naming it, an anthropic skill by name, and more than 20', async () => {
    const s = await skill();
    const agent = await client.beta.agents.create({ name: 'with skills', model: 'claude-sonnet-5-5', skills: [{ type: 'custom', skill_id: s.id }] });
    expect(agent.skills).toEqual([{ type: 'custom', skill_id: s.id, version: 'latest' }]);
    const pinned = await client.beta.agents.update(agent.id, { version: agent.version, skills: [{ type: 'custom', skill_id: s.id, version: s.latest_version_id }] });
    expect(pinned.skills).toEqual([{ type: 'custom', skill_id: s.id, version: s.latest_version_id }]);

    await expect(client.beta.agents.create({ name: 'x', model: 'claude-sonnet-5-5', skills: [{ type: 'custom', skill_id: 'skill_01JZZZZZZZZZZZZZZZZZZZZZZZ' }] })).rejects.toThrow(/skill skill_01JZZZZZZZZZZZZZZZZZZZZZZZ not found/);
    const anthropic = (await client.beta.agents.create({ name: 'x', model: 'claude-sonnet-5-5', skills: [{ type: 'anthropic', skill_id: 'xlsx' }] }).catch((e: unknown) => e)) as InstanceType<typeof Anthropic.BadRequestError>;
    expect(anthropic).toBeInstanceOf(Anthropic.BadRequestError);
    expect(anthropic.message).toMatch(/anthropic skill \W*xlsx\W* is not available/);
    const many = Array.from({ length: 21 }, () => ({ type: 'custom' as const, skill_id: s.id }));
    await expect(client.beta.agents.create({ name: 'x', model: 'claude-sonnet-5-5', skills: many })).rejects.toThrow(/at most 20 skills/);
  });
});

describe("a session's memory stores and skills", () => {
  it('names the skills and memory stores (with their instructions) in the system prompt, and offers them as mount sources', async () => {
    const s = await skill();
    const agent = await client.beta.agents.create({ name: 'a', model: 'claude-sonnet-5-5', skills: [{ type: 'custom', skill_id: s.id }] });
    const store = await client.beta.memoryStores.create({ name: 'team notes', description: 'What the team learned.' });
    await client.beta.memoryStores.memories.create(store.id, { path: '/projects/paddock.md', content: 'Uses kysely.' });
    const ro = await client.beta.memoryStores.create({ name: 'handbook' });
    const session = await client.beta.sessions.create({
      environment_id: 'env_default',
      agent: agent.id,
      resources: [
        { type: 'memory_store', memory_store_id: store.id, instructions: 'Record decisions\nunder /decisions.' },
        { type: 'memory_store', memory_store_id: ro.id, access: 'read_only' },
      ],
    });
    expect(session.resources).toEqual([
      { type: 'memory_store', memory_store_id: store.id, access: 'read_write', name: 'team notes', description: 'What the team learned.', instructions: 'Record decisions\nunder /decisions.', mount_path: '/mnt/memory/team-notes' },
      { type: 'memory_store', memory_store_id: ro.id, access: 'read_only', name: 'handbook', description: '', instructions: null, mount_path: '/mnt/memory/handbook' },
    ]);

    fake.enqueue(textResponse('noted'));
    await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'hi' }] }] });
    await expect.poll(() => fake.requests.length, { timeout: 10_000 }).toBe(1);
    const system = JSON.stringify(fake.requests[0]!.body!.system);
    expect(system).toContain('pdf-tools: Fill and merge PDF forms. (/mnt/skills/pdf-tools/SKILL.md)');
    expect(system).toContain('team notes at /mnt/memory/team-notes/ (read and write): What the team learned.');
    expect(system).toContain('Instructions: Record decisions under /decisions.');
    expect(system).toContain('handbook at /mnt/memory/handbook/ (read-only)');

    const sources = await sessionMountSources({ store: rt.store, memory: rt.memory, skills: rt.skills, blobs: rt.blobs }, session.id);
    expect(sources.map((m) => [m.path, m.readOnly, m.origin.type])).toEqual([
      ['/mnt/memory/team-notes', false, 'memory_store'],
      ['/mnt/memory/handbook', true, 'memory_store'],
      ['/mnt/skills/pdf-tools', true, 'skill'],
    ]);
    expect((await sources[0]!.files()).map((f) => [f.path, f.data.toString()])).toEqual([['projects/paddock.md', 'Uses kysely.']]);
    expect((await sources[2]!.files()).map((f) => f.path).sort()).toEqual(['SKILL.md', 'fill.py']);
  });

  it('refuses an unknown memory store with a 404 naming it, more than 8, and one attached twice, creating no session', async () => {
    const st = await client.beta.memoryStores.create({ name: 'x' });
    const before = await sessionCount();
    await expect(client.beta.sessions.create({ environment_id: 'env_default', agent: 'agent_default', resources: [{ type: 'memory_store', memory_store_id: 'memstore_01JZZZZZZZZZZZZZZZZZZZZZZZ' }] })).rejects.toThrow(/memory store memstore_01JZZZZZZZZZZZZZZZZZZZZZZZ not found/);
    const nine = await Promise.all(Array.from({ length: 9 }, (_, i) => client.beta.memoryStores.create({ name: `s${i}` })));
    await expect(client.beta.sessions.create({ environment_id: 'env_default', agent: 'agent_default', resources: nine.map((s) => ({ type: 'memory_store' as const, memory_store_id: s.id })) })).rejects.toThrow(/at most 8 memory stores/);
    await expect(client.beta.sessions.create({ environment_id: 'env_default', agent: 'agent_default', resources: [st, st].map((s) => ({ type: 'memory_store' as const, memory_store_id: s.id })) })).rejects.toThrow(/attached twice/);
    expect(await sessionCount()).toBe(before);
  });
});
