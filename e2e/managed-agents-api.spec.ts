import Anthropic from '@anthropic-ai/sdk';
import { expect, test } from '@playwright/test';
import { E2E_API_KEY } from '~/e2e/auth';
import { enqueue, resetFake } from '~/e2e/fake';
import { APP_URL } from '~/e2e/ports';

/**
 * The acceptance of the Managed Agents API: the official SDK, unmodified, with only `baseURL` and
 * the key changed, against a real `next start` whose hands are sandboxes.
 */
const BASE = APP_URL;
const client = new Anthropic({ apiKey: E2E_API_KEY, baseURL: BASE, maxRetries: 0 });

test.describe.configure({ timeout: 90_000 });
test.beforeEach(resetFake);

async function untilIdle(sessionId: string): Promise<Anthropic.Beta.Sessions.BetaManagedAgentsSession> {
  for (let i = 0; i < 200; i++) {
    const s = await client.beta.sessions.retrieve(sessionId);
    const last = (await client.beta.sessions.events.list(sessionId, { order: 'desc', limit: 1 })).data[0];
    if (s.status === 'idle' && last?.type === 'session.status_idle') return s;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`session ${sessionId} did not go idle`);
}

test('the official SDK runs an agent on a sandbox hand: approval, a custom tool through toolRunner, paging, usage and errors', async () => {
  const agent = await client.beta.agents.create({
    name: 'Release helper',
    model: 'claude-sonnet-5-5',
    system: 'You help with releases.',
    tools: [
      { type: 'agent_toolset_20260401', configs: [{ name: 'bash', permission_policy: { type: 'always_ask' } }] },
      { type: 'custom', name: 'ticket_status', description: 'Status of a ticket', input_schema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } },
    ],
  });
  const environment = await client.beta.environments.create({ name: 'release', config: { type: 'cloud', networking: { type: 'limited' } } });
  const session = await client.beta.sessions.create({ agent: agent.id, environment_id: environment.id, title: 'release 1.2' });
  expect(session.agent).toMatchObject({ id: agent.id, version: 1 });

  await enqueue(
    { kind: 'message', steps: [{ kind: 'tool_use', name: 'bash', input: { command: 'echo built on $(uname -s)' } }] },
    { kind: 'message', steps: [{ kind: 'tool_use', name: 'ticket_status', input: { id: 'REL-7' } }] },
    { kind: 'message', steps: [{ kind: 'text', text: 'Built, and REL-7 is approved.' }], usage: { input_tokens: 120, output_tokens: 9, cache_read_input_tokens: 80 } },
  );
  const stream = await client.beta.sessions.events.stream(session.id);
  await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'build and check REL-7' }] }] });
  const seen: Anthropic.Beta.Sessions.BetaManagedAgentsStreamSessionEvents[] = [];
  for await (const e of stream) {
    seen.push(e);
    if (e.type === 'session.status_idle') break;
  }
  const ask = seen.find((e) => e.type === 'agent.tool_use');
  expect(ask).toMatchObject({ name: 'bash', evaluated_permission: 'ask' });
  expect(seen.at(-1)).toMatchObject({ stop_reason: { type: 'requires_action', event_ids: [ask!.id] } });

  const answered: string[] = [];
  const runner = client.beta.sessions.events.toolRunner(session.id, {
    maxIdleMs: 1_000,
    signal: AbortSignal.timeout(30_000),
    tools: [
      {
        type: 'custom',
        name: 'ticket_status',
        description: 'Status of a ticket',
        input_schema: { type: 'object', properties: { id: { type: 'string' } } },
        run: (input: unknown) => {
          answered.push((input as { id: string }).id);
          return 'approved';
        },
      } as never,
    ],
  });
  const running = (async () => {
    for await (const call of runner) void call;
  })();
  await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.tool_confirmation', tool_use_id: ask!.id, result: 'allow' }] });
  await running;
  expect(answered).toEqual(['REL-7']);

  const idle = await untilIdle(session.id);
  expect(idle.usage.input_tokens).toBeGreaterThanOrEqual(120);
  expect(idle.usage.cache_read_input_tokens).toBeGreaterThanOrEqual(80);
  const history = [];
  for await (const e of client.beta.sessions.events.list(session.id)) history.push(e);
  const result = history.find((e) => e.type === 'agent.tool_result');
  expect(JSON.stringify(result)).toContain('built on Linux');
  expect((result as { hand?: string }).hand).toMatch(/^sandbox-/);
  expect(history.findLast((e) => e.type === 'agent.message')).toMatchObject({ content: [{ type: 'text', text: 'Built, and REL-7 is approved.' }] });

  // A longer history (the fake echoes unscripted messages), paged 25 at a time.
  for (let i = 0; i < 18; i++) {
    await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: `ping ${i}` }] }] });
    await untilIdle(session.id);
  }
  const paged = [];
  for await (const e of client.beta.sessions.events.list(session.id, { limit: 25 })) paged.push(e);
  expect(paged.length).toBeGreaterThan(100);
  expect(new Set(paged.map((e) => e.id)).size).toBe(paged.length);

  // Errors as the API types them.
  await expect(new Anthropic({ apiKey: 'pdk_not-a-key', baseURL: BASE, maxRetries: 0 }).beta.sessions.list()).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
  await expect(client.beta.sessions.retrieve('sesn_01J00000000000000000000000')).rejects.toBeInstanceOf(Anthropic.NotFoundError);
  await expect(client.beta.sessions.create({ agent: agent.id, environment_id: environment.id, title: 5 as never })).rejects.toBeInstanceOf(Anthropic.BadRequestError);
});

test('Prometheus metrics at /metrics and /v1/metrics, for an API key only', async ({ request }) => {
  const base = APP_URL;
  const refused = await request.get(`${base}/metrics`);
  expect(refused.status()).toBe(401);
  for (const path of ['/metrics', '/v1/metrics']) {
    const res = await request.get(`${base}${path}`, { headers: { authorization: `Bearer ${E2E_API_KEY}` } });
    expect(res.status()).toBe(200);
    expect(res.headers()['content-type']).toContain('text/plain');
    const text = await res.text();
    // Earlier specs ran turns on this server: the counters have moved.
    expect(text).toMatch(/^paddock_model_tokens_total\{kind="output"\} [1-9]\d*$/m);
    expect(text).toContain('paddock_hands_live');
    expect(text).toContain('paddock_process_resident_memory_bytes');
  }
});
