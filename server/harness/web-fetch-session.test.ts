import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SessionAgent } from '~/lib/agent';
import type { StoredEvent } from '~/lib/events';
import { type AgentToolParams, AgentToolsParams, normalizeTools } from '~/lib/toolset';
import { createMemoryProvisioner } from '~/server/hands/memory-hand';
import { HandRegistry } from '~/server/hands/registry';
import { createAnthropicModel } from '~/server/harness/anthropic-model';
import { Harness } from '~/server/harness/harness';
import { LiveBus } from '~/server/session/live-bus';
import { type FakeMessagesApi, startFakeMessagesApi, textResponse, toolUseResponse } from '~/server/harness/testing/fake-messages-api';
import { openSqliteStore } from '~/server/session/sqlite-store';
import type { SessionStore } from '~/server/session/store';

let dir: string;
let store: SessionStore;
let fake: FakeMessagesApi;
let site: http.Server;
let base: string;
const harnesses: Harness[] = [];

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-web-fetch-'));
  store = await openSqliteStore({ file: path.join(dir, 'db.sqlite') });
  fake = await startFakeMessagesApi();
  site = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<html><body><h1>Release notes</h1><p>Version 7 is out.</p></body></html>');
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
});

afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.close()));
  await fake.close();
  site.closeAllConnections();
  await new Promise((resolve) => site.close(resolve));
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A harness whose sessions' hands are in memory and may reach the local site (the server's own list). */
function harness(): Harness {
  const live = new LiveBus();
  const hands = new HandRegistry({ store, live, provisioners: { memory: createMemoryProvisioner() }, defaultKind: 'memory', allowedDomains: ['127.0.0.1'] });
  const h = new Harness({ store, live, hands, model: createAnthropicModel({ apiKey: 'test-key', baseURL: fake.url, model: 'claude-fake-test' }), maxRetries: 0, retryBaseMs: 5, leaseTtlMs: 2_000 });
  harnesses.push(h);
  return h;
}

function agentWith(tools: AgentToolParams[]): SessionAgent {
  return {
    id: 'agent_web', type: 'agent', version: 1, name: 'web', description: null, model: { id: 'claude-agent-model' }, system: null,
    tools: normalizeTools(AgentToolsParams.parse(tools)), mcp_servers: [], skills: [], execution_identity: null, multiagent: null,
  };
}

const ofType = async <T extends StoredEvent['type']>(id: string, type: T) => (await store.getEvents(id, { types: [type] })) as Extract<StoredEvent, { type: T }>[];
const toolNames = (i: number) => (fake.requests.filter((r) => r.path === '/v1/messages')[i]!.body!.tools as Array<{ name: string }>).map((t) => t.name);

describe('a session whose agent enables web_fetch', () => {
  it("offers the model web_fetch after the hand tools, and answers its call in the log with the page's content", async () => {
    const lookup = { type: 'custom' as const, name: 'lookup', description: 'Look up', input_schema: { type: 'object' as const } };
    // A `hand` the model adds is ignored: the call is the harness's, never a hand's (nor a browser tab's).
    fake.enqueue(toolUseResponse('web_fetch', { url: `${base}/notes`, hand: 'browser-1' }, { id: 'toolu_f' }), textResponse('Version 7 is out.'));
    const s = await store.createSession({ agent: agentWith([{ type: 'agent_toolset_20260401' }, lookup]) });
    await store.emitEvent(s.id, { type: 'user.message', content: [{ type: 'text', text: 'what is new?' }] });
    await harness().wake(s.id);

    expect(toolNames(0)).toEqual(['bash', 'read', 'write', 'edit', 'glob', 'grep', 'provision', 'release', 'list_hands', 'web_fetch', 'lookup']);
    const [call] = await ofType(s.id, 'agent.tool_use');
    expect(call).toMatchObject({ name: 'web_fetch', evaluated_permission: 'allow' });
    expect(call!.hand).toBeUndefined(); // run by the harness, on no hand
    const [result] = await ofType(s.id, 'agent.tool_result');
    expect(result).toMatchObject({ tool_use_id: call!.id });
    expect(result!.is_error).toBeFalsy();
    const text = (result!.content![0] as { text: string }).text;
    expect(text).toMatch(new RegExp(`^URL: ${base}/notes\\nStatus: 200 OK`));
    expect(text).toContain('# Release notes');
    // The model got it, and no hand was started for it.
    expect(JSON.stringify(fake.requests.filter((r) => r.path === '/v1/messages')[1]!.body!.messages)).toContain('Version 7 is out.');
    expect(await ofType(s.id, 'hand.provisioned')).toEqual([]);
    expect((await store.getEvents(s.id, { from: -1 }))[0]).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });
  });

  it('asks first under always_ask, and a call to a host the session may not reach is answered with an error naming it', async () => {
    fake.enqueue(toolUseResponse('web_fetch', { url: 'https://not-listed.example/' }, { id: 'toolu_f' }), textResponse('ok'));
    const s = await store.createSession({ agent: agentWith([{ type: 'agent_toolset_20260401', configs: [{ name: 'web_fetch', permission_policy: { type: 'always_ask' } }] }]) });
    await store.emitEvent(s.id, { type: 'user.message', content: [{ type: 'text', text: 'fetch it' }] });
    await harness().wake(s.id);
    const [call] = await ofType(s.id, 'agent.tool_use');
    expect(call).toMatchObject({ name: 'web_fetch', evaluated_permission: 'ask' });
    expect((await store.getEvents(s.id, { from: -1 }))[0]).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'requires_action', event_ids: [call!.id] } });
    expect(await ofType(s.id, 'agent.tool_result')).toEqual([]);

    await store.emitEvent(s.id, { type: 'user.tool_confirmation', tool_use_id: call!.id, result: 'allow' });
    await harness().wake(s.id);
    const [result] = await ofType(s.id, 'agent.tool_result');
    expect(result).toMatchObject({ tool_use_id: call!.id, is_error: true });
    expect((result!.content![0] as { text: string }).text).toMatch(/not-listed\.example is not a host this session may reach: add it to the environment's allowed_hosts/);
  });

  it('is not offered when the toolset disables it', async () => {
    fake.enqueue(textResponse('hi'));
    const s = await store.createSession({ agent: agentWith([{ type: 'agent_toolset_20260401', configs: [{ name: 'web_fetch', enabled: false }] }]) });
    await store.emitEvent(s.id, { type: 'user.message', content: [{ type: 'text', text: 'hi' }] });
    await harness().wake(s.id);
    expect(toolNames(0)).not.toContain('web_fetch');
    expect(toolNames(0)).toContain('list_hands');
  });
});
