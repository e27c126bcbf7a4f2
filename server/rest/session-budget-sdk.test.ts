import type Anthropic from '@anthropic-ai/sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeMessagesApi, textResponse } from '~/server/harness/testing/fake-messages-api';
import { type SdkServer, startSdkServer } from '~/server/rest/testing/sdk-server';

/** A session's budget through the official SDK: priced at list prices from the usage the fake Messages API reports. */
let sdk: SdkServer;
let fake: FakeMessagesApi;
let client: Anthropic;

beforeEach(async () => {
  sdk = await startSdkServer({ name: 'session-budget' });
  ({ fake, client } = sdk);
});

afterEach(() => sdk.close());

async function idleCount(sessionId: string, n: number) {
  for (let i = 0; i < 600; i++) {
    const events = [];
    for await (const e of client.beta.sessions.events.list(sessionId)) events.push(e);
    const idles = events.filter((e) => e.type === 'session.status_idle');
    if (idles.length >= n) return { events, idles };
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`session ${sessionId} did not go idle ${n} times`);
}

const say = (text: string) => ({ events: [{ type: 'user.message' as const, content: [{ type: 'text' as const, text }] }] });

describe('a session budget', () => {
  it('stops a session at its cap with budget_reached and no new model request, and goes on once raised', { timeout: 60_000 }, async () => {
    const budget = { type: 'limit' as const, max_list_cost: { amount: '1', currency: 'USD' as const } };
    const session = await client.beta.sessions.create({ agent: 'agent_default', environment_id: 'env_default', budget });
    expect(session.budget).toEqual(budget);
    // 10,000 input tokens at any Claude family's list price cost at least a cent: the cap.
    fake.enqueue(textResponse('First.', { usage: { input_tokens: 10_000, output_tokens: 10 } }));
    await client.beta.sessions.events.send(session.id, say('one'));
    const first = await idleCount(session.id, 1);
    expect(first.idles[0]).toMatchObject({ stop_reason: { type: 'end_turn' } });
    expect(fake.requests).toHaveLength(1);

    await client.beta.sessions.events.send(session.id, say('two'));
    const second = await idleCount(session.id, 2);
    expect(second.idles[1]).toMatchObject({ stop_reason: { type: 'budget_reached' } });
    expect(fake.requests).toHaveLength(1);
    const usage = second.events.filter((e) => e.type === 'session.usage');
    expect(usage).toHaveLength(1);
    expect(usage[0]).toMatchObject({ usage: { input_tokens: 10_000, output_tokens: 10 }, budget });
    expect(Number((usage[0] as { usage: { list_cost: { amount: string } } }).usage.list_cost.amount)).toBeGreaterThanOrEqual(1);

    // Not raised above what is spent: refused.
    await expect(client.beta.sessions.update(session.id, { budget: { type: 'limit', max_list_cost: { amount: '1', currency: 'USD' } } })).rejects.toMatchObject({ status: 400 });
    const raised = { type: 'limit' as const, max_list_cost: { amount: '500', currency: 'USD' as const } };
    expect((await client.beta.sessions.update(session.id, { budget: raised })).budget).toEqual(raised);
    fake.enqueue(textResponse('Third.'));
    await client.beta.sessions.events.send(session.id, say('three'));
    const third = await idleCount(session.id, 3);
    expect(third.idles[2]).toMatchObject({ stop_reason: { type: 'end_turn' } });
    expect(fake.requests).toHaveLength(2);
  });

  it('refuses a malformed budget and adding one to a session created without', async () => {
    await expect(client.beta.sessions.create({ agent: 'agent_default', environment_id: 'env_default', budget: { type: 'limit', max_list_cost: { amount: '1.5', currency: 'USD' } } })).rejects.toMatchObject({ status: 400 });
    const plain = await client.beta.sessions.create({ agent: 'agent_default', environment_id: 'env_default' });
    expect(plain.budget).toBeNull();
    await expect(client.beta.sessions.update(plain.id, { budget: { type: 'limit', max_list_cost: { amount: '100', currency: 'USD' } } })).rejects.toMatchObject({ status: 400 });
  });
});
