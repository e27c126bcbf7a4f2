import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAnthropicModel } from '~/server/harness/anthropic-model';
import { type FakeMessagesApi, startFakeMessagesApi, textResponse, toolUseResponse } from '~/server/harness/testing/fake-messages-api';
import { testRuntime } from '~/server/harness/testing/test-runtime';
import { handleRest } from '~/server/rest/handler';
import { type FetchServer, serveFetch } from '~/server/rest/testing/serve-fetch';
import { type Runtime, startWorkSweep } from '~/server/runtime';
import { openPostgresStore } from '~/server/session/postgres-store';
import { openSqliteStore } from '~/server/session/sqlite-store';
import type { SessionStore } from '~/server/session/store';
import { type TestDatabase, createTestDatabase } from '~/server/session/testing/pg-test-db';
import { until as waitFor } from '~/lib/testing/until';
import { createSkill } from '~/server/commands/skill-commands';

/**
 * The official SDK's own worker, in processes of its own, serving a self-hosted session's bash
 * calls through /v1 (the fake Messages API as the model), on SQLite and on PostgreSQL. One worker
 * is SIGKILLed mid-call: its call is answered with an error naming it, never re-run, and the next
 * call goes to the other.
 */
const root_ = fileURLToPath(new URL('../../', import.meta.url));
const KEY = 'pdk_sdk_worker_key_0123456789';
let dir: string;
let rt: Runtime;
let fake: FakeMessagesApi;
let server: FetchServer;
let client: Anthropic;
let stopSweep: () => void;
const children: ChildProcess[] = [];

// One PostgreSQL database for the file: every test makes its own environment, so their queues never meet.
let pg: TestDatabase | null = null;
beforeAll(async () => {
  pg = await createTestDatabase('paddock_sdk_worker');
});
afterAll(async () => {
  await pg?.drop();
});

const BACKENDS: Array<[string, () => Promise<SessionStore>]> = [
  ['SQLite', () => openSqliteStore({ file: path.join(dir, 'db.sqlite') })],
  ['PostgreSQL', () => openPostgresStore({ url: pg!.url })],
];

async function start(open: () => Promise<SessionStore>): Promise<void> {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-sdk-worker-'));
  const store = await open();
  fake = await startFakeMessagesApi();
  // A short lease (the SDK heartbeats at half of it) and a quick sweep: a dead worker is found in seconds.
  rt = testRuntime({ store, model: createAnthropicModel({ apiKey: 'test-key', baseURL: fake.url, model: 'claude-fake-test' }), dataDir: dir, env: { PADDOCK_API_KEY: KEY, PADDOCK_WORK_LEASE_SECONDS: '3', PADDOCK_SWEEP_MS: '200' }, harness: { retryBaseMs: 5 } });
  await rt.agents.ensureDefaults();
  server = await serveFetch((req) => handleRest(req, { runtime: () => Promise.resolve(rt), maxBodyBytes: 256 * 1024 }));
  client = new Anthropic({ apiKey: KEY, baseURL: server.url, maxRetries: 0 });
  stopSweep = startWorkSweep(rt.config, rt.work);
}

afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) process.kill(-c.pid!, 'SIGKILL');
  stopSweep();
  await server.close();
  await rt.harness.close();
  await fake.close();
  await rt.store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** An SDK worker process (its own process group: one SIGKILL takes its bash too); resolves once it runs. */
async function startWorker(envId: string, key: string, workerId: string): Promise<{ child: ChildProcess; workdir: string }> {
  const workdir = path.join(dir, workerId);
  fs.mkdirSync(workdir);
  const log = fs.openSync(path.join(dir, `${workerId}.log`), 'a');
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root_, 'server/rest/testing/sdk-worker-process.ts'), server.url, envId, workerId, workdir], {
    cwd: root_,
    detached: true,
    stdio: ['ignore', 'pipe', log],
    env: { ...process.env, PADDOCK_ENVIRONMENT_KEY: key, ANTHROPIC_LOG: 'info' },
  });
  fs.closeSync(log);
  children.push(child);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${workerId} not ready; see ${dir}/${workerId}.log`)), 30_000);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (!line.startsWith('sdk-worker ready')) return;
      clearTimeout(timer);
      resolve();
    });
  });
  return { child, workdir };
}

/** Waits as `until` does, its failure naming where the workers' logs are. */
const until = <T,>(what: string, fn: () => Promise<T | null | undefined | false> | T | null | undefined | false) => waitFor(`${what} (logs in ${dir})`, fn);

type Ev = { type: string; id: string; tool_use_id?: string; is_error?: boolean; content?: unknown; stop_reason?: { type: string } };
async function events(sessionId: string): Promise<Ev[]> {
  const out = [];
  for await (const e of client.beta.sessions.events.list(sessionId)) out.push(e);
  return out as unknown as Ev[];
}

/** A self-hosted environment with `paddock-hand worker` (sandboxed, as `laptop`) polling it from `root`. */
async function startHandWorker(root: string) {
  const env = await client.beta.environments.create({ name: 'my laptop', config: { type: 'self_hosted' } });
  const made = (await (await fetch(`${server.url}/v1/environments/${env.id}/keys`, { method: 'POST', headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body: '{}' })).json()) as { key: string };
  const keyFile = path.join(dir, 'env.key');
  fs.writeFileSync(keyFile, made.key, { mode: 0o600 });
  const log = fs.openSync(path.join(dir, 'hand-worker.log'), 'a');
  const { PADDOCK_ENVIRONMENT_KEY: _k, ...env0 } = process.env;
  const child = spawn(path.join(root_, 'bin/paddock-hand'), ['worker', '--environment', env.id, '--url', server.url, '--workspace', root, '--key-file', keyFile, '--worker-id', 'laptop'], { cwd: dir, detached: true, stdio: ['ignore', 'ignore', log], env: env0 });
  fs.closeSync(log);
  children.push(child);
  return { env, made, keyFile };
}

/** The session's turn, once it has ended (idle with end_turn). */
const finishedTurn = (sessionId: string) =>
  until('the session to finish its turn', async () => {
    const all = await events(sessionId);
    return all.at(-1)?.type === 'session.status_idle' && all.at(-1)?.stop_reason?.type === 'end_turn' ? all : null;
  });

describe.each(BACKENDS)("the SDK's own worker on a self-hosted environment on %s", (_name, open) => {
  beforeEach(() => start(open));

  it('runs a bash call; SIGKILLed mid-call, its call is answered with an error naming it and the next call goes to the other worker', { timeout: 180_000 }, async () => {
    const env = await client.beta.environments.create({ name: 'workers', config: { type: 'self_hosted' } });
    const made = (await (await fetch(`${server.url}/v1/environments/${env.id}/keys`, { method: 'POST', headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body: '{"name":"test"}' })).json()) as { key: string };
    const session = await client.beta.sessions.create({ agent: 'agent_default', environment_id: env.id });
    fake.enqueue(toolUseResponse('bash', { command: 'touch started && sleep 120' }), toolUseResponse('bash', { command: 'pwd && echo from-the-second' }), textResponse('Done.'));

    const a = await startWorker(env.id, made.key, 'worker-A');
    await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'go' }] }] });
    // Worker A is running the first call: its command began in its workdir.
    await until('worker A to run the first call', () => fs.existsSync(path.join(a.workdir, 'started')));
    const b = await startWorker(env.id, made.key, 'worker-B');
    process.kill(-a.child.pid!, 'SIGKILL');

    const done = await until('the session to finish its turn', async () => {
      const all = await events(session.id);
      return all.at(-1)?.type === 'session.status_idle' && all.at(-1)?.stop_reason?.type === 'end_turn' ? all : null;
    });
    const calls = done.filter((e) => e.type === 'agent.tool_use');
    expect(calls).toHaveLength(2);
    const results = done.filter((e) => e.type === 'agent.tool_result' || e.type === 'user.tool_result');
    expect(results.map((r) => r.tool_use_id)).toEqual(calls.map((c) => c.id));
    // The lost call: an error naming worker A, from Paddock, not re-run anywhere.
    expect(results[0]).toMatchObject({ type: 'agent.tool_result', is_error: true });
    expect(JSON.stringify(results[0]!.content)).toMatch(/worker worker-A was lost mid-call/);
    expect(fs.existsSync(path.join(b.workdir, 'started'))).toBe(false);
    // The next call ran on worker B, which answered it itself.
    expect(results[1]).toMatchObject({ type: 'user.tool_result' });
    expect(JSON.stringify(results[1]!.content)).toContain(b.workdir);
    expect(JSON.stringify(results[1]!.content)).toContain('from-the-second');

    type Item = { worker_id: string; state: string; lost_reason: string | null; created_at: string };
    const items: Item[] = [];
    for await (const w of client.beta.environments.work.list(env.id)) items.push(w as unknown as Item);
    items.sort((x, y) => x.created_at.localeCompare(y.created_at));
    expect(items.map((w) => [w.worker_id, w.lost_reason === null ? 'kept' : 'lost'])).toEqual([
      ['worker-A', 'lost'],
      ['worker-B', 'kept'],
    ]);
  });

  it('a dormant session that gets a message has a work item at once, and the worker attached then answers its later calls', { timeout: 120_000 }, async () => {
    const env = await client.beta.environments.create({ name: 'dormant', config: { type: 'self_hosted' } });
    const made = (await (await fetch(`${server.url}/v1/environments/${env.id}/keys`, { method: 'POST', headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body: '{}' })).json()) as { key: string };
    const session = await client.beta.sessions.create({ agent: 'agent_default', environment_id: env.id });
    type Item = { id: string; worker_id: string | null; state: string; data: { type: string; id: string } };
    const items = async (): Promise<Item[]> => {
      const out: Item[] = [];
      for await (const w of client.beta.environments.work.list(env.id)) out.push(w as unknown as Item);
      return out;
    };
    // Created idle: nothing to do, so no worker is asked for.
    expect(await items()).toEqual([]);
    const w = await startWorker(env.id, made.key, 'worker-C');
    // A turn with no tool call: the message alone queues the session's item, and the worker takes it.
    fake.enqueue(textResponse('Hello.'));
    await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'hi' }] }] });
    const attached = await until('the worker to attach to the session', async () => {
      const all = await items();
      return all.length === 1 && all[0]!.state === 'active' ? all : null;
    });
    expect(attached[0]).toMatchObject({ worker_id: 'worker-C', data: { type: 'session', id: session.id } });
    // The next turn's call goes to the worker already attached: still one item.
    fake.enqueue(toolUseResponse('bash', { command: 'echo attached-before-the-call' }), textResponse('Done.'));
    await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'run it' }] }] });
    const done = await until('the second turn to end', async () => {
      const all = await events(session.id);
      return all.filter((e) => e.type === 'session.status_idle' && e.stop_reason?.type === 'end_turn').length === 2 ? all : null;
    });
    const results = done.filter((e) => e.type === 'user.tool_result');
    expect(results).toHaveLength(1);
    expect(JSON.stringify(results[0]!.content)).toContain('attached-before-the-call');
    expect((await items()).map((i) => i.id)).toEqual([attached[0]!.id]);
    expect(w.child.exitCode).toBeNull();
  });

  it("answers a healthcheck item: the SDK's worker claims it and stops it, naming itself", { timeout: 60_000 }, async () => {
    const env = await client.beta.environments.create({ name: 'checked', config: { type: 'self_hosted' } });
    const made = (await (await fetch(`${server.url}/v1/environments/${env.id}/keys`, { method: 'POST', headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body: '{}' })).json()) as { key: string };
    await startWorker(env.id, made.key, 'worker-H');
    const item = await rt.work.healthcheck(env.id);
    const answered = await until('the worker to answer the healthcheck', async () => {
      const w = await client.beta.environments.work.retrieve(item.id, { environment_id: env.id });
      return w.state === 'stopped' ? (w as unknown as { worker_id: string; lost_reason: string | null; data: unknown }) : null;
    });
    expect(answered).toMatchObject({ worker_id: 'worker-H', lost_reason: null, data: { type: 'healthcheck', id: item.id } });
  });

  it("paddock-hand worker runs a self-hosted session's calls with paddock-hand's tools, each session in a sandbox hand of its own that sees none of the machine", { timeout: 120_000 }, async () => {
    const root = path.join(dir, 'hand-worker');
    fs.mkdirSync(path.join(root, 'sesn_another', 'workspace'), { recursive: true });
    fs.writeFileSync(path.join(root, 'sesn_another', 'workspace', 'theirs.txt'), 'not yours');
    const { env, made, keyFile } = await startHandWorker(root);
    const session = await client.beta.sessions.create({ agent: 'agent_default', environment_id: env.id });
    fake.enqueue(
      toolUseResponse('write', { file_path: 'notes/hello.txt', content: 'hello from the model' }),
      toolUseResponse('bash', { command: 'cat notes/hello.txt && pwd' }),
      // The worker's own key file and folder, and the machine's users: none of it is in the sandbox.
      toolUseResponse('bash', { command: `cat ${keyFile}; ls -a ${root}; cat ${root}/sesn_another/workspace/theirs.txt; head -c 300 /etc/shadow; echo end` }),
      textResponse('Read it.'),
    );
    await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'write and read' }] }] });
    const done = await finishedTurn(session.id);
    const results = done.filter((e) => e.type === 'user.tool_result');
    expect(results).toHaveLength(3);
    expect(results.every((r) => r.is_error !== true)).toBe(true);
    expect(JSON.stringify(results[1]!.content)).toContain('hello from the model');
    const outside = JSON.stringify(results[2]!.content);
    expect(outside).toContain('end');
    expect(outside).not.toContain(made.key);
    expect(outside).not.toContain('not yours');
    // Its own folder is bound back into the sandbox; another session's and the launchers' are not.
    const lines = (results[2]!.content as Array<{ text: string }>)[0]!.text.split('\n');
    expect(lines[0]).toMatch(/env\.key: No such file or directory$/);
    expect(lines.slice(1, 4)).toEqual(['.', '..', session.id]);
    expect(lines[4]).toMatch(/theirs\.txt: No such file or directory$/);
    expect(outside).not.toMatch(/root:[^:]*:/);
    const workspace = fs.realpathSync(path.join(root, session.id, 'workspace'));
    expect(fs.readFileSync(path.join(workspace, 'notes/hello.txt'), 'utf8')).toBe('hello from the model');
    expect(JSON.stringify(results[1]!.content)).toContain(workspace);
    const workers: string[] = [];
    for await (const w of client.beta.environments.work.list(env.id)) workers.push((w as unknown as { worker_id: string }).worker_id);
    expect(workers).toEqual(['laptop']);
  });
});

describe('paddock-hand worker: memory stores and skills', () => {
  beforeEach(() => start(BACKENDS[0]![1]));

  it("places the session's memory stores and skills in its sandbox hand's /mnt and writes the agent's memory changes back as the session, refusing a read-only store's", { timeout: 120_000 }, async () => {
    const notes = await client.beta.memoryStores.create({ name: 'notes' });
    const todo = await client.beta.memoryStores.memories.create(notes.id, { path: '/todo.md', content: 'buy milk' });
    const policies = await client.beta.memoryStores.create({ name: 'policies' });
    await client.beta.memoryStores.memories.create(policies.id, { path: '/rules.md', content: 'be kind' });
    const skill = await createSkill({ skills: rt.skills, blobs: rt.blobs }, [{ name: 'greet/SKILL.md', data: Buffer.from('---\nname: greet\ndescription: says hello\n---\nSay hello warmly.\n') }], null);
    const agent = await client.beta.agents.create({ name: 'remembers', model: 'claude-sonnet-5-5', tools: [{ type: 'agent_toolset_20260401' }], skills: [{ type: 'custom', skill_id: skill.id, version: 'latest' }] });
    const { env } = await startHandWorker(path.join(dir, 'hand-worker'));
    const session = await client.beta.sessions.create({
      agent: agent.id,
      environment_id: env.id,
      resources: [
        { type: 'memory_store', memory_store_id: notes.id },
        { type: 'memory_store', memory_store_id: policies.id, access: 'read_only' },
      ],
    });
    fake.enqueue(
      toolUseResponse('bash', { command: 'cat /mnt/memory/notes/todo.md; echo; cat /mnt/memory/policies/rules.md; echo; cat /mnt/skills/greet/SKILL.md' }),
      toolUseResponse('bash', { command: 'echo "buy bread" > /mnt/memory/notes/todo.md && mkdir -p /mnt/memory/notes/ideas && echo "a boat" > /mnt/memory/notes/ideas/boat.md && echo saved' }),
      toolUseResponse('bash', { command: 'echo "be rude" > /mnt/memory/policies/rules.md 2>&1; echo tried' }),
      textResponse('Done.'),
    );
    await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'use your memory' }] }] });
    const results = (await finishedTurn(session.id)).filter((e) => e.type === 'user.tool_result');
    expect(results).toHaveLength(3);
    const text = (i: number) => JSON.stringify(results[i]!.content);
    expect(text(0)).toContain('buy milk');
    expect(text(0)).toContain('be kind');
    expect(text(0)).toContain('Say hello warmly.');
    expect(results[1]!.is_error).not.toBe(true);
    expect(text(1)).toContain('saved');

    // The read-write store took both changes, as versions by the session; the read-only one none.
    const memories = async (storeId: string) => {
      const out: Record<string, string | null> = {};
      for await (const m of client.beta.memoryStores.memories.list(storeId, { view: 'full' })) if (m.type === 'memory') out[m.path] = m.content ?? null;
      return out;
    };
    expect(await memories(notes.id)).toEqual({ '/todo.md': 'buy bread\n', '/ideas/boat.md': 'a boat\n' });
    expect(await memories(policies.id)).toEqual({ '/rules.md': 'be kind' });
    const versions = [];
    for await (const v of client.beta.memoryStores.memoryVersions.list(notes.id, { memory_id: todo.id })) versions.push(v);
    expect(versions[0]).toMatchObject({ operation: 'modified', created_by: { type: 'session_actor', session_id: session.id } });
    // The write to the read-only store failed the call, naming the file.
    expect(results[2]!.is_error).toBe(true);
    expect(text(2)).toContain('/mnt/memory/policies/rules.md');
  });
});
