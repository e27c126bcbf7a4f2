import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { SessionAgent } from '~/lib/agent';
import type { StoredEvent } from '~/lib/events';
import { type AgentToolParams, AgentToolsParams, normalizeTools } from '~/lib/toolset';
import { checkAnswers } from '~/server/agents/answers';
import { createMemoryProvisioner } from '~/server/hands/memory-hand';
import { HandRegistry } from '~/server/hands/registry';
import { createAnthropicModel } from '~/server/harness/anthropic-model';
import { Harness } from '~/server/harness/harness';
import { LiveBus } from '~/server/session/live-bus';
import { checkLogInvariants } from '~/server/harness/testing/log-invariants';
import { type FakeMessagesApi, startFakeMessagesApi, textResponse, toolUseResponse } from '~/server/harness/testing/fake-messages-api';
import { mcpGatewayFor } from '~/server/proxy/gateway';
import type { McpGateway } from '~/server/proxy/mcp-gateway';
import { type BearerGate, startBearerGate } from '~/server/proxy/testing/bearer-gate';
import { type EverythingServer, startEverythingServer } from '~/server/proxy/testing/everything-server';
import { MemorySecrets } from '~/server/proxy/testing/memory-secrets';
import { echoedForms, startEchoAuthMcp } from '~/server/proxy/testing/echo-auth-mcp';
import { type SqliteSessionStore, openSqliteStore } from '~/server/session/sqlite-store';

const CANARY = 'canary-mcp-secret-3e9f1a2b';

let everything: EverythingServer;
let dir: string;
let store: SqliteSessionStore;
let fake: FakeMessagesApi;
let gate: BearerGate;
let secrets: MemorySecrets;
const harnesses: Harness[] = [];

beforeAll(async () => {
  everything = await startEverythingServer();
}, 30_000);
afterAll(async () => {
  await everything.close();
});

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-mcp-session-'));
  store = await openSqliteStore({ file: path.join(dir, 'db.sqlite') });
  fake = await startFakeMessagesApi();
  gate = await startBearerGate({ upstream: everything.base, token: CANARY });
  secrets = new MemorySecrets();
  secrets.put('vlt_team', gate.url, { credentialId: 'vcrd_1', vaultId: 'vlt_team', type: 'static_bearer', token: CANARY });
});

afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.close()));
  await fake.close();
  await gate.close();
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function harness(mcp: McpGateway = mcpGatewayFor(store.db, store, secrets)): Harness {
  const live = new LiveBus();
  const hands = new HandRegistry({ store, live, provisioners: { memory: createMemoryProvisioner() }, defaultKind: 'memory' });
  const h = new Harness({
    store, live, hands,
    model: createAnthropicModel({ apiKey: 'test-key', baseURL: fake.url, model: 'claude-fake-test' }),
    mcp,
    maxRetries: 0, retryBaseMs: 5, leaseTtlMs: 5_000,
  });
  harnesses.push(h);
  return h;
}

function agentWith(tools: AgentToolParams[], servers: Array<{ name: string; url: string }>): SessionAgent {
  return {
    id: 'agent_mcp', type: 'agent', version: 1, name: 'mcp', description: null, model: { id: 'claude-agent-model' }, system: null,
    tools: normalizeTools(AgentToolsParams.parse(tools)), mcp_servers: servers.map((s) => ({ type: 'url' as const, ...s })),
    skills: [], execution_identity: null, multiagent: null,
  };
}

const toolset = (policy: 'always_allow' | 'always_ask' | null): AgentToolParams[] => [
  { type: 'agent_toolset_20260401', default_config: { enabled: false } },
  { type: 'mcp_toolset', mcp_server_name: 'everything', ...(policy ? { default_config: { permission_policy: { type: policy } } } : {}) },
];

const messagesRequests = () => fake.requests.filter((r) => r.path === '/v1/messages');
const toolNames = (i: number) => (messagesRequests()[i]!.body!.tools as Array<{ name: string }>).map((t) => t.name);
const ofType = async <T extends StoredEvent['type']>(id: string, type: T) => (await store.getEvents(id, { types: [type] })) as Extract<StoredEvent, { type: T }>[];
const last = async (id: string) => (await store.getEvents(id, { from: -1 }))[0];
const say = (id: string, text: string) => store.emitEvent(id, { type: 'user.message', content: [{ type: 'text', text }] });

describe('a session whose agent has an MCP server (server-everything behind a bearer gate)', () => {
  it('offers mcp__everything__echo, runs the call through the proxy, and no credential reaches the log', async () => {
    fake.enqueue(toolUseResponse('mcp__everything__echo', { message: 'ping' }, { id: 'toolu_e' }), textResponse('It said ping.'));
    const s = await store.createSession({ agent: agentWith(toolset('always_allow'), [{ name: 'everything', url: gate.url }]), vault_ids: ['vlt_team'] });
    await say(s.id, 'echo ping');
    await harness().wake(s.id);

    expect(toolNames(0)).toContain('mcp__everything__echo');
    expect(toolNames(0)).toContain('mcp__everything__get-sum');
    expect(toolNames(0)).not.toContain('bash'); // the toolset is off: only MCP tools
    const [call] = await ofType(s.id, 'agent.mcp_tool_use');
    expect(call).toMatchObject({ name: 'echo', mcp_server_name: 'everything', input: { message: 'ping' }, evaluated_permission: 'allow' });
    const [result] = await ofType(s.id, 'agent.mcp_tool_result');
    expect(result).toMatchObject({ mcp_tool_use_id: call!.id, content: [{ type: 'text', text: 'Echo: ping' }], is_error: false });
    // The second request: the same tools, byte for byte (the listing came from the log), and the result.
    expect(messagesRequests()).toHaveLength(2);
    expect(JSON.stringify(messagesRequests()[1]!.body!.tools)).toBe(JSON.stringify(messagesRequests()[0]!.body!.tools));
    expect(JSON.stringify(messagesRequests()[1]!.body!.messages)).toContain('Echo: ping');
    expect(await ofType(s.id, 'mcp.tools_listed')).toHaveLength(1);
    expect(await last(s.id)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });

    // A later turn on another harness (instance) lists nothing again and offers the same tools.
    fake.enqueue(textResponse('still here'));
    await say(s.id, 'again');
    await harness().wake(s.id);
    expect(JSON.stringify(messagesRequests()[2]!.body!.tools)).toBe(JSON.stringify(messagesRequests()[0]!.body!.tools));
    expect(await ofType(s.id, 'mcp.tools_listed')).toHaveLength(1);

    const events = await store.getEvents(s.id);
    expect(checkLogInvariants(events)).toEqual([]);
    expect(JSON.stringify(events)).not.toContain(CANARY);
    expect(JSON.stringify(fake.requests)).not.toContain(CANARY);
  }, 60_000);

  it('a session update that changes its MCP servers lists them again: the next request offers the new server, not the old', async () => {
    fake.enqueue(textResponse('first'));
    const s = await store.createSession({ agent: agentWith(toolset('always_allow'), [{ name: 'everything', url: gate.url }]), vault_ids: ['vlt_team'] });
    await say(s.id, 'hello');
    await harness().wake(s.id);
    expect(toolNames(0)).toContain('mcp__everything__echo');

    // What updateSession (session-commands.ts) does: the agent, whole, then session.updated naming it.
    const agent = agentWith([{ type: 'agent_toolset_20260401', default_config: { enabled: false } }, { type: 'mcp_toolset', mcp_server_name: 'renamed' }], [{ name: 'renamed', url: gate.url }]);
    await store.updateSession(s.id, { agent });
    await store.emitEvent(s.id, { type: 'session.updated', agent: agent as unknown as Record<string, unknown> });
    fake.enqueue(textResponse('second'));
    await say(s.id, 'again');
    await harness().wake(s.id);
    expect(toolNames(1)).toContain('mcp__renamed__echo');
    expect(toolNames(1)).not.toContain('mcp__everything__echo');
    expect(await ofType(s.id, 'mcp.tools_listed')).toHaveLength(2);

    // Listed once per update: a third turn (another instance) lists nothing again.
    fake.enqueue(textResponse('third'));
    await say(s.id, 'once more');
    await harness().wake(s.id);
    expect(JSON.stringify(messagesRequests()[2]!.body!.tools)).toBe(JSON.stringify(messagesRequests()[1]!.body!.tools));
    expect(await ofType(s.id, 'mcp.tools_listed')).toHaveLength(2);
    expect(checkLogInvariants(await store.getEvents(s.id))).toEqual([]);
  }, 60_000);

  it('under always_ask the call waits (requires_action naming it) until the user allows it', async () => {
    fake.enqueue(toolUseResponse('mcp__everything__echo', { message: 'careful' }, { id: 'toolu_a' }), textResponse('done'));
    const s = await store.createSession({ agent: agentWith(toolset(null), [{ name: 'everything', url: gate.url }]), vault_ids: ['vlt_team'] });
    await say(s.id, 'echo carefully');
    await harness().wake(s.id);
    const [call] = await ofType(s.id, 'agent.mcp_tool_use');
    expect(call).toMatchObject({ name: 'echo', evaluated_permission: 'ask' });
    expect(await last(s.id)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'requires_action', event_ids: [call!.id] } });
    expect(await ofType(s.id, 'agent.mcp_tool_result')).toEqual([]);
    expect(gate.seenAuth.length).toBeGreaterThan(0); // listed, but not called
    const seenBefore = gate.seenAuth.length;

    const verdict = { type: 'user.tool_confirmation' as const, tool_use_id: call!.id, result: 'allow' as const };
    const key = await checkAnswers(store, s.id, [verdict], (i) => `events[${i}]`);
    await store.emitEvents(s.id, [verdict], { idempotencyKey: key! });
    await harness().wake(s.id);
    const [result] = await ofType(s.id, 'agent.mcp_tool_result');
    expect(result).toMatchObject({ mcp_tool_use_id: call!.id, content: [{ type: 'text', text: 'Echo: careful' }] });
    expect(gate.seenAuth.length).toBeGreaterThan(seenBefore);
    // A second verdict is refused.
    await expect(checkAnswers(store, s.id, [verdict], (i) => `events[${i}]`)).rejects.toThrow(/already answered/);
    expect(await last(s.id)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });
  }, 60_000);

  it('a server that refuses the credential at call time: mcp_authentication_failed_error naming it, an error result, and the session goes on', async () => {
    fake.enqueue(toolUseResponse('mcp__everything__echo', { message: 'x' }, { id: 'toolu_x' }), textResponse('The server refused me.'));
    const s = await store.createSession({ agent: agentWith(toolset('always_allow'), [{ name: 'everything', url: gate.url }]), vault_ids: ['vlt_team'] });
    await say(s.id, 'try it');
    // Listed with the good token; then the server's token changes (revoked) before the call runs.
    const real = mcpGatewayFor(store.db, store, secrets);
    const revokingAfterList: McpGateway = {
      listTools: async (...args) => {
        const tools = await real.listTools(...args);
        gate.token = 'revoked-and-replaced';
        return tools;
      },
      callTool: (...args) => real.callTool(...args),
    };
    await harness(revokingAfterList).wake(s.id);

    const [error] = await ofType(s.id, 'session.error');
    expect(error!.error).toMatchObject({ type: 'mcp_authentication_failed_error', mcp_server_name: 'everything', retry_status: { type: 'exhausted' } });
    expect(error!.error.message).toContain('everything');
    const [result] = await ofType(s.id, 'agent.mcp_tool_result');
    expect(result).toMatchObject({ is_error: true });
    expect(await last(s.id)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });
    // The next message works.
    fake.enqueue(textResponse('Another turn.'));
    await say(s.id, 'anything else?');
    await harness().wake(s.id);
    expect((await ofType(s.id, 'agent.message')).at(-1)!.content).toEqual([{ type: 'text', text: 'Another turn.' }]);
    const events = await store.getEvents(s.id);
    expect(checkLogInvariants(events)).toEqual([]);
    expect(JSON.stringify(events)).not.toContain(CANARY);
  }, 60_000);

  it('a tool the toolset disables is neither offered nor run when the model calls it anyway', async () => {
    fake.enqueue(toolUseResponse('mcp__everything__echo', { message: 'sneaky' }, { id: 'toolu_d' }), textResponse('ok'));
    const tools: AgentToolParams[] = [{ type: 'mcp_toolset', mcp_server_name: 'everything', default_config: { permission_policy: { type: 'always_allow' } }, configs: [{ name: 'echo', enabled: false }] }];
    const s = await store.createSession({ agent: agentWith(tools, [{ name: 'everything', url: gate.url }]), vault_ids: ['vlt_team'] });
    await say(s.id, 'echo');
    await harness().wake(s.id);
    expect(toolNames(0)).not.toContain('mcp__everything__echo');
    expect(toolNames(0)).toContain('mcp__everything__get-sum');
    expect(await ofType(s.id, 'agent.mcp_tool_use')).toEqual([]);
    const [call] = await ofType(s.id, 'agent.tool_use');
    expect(call).toMatchObject({ name: 'mcp__everything__echo', evaluated_permission: 'deny' });
    const [result] = await ofType(s.id, 'agent.tool_result');
    expect(result).toMatchObject({ tool_use_id: call!.id, is_error: true });
    expect(JSON.stringify(await store.getEvents(s.id))).not.toContain('Echo: sneaky');
  }, 60_000);

  it('a call stored without a result (the harness died) is run on the next wake and answered once', async () => {
    fake.enqueue(textResponse('Recovered.'));
    const s = await store.createSession({ agent: agentWith(toolset('always_allow'), [{ name: 'everything', url: gate.url }]), vault_ids: ['vlt_team'] });
    const listing = { type: 'mcp.tools_listed' as const, servers: [{ mcp_server_name: 'everything', tools: [{ name: 'echo', description: 'Echoes back the input string', input_schema: { type: 'object', properties: { message: { type: 'string' } } } }] }] };
    await store.emitEvents(s.id, [{ type: 'user.message', content: [{ type: 'text', text: 'echo' }] }, { type: 'session.status_running' }, listing]);
    const start = await store.emitEvent(s.id, { type: 'span.model_request_start', model: 'claude-agent-model' });
    await store.emitEvents(s.id, [
      { type: 'agent.mcp_tool_use', name: 'echo', mcp_server_name: 'everything', input: { message: 'after the crash' }, model_tool_use_id: 'toolu_c', evaluated_permission: 'allow' },
      { type: 'span.model_request_end', model_request_start_id: start.id, is_error: false, model_usage: { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } },
    ]);
    await harness().wake(s.id);
    await harness().wake(s.id);
    const results = await ofType(s.id, 'agent.mcp_tool_result');
    expect(results).toHaveLength(1);
    expect(results[0]!.content).toEqual([{ type: 'text', text: 'Echo: after the crash' }]);
    expect(toolNames(0)).toEqual(['mcp__everything__echo']); // from the stored listing: nothing listed again
    expect(await ofType(s.id, 'mcp.tools_listed')).toHaveLength(1);
    expect(await last(s.id)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });
  }, 60_000);

  it('a server that cannot be listed: a session.error naming it, and the session runs without its tools', async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as net.AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    fake.enqueue(textResponse('No MCP today.'));
    const tools: AgentToolParams[] = [...toolset('always_allow'), { type: 'mcp_toolset', mcp_server_name: 'gone' }];
    const s = await store.createSession({ agent: agentWith(tools, [{ name: 'everything', url: gate.url }, { name: 'gone', url: `http://127.0.0.1:${port}/mcp` }]), vault_ids: ['vlt_team'] });
    await say(s.id, 'hi');
    await harness().wake(s.id);
    const errors = await ofType(s.id, 'session.error');
    expect(errors.map((e) => e.error)).toEqual([expect.objectContaining({ type: 'mcp_connection_failed_error', mcp_server_name: 'gone' }) as unknown]);
    expect(toolNames(0).some((n) => n.startsWith('mcp__gone__'))).toBe(false);
    expect(toolNames(0)).toContain('mcp__everything__echo');
    const [listing] = await ofType(s.id, 'mcp.tools_listed');
    expect(listing!.servers.map((x) => [x.mcp_server_name, x.error ?? null])).toEqual([['everything', null], ['gone', 'connection']]);
    expect(await last(s.id)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });
  }, 60_000);
});

describe('a session whose agent names an MCP server on loopback the operator does not trust', () => {
  it('records mcp_connection_failed_error "refused by the network policy" naming the server, the server sees no request, and the session goes on', async () => {
    vi.stubEnv('PADDOCK_OUTBOUND_ALLOW', '');
    try {
      fake.enqueue(textResponse('No MCP today.'));
      const s = await store.createSession({ agent: agentWith(toolset('always_allow'), [{ name: 'everything', url: gate.url }]), vault_ids: ['vlt_team'] });
      await say(s.id, 'hi');
      await harness().wake(s.id);
      const errors = (await ofType(s.id, 'session.error')).map((e) => e.error);
      expect(errors).toEqual([expect.objectContaining({ type: 'mcp_connection_failed_error', mcp_server_name: 'everything', message: expect.stringContaining('127.0.0.1 was refused by the network policy') as unknown }) as unknown]);
      expect(JSON.stringify(errors)).not.toMatch(/HTTP|401|invalid_token/);
      expect(gate.seenAuth).toEqual([]);
      expect(await last(s.id)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });
    } finally {
      vi.unstubAllEnvs();
    }
  }, 60_000);
});

describe('a session whose MCP server echoes the credential back in disguise', () => {
  it('stores none of its base64, base64url, URL-encoded, reversed or spaced-out copies: not in the result, the listing or anything the model is sent', async () => {
    const hostile = await startEchoAuthMcp();
    try {
      secrets.put('vlt_team', hostile.url, { credentialId: 'vcrd_h', vaultId: 'vlt_team', type: 'static_bearer', token: CANARY });
      fake.enqueue(toolUseResponse('mcp__hostile__whoami', {}, { id: 'toolu_w' }), textResponse('noted'));
      const tools: AgentToolParams[] = [
        { type: 'agent_toolset_20260401', default_config: { enabled: false } },
        { type: 'mcp_toolset', mcp_server_name: 'hostile', default_config: { permission_policy: { type: 'always_allow' } } },
      ];
      const s = await store.createSession({ agent: agentWith(tools, [{ name: 'hostile', url: hostile.url }]), vault_ids: ['vlt_team'] });
      await say(s.id, 'who am I?');
      await harness().wake(s.id);

      // The scan sees the result: every echoed line is there, its value redacted.
      const [result] = await ofType(s.id, 'agent.mcp_tool_result');
      expect(result).toMatchObject({ is_error: false });
      const text = (result!.content ?? []).map((c) => (c.type === 'text' ? c.text : '')).join('\n');
      const forms = echoedForms(`Bearer ${CANARY}`);
      expect(text.split('\n')).toEqual(forms.map((f) => `${f.slice(0, f.indexOf(': '))}: [redacted]`));
      const stored = JSON.stringify(await store.getEvents(s.id)) + JSON.stringify(fake.requests);
      for (const f of forms) expect(stored).not.toContain(f.slice(f.indexOf(': ') + 2));
      expect(stored).toContain('[redacted]');
    } finally {
      await hostile.close();
    }
  }, 60_000);
});
