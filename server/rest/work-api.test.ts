import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Anthropic, { toFile } from '@anthropic-ai/sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAnthropicModel } from '~/server/harness/anthropic-model';
import { type FakeMessagesApi, startFakeMessagesApi, textResponse, toolUseResponse } from '~/server/harness/testing/fake-messages-api';
import { testRuntime } from '~/server/harness/testing/test-runtime';
import { REST_ROUTES, handleRest } from '~/server/rest/handler';
import { type FetchServer, serveFetch } from '~/server/rest/testing/serve-fetch';
import type { Runtime } from '~/server/runtime';
import { openSqliteStore } from '~/server/session/sqlite-store';
import { until } from '~/lib/testing/until';

/**
 * The self-hosted work queue through the official SDK's own calls (poll, ack, heartbeat, stop,
 * stats, list) against the /v1 handler, with the fake Messages API as the model: a session's bash
 * call becomes a work item a worker answers with `user.tool_result`.
 */
const KEY = 'pdk_work_api_key_0123456789';
let dir: string;
let rt: Runtime;
let fake: FakeMessagesApi;
let server: FetchServer;
let client: Anthropic;

async function start(env: Record<string, string> = {}) {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-work-api-'));
  const store = await openSqliteStore({ file: path.join(dir, 'db.sqlite') });
  fake = await startFakeMessagesApi();
  rt = testRuntime({ store, model: createAnthropicModel({ apiKey: 'test-key', baseURL: fake.url, model: 'claude-fake-test' }), dataDir: dir, env: { PADDOCK_API_KEY: KEY, ...env }, harness: { retryBaseMs: 5 } });
  await rt.agents.ensureDefaults();
  server = await serveFetch((req) => handleRest(req, { runtime: () => Promise.resolve(rt), maxBodyBytes: 256 * 1024 }));
  client = new Anthropic({ apiKey: KEY, baseURL: server.url, maxRetries: 0 });
}

beforeEach(() => start());

afterEach(async () => {
  await server.close();
  await rt.harness.close();
  await fake.close();
  await rt.store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const bearer = (token: string) => new Anthropic({ apiKey: null, authToken: token, baseURL: server.url, maxRetries: 0 });

async function selfHosted() {
  const env = await client.beta.environments.create({ name: 'my machines', config: { type: 'self_hosted' } });
  const made = (await (await fetch(`${server.url}/v1/environments/${env.id}/keys`, { method: 'POST', headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'laptop' }) })).json()) as { id: string; key: string; prefix: string };
  return { env, key: made };
}

async function events(sessionId: string) {
  const out = [];
  for await (const e of client.beta.sessions.events.list(sessionId)) out.push(e);
  return out as unknown as { type: string; id: string; [k: string]: unknown }[];
}

const decode = (secret: string) => JSON.parse(Buffer.from(secret, 'base64url').toString('utf8')) as { sessions_token: string };

describe('self-hosted environments: keys', () => {
  it('shows a key once, lists it by prefix only, and a revoked key opens nothing', async () => {
    const { env, key } = await selfHosted();
    expect(key.key).toMatch(/^pdek_/);
    const listed = (await (await fetch(`${server.url}/v1/environments/${env.id}/keys`, { headers: { 'x-api-key': KEY } })).json()) as { data: Record<string, unknown>[] };
    expect(listed.data).toEqual([expect.objectContaining({ id: key.id, prefix: key.prefix, name: 'laptop', environment_id: env.id })]);
    expect(JSON.stringify(listed)).not.toContain(key.key);
    expect(await bearer(key.key).beta.environments.work.stats(env.id)).toMatchObject({ type: 'work_queue_stats', depth: 0 });
    const gone = await fetch(`${server.url}/v1/environments/${env.id}/keys/${key.id}`, { method: 'DELETE', headers: { 'x-api-key': KEY } });
    expect(gone.status).toBe(200);
    await expect(bearer(key.key).beta.environments.work.stats(env.id)).rejects.toMatchObject({ status: 401 });
  });

  it('refuses keys for a cloud environment', async () => {
    const r = await fetch(`${server.url}/v1/environments/env_default/keys`, { method: 'POST', headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body: '{}' });
    expect(r.status).toBe(400);
    expect(await r.text()).toMatch(/only a self_hosted environment/);
  });

  it("opens only its own environment's work routes: not sessions, not another environment, not its keys", async () => {
    const { env, key } = await selfHosted();
    const other = await selfHosted();
    const worker = bearer(key.key);
    await expect(worker.beta.environments.work.poll(env.id, { block_ms: 0 })).resolves.toBeNull();
    await expect(worker.beta.environments.work.poll(other.env.id, { block_ms: 0 })).rejects.toMatchObject({ status: 403 });
    await expect(worker.beta.sessions.list()).rejects.toMatchObject({ status: 403 });
    await expect(worker.beta.environments.retrieve(env.id)).rejects.toMatchObject({ status: 403 });
    await expect(worker.beta.agents.list()).rejects.toMatchObject({ status: 403 });
    const keys = await fetch(`${server.url}/v1/environments/${env.id}/keys`, { headers: { authorization: `Bearer ${key.key}` } });
    expect(keys.status).toBe(403);
    // And the API key does not poll: that is the worker's credential.
    await expect(client.beta.environments.work.poll(env.id, { block_ms: 0 })).rejects.toMatchObject({ status: 403 });
  });
});

describe('self-hosted environments: what a worker credential opens, on every route', () => {
  it("lets an environment key and an item's token through only the routes that take them, for their own environment, item and session", { timeout: 60_000 }, async () => {
    const { env, key } = await selfHosted();
    const other = await selfHosted();
    const session = await client.beta.sessions.create({ agent: 'agent_default', environment_id: env.id });
    const item = await rt.work.needWorker(session.id, env.id);
    await rt.work.ack(env.id, item.id);
    const token = await rt.access.workToken(item.id);
    const problems: string[] = [];
    for (const route of REST_ROUTES) {
      for (const [who, credential, envId, wid, sid] of [
        ['env key, own environment', key.key, env.id, item.id, session.id],
        ['env key, other environment', key.key, other.env.id, item.id, session.id],
        ['item token, own item', token, env.id, item.id, session.id],
        ['item token, other session', token, env.id, item.id, 'sesn_01OTHER0000000000000000000'],
        ['item token, other item', token, env.id, 'work_01OTHER000000000000000000', session.id],
      ] as const) {
        const id = route.path.startsWith('environments') ? envId : route.path.startsWith('sessions') ? sid : 'x_1';
        const p = route.path.replace(':id', id).replace(':wid', wid).replace(/:[a-z]+/g, 'x_1');
        // Only what the route says it takes; a stream is only opened, not read.
        const res = await handleRest(new Request(`http://localhost:3000/v1/${p}${p.endsWith('/poll') ? '?block_ms=0' : ''}`, { method: route.method, headers: { host: 'localhost:3000', authorization: `Bearer ${credential}`, 'content-type': 'application/json' }, ...(route.method === 'POST' ? { body: '{}' } : {}) }), { runtime: () => Promise.resolve(rt), maxBodyBytes: 64 * 1024, policy: { allowedHosts: [], allowedOrigins: [] } });
        const body = res.headers.get('content-type')?.includes('event-stream') ? (await res.body?.cancel(), 'a stream') : await res.text();
        // The item's own routes, and its own session's.
        const ownItem = who.startsWith('item token') && ((route.callers?.workItem === 'item' && wid === item.id) || (route.callers?.workItem === 'session' && sid === session.id));
        const own = who === 'env key, own environment' ? route.callers?.environmentKey === true : ownItem;
        if (!own && res.status !== 403) problems.push(`${who}: ${route.method} ${route.path} answered ${res.status} ${body.slice(0, 100)}`);
        if (own && res.status === 403) problems.push(`${who}: ${route.method} ${route.path} refused: ${body.slice(0, 100)}`);
      }
    }
    expect(problems).toEqual([]);
  });
});

describe("self-hosted environments: what a work item's token reaches besides its session", () => {
  it("reads its session's memory stores and writes the read-write one as the session, downloads its agent's skills, and nothing else", { timeout: 60_000 }, async () => {
    const { env, key } = await selfHosted();
    const notes = await client.beta.memoryStores.create({ name: 'notes' });
    const handbook = await client.beta.memoryStores.create({ name: 'handbook' });
    const elsewhere = await client.beta.memoryStores.create({ name: 'not this session' });
    await client.beta.memoryStores.memories.create(handbook.id, { path: '/rules.md', content: 'be kind' });
    const theirs = await client.beta.memoryStores.memories.create(elsewhere.id, { path: '/secret.md', content: 'not yours' });
    const skill = await client.beta.skills.create({ files: [await toFile(Buffer.from('---\nname: tidy\ndescription: tidies\n---\nTidy up.\n'), 'tidy/SKILL.md')] });
    const other = await client.beta.skills.create({ files: [await toFile(Buffer.from('---\nname: other\ndescription: not this agent\n---\nNo.\n'), 'other/SKILL.md')] });
    const agent = await client.beta.agents.create({ name: 'with a skill', model: 'claude-sonnet-5-5', skills: [{ type: 'custom', skill_id: skill.id }] });
    const session = await client.beta.sessions.create({
      agent: agent.id,
      environment_id: env.id,
      resources: [
        { type: 'memory_store', memory_store_id: notes.id, access: 'read_write' },
        { type: 'memory_store', memory_store_id: handbook.id, access: 'read_only' },
      ],
    });
    fake.enqueue(textResponse('Noted.'));
    await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'hello' }] }] });
    const item = await until('a work item', () => bearer(key.key).beta.environments.work.poll(env.id, { block_ms: 999 }));
    const worker = bearer(decode(item.secret!).sessions_token);

    // Its session's stores: read both, write the read-write one (the version is the session's).
    const rules = (await worker.beta.memoryStores.memories.list(handbook.id, { view: 'full' })).data as Array<{ id: string; path: string }>;
    expect(rules).toMatchObject([{ path: '/rules.md', content: 'be kind' }]);
    const made = await worker.beta.memoryStores.memories.create(notes.id, { path: '/learned.md', content: 'tests pass' });
    const versions = (await client.beta.memoryStores.memoryVersions.list(notes.id, { memory_id: made.id })).data;
    expect(versions).toMatchObject([{ operation: 'created', created_by: { type: 'session_actor', session_id: session.id } }]);
    await expect(worker.beta.memoryStores.memories.create(handbook.id, { path: '/mine.md', content: 'x' })).rejects.toMatchObject({ status: 403 });
    // Another store, even by a memory's id: refused, and nothing of it is read.
    await expect(worker.beta.memoryStores.memories.retrieve(theirs.id, { memory_store_id: elsewhere.id })).rejects.toMatchObject({ status: 403 });
    await expect(worker.beta.memoryStores.memories.list(elsewhere.id)).rejects.toMatchObject({ status: 403 });
    await expect(worker.beta.memoryStores.list()).rejects.toMatchObject({ status: 403 });
    await expect(worker.beta.memoryStores.memories.delete(rules[0]!.id, { memory_store_id: handbook.id })).rejects.toMatchObject({ status: 403 });
    await expect(worker.beta.memoryStores.list()).rejects.toMatchObject({ status: 403 });

    // Its agent's skill, as the SDK's worker fetches it; not another skill, not the skills list.
    const version = await worker.beta.skills.versions.retrieve(skill.latest_version_id, { skill_id: skill.id });
    const zip = Buffer.from(await (await worker.beta.skills.versions.download(version.id, { skill_id: skill.id })).arrayBuffer());
    expect(zip.subarray(0, 2).toString('latin1')).toBe('PK');
    await expect(worker.beta.skills.versions.retrieve(other.latest_version_id, { skill_id: other.id })).rejects.toMatchObject({ status: 403 });
    await expect(worker.beta.skills.versions.download(other.latest_version_id, { skill_id: other.id })).rejects.toMatchObject({ status: 403 });
    await expect(worker.beta.skills.list()).rejects.toMatchObject({ status: 403 });
  });
});

describe('self-hosted environments: the work queue', () => {
  it("turns a session's bash call into a work item that a worker polls, acks, heartbeats and answers with user.tool_result", { timeout: 60_000 }, async () => {
    const { env, key } = await selfHosted();
    const session = await client.beta.sessions.create({ agent: 'agent_default', environment_id: env.id });
    fake.enqueue(toolUseResponse('bash', { command: 'echo hi' }), textResponse('It said hi.'));
    await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'say hi' }] }] });

    const worker = bearer(key.key);
    const item = await until('a work item', () => worker.beta.environments.work.poll(env.id, { block_ms: 999, 'Anthropic-Worker-ID': 'worker-a' }));
    expect(item).toMatchObject({ type: 'work', environment_id: env.id, data: { type: 'session', id: session.id }, state: 'queued' });
    const token = decode(item.secret!).sessions_token;
    expect(await worker.beta.environments.work.stats(env.id)).toMatchObject({ depth: 0, pending: 1, workers_polling: 1 });
    expect(await worker.beta.environments.work.ack(item.id, { environment_id: env.id })).toMatchObject({ state: 'starting' });
    // A second poll gets nothing: the item is taken.
    expect(await worker.beta.environments.work.poll(env.id, { block_ms: 0 })).toBeNull();

    const itemClient = bearer(token);
    const beat = await itemClient.beta.environments.work.heartbeat(item.id, { environment_id: env.id, expected_last_heartbeat: 'NO_HEARTBEAT' });
    expect(beat).toMatchObject({ type: 'work_heartbeat', lease_extended: true, state: 'active' });
    await expect(itemClient.beta.environments.work.heartbeat(item.id, { environment_id: env.id, expected_last_heartbeat: 'NO_HEARTBEAT' })).rejects.toMatchObject({ status: 412, errorCode: 'heartbeat_precondition_failed' });
    expect(await itemClient.beta.environments.work.heartbeat(item.id, { environment_id: env.id, expected_last_heartbeat: beat.last_heartbeat, desired_ttl_seconds: 60 })).toMatchObject({ lease_extended: true, ttl_seconds: 60 });

    // The item's token reads its session and answers its call, and nothing else.
    const call = await until('the bash call', async () => (await events(session.id)).find((e) => e.type === 'agent.tool_use'));
    expect(call).toMatchObject({ name: 'bash', hand: 'self_hosted', evaluated_permission: 'allow' });
    await until('the session idle waiting for its worker', async () => (await itemClient.beta.sessions.retrieve(session.id)).status === 'idle');
    await expect(itemClient.beta.sessions.list()).rejects.toMatchObject({ status: 403 });
    await expect(itemClient.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'x' }] }] })).rejects.toMatchObject({ status: 403 });
    await itemClient.beta.sessions.events.send(session.id, { events: [{ type: 'user.tool_result', tool_use_id: call.id, content: [{ type: 'text', text: 'hi\n' }] }] });
    // Answered once: a second result is refused.
    await expect(itemClient.beta.sessions.events.send(session.id, { events: [{ type: 'user.tool_result', tool_use_id: call.id, content: [{ type: 'text', text: 'again' }] }] })).rejects.toMatchObject({ status: 409 });
    await until('the answer', async () => (await events(session.id)).some((e) => e.type === 'agent.message'));

    expect(await itemClient.beta.environments.work.stop(item.id, { environment_id: env.id, force: true })).toMatchObject({ state: 'stopped' });
    // A stopped item's token is dead.
    await expect(itemClient.beta.sessions.retrieve(session.id)).rejects.toMatchObject({ status: 401 });
    const listed = [];
    for await (const w of worker.beta.environments.work.list(env.id)) listed.push(w);
    expect(listed).toEqual([expect.objectContaining({ id: item.id, state: 'stopped', secret: null })]);
    expect(await client.beta.environments.work.retrieve(item.id, { environment_id: env.id })).toMatchObject({ id: item.id, worker_id: 'worker-a' });
  });

  it('fails the open call of a worker whose lease ran out with an error naming it, never re-running it, and queues the next call anew', { timeout: 60_000 }, async () => {
    const { env, key } = await selfHosted();
    const session = await client.beta.sessions.create({ agent: 'agent_default', environment_id: env.id });
    fake.enqueue(toolUseResponse('bash', { command: 'sleep 100' }), toolUseResponse('bash', { command: 'echo again' }), textResponse('Done.'));
    await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'go' }] }] });
    const worker = bearer(key.key);
    const item = await until('a work item', () => worker.beta.environments.work.poll(env.id, { block_ms: 999, 'Anthropic-Worker-ID': 'doomed-worker' }));
    await worker.beta.environments.work.ack(item.id, { environment_id: env.id });
    await bearer(decode(item.secret!).sessions_token).beta.environments.work.heartbeat(item.id, { environment_id: env.id, expected_last_heartbeat: 'NO_HEARTBEAT', desired_ttl_seconds: 1 });
    // The worker dies: no more heartbeats. After its lease, the sweep finds it.
    await new Promise((r) => setTimeout(r, 1_200));
    const lost = await rt.work.sweepLost();
    expect(lost.map((l) => l.id)).toEqual([item.id]);
    expect(await rt.work.sweepLost()).toEqual([]);

    const failed = await until('the error result', async () => (await events(session.id)).find((e) => e.type === 'agent.tool_result'));
    expect(failed).toMatchObject({ is_error: true });
    expect(JSON.stringify(failed.content)).toMatch(/worker doomed-worker was lost mid-call/);
    expect(JSON.stringify(failed.content)).toMatch(/not re-run/);
    // The model's next call goes to a new item, for another worker.
    const next = await until('a second work item', () => worker.beta.environments.work.poll(env.id, { block_ms: 999, 'Anthropic-Worker-ID': 'second-worker' }));
    expect(next.id).not.toBe(item.id);
    expect(next.data).toEqual({ type: 'session', id: session.id });
    const retrieved = await client.beta.environments.work.retrieve(item.id, { environment_id: env.id });
    expect(retrieved).toMatchObject({ state: 'stopped', lost_reason: 'no heartbeat for 1s' });
  });

  it("stops a deleted session's live item, so its worker's stop is refused as already done and no new item is queued for it", { timeout: 60_000 }, async () => {
    const { env, key } = await selfHosted();
    const session = await client.beta.sessions.create({ agent: 'agent_default', environment_id: env.id });
    fake.enqueue(toolUseResponse('bash', { command: 'echo hi' }), textResponse('unused'));
    await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'go' }] }] });
    const worker = bearer(key.key);
    const item = await until('a work item', () => worker.beta.environments.work.poll(env.id, { block_ms: 999, 'Anthropic-Worker-ID': 'worker-a' }));
    await worker.beta.environments.work.ack(item.id, { environment_id: env.id });
    await until('the session idle waiting for its worker', async () => (await client.beta.sessions.retrieve(session.id)).status === 'idle');

    await client.beta.sessions.delete(session.id);
    expect(await client.beta.environments.work.retrieve(item.id, { environment_id: env.id })).toMatchObject({ state: 'stopped' });
    // The worker's own stop comes after: 409, and nothing is queued for a session that is gone.
    await expect(worker.beta.environments.work.stop(item.id, { environment_id: env.id, force: true })).rejects.toMatchObject({ status: 409 });
    expect(await worker.beta.environments.work.poll(env.id, { block_ms: 0 })).toBeNull();
    expect(await worker.beta.environments.work.stats(env.id)).toMatchObject({ depth: 0, pending: 0 });
  });
});
