import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ContextPolicy } from '~/lib/context-policy';
import type { NewEvent, StoredEvent } from '~/lib/events';
import { HandRegistry } from '~/server/hands/registry';
import { createMemoryProvisioner } from '~/server/hands/memory-hand';
import { createAnthropicModel } from '~/server/harness/anthropic-model';
import { Harness } from '~/server/harness/harness';
import { LiveBus } from '~/server/session/live-bus';
import { type FakeMessagesApi, type RecordedRequest, startFakeMessagesApi, textResponse, toolUseResponse } from '~/server/harness/testing/fake-messages-api';
import { policyAgent } from '~/server/harness/testing/policy-agent';
import { openSqliteStore } from '~/server/session/sqlite-store';
import type { SessionStore } from '~/server/session/store';

/**
 * Context policies in a running session (the real SDK against the fake Messages API): the brain
 * recovers a fact its window dropped, through session_events; a compaction summarizes a long
 * session and later requests start from the summary, while the log keeps everything.
 */

let dir: string;
let store: SessionStore;
let fake: FakeMessagesApi;
let live: LiveBus;
let harness: Harness;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-context-'));
  store = await openSqliteStore({ file: path.join(dir, 'db.sqlite') });
  fake = await startFakeMessagesApi();
  live = new LiveBus();
  const hands = new HandRegistry({ store, live, provisioners: { memory: createMemoryProvisioner() }, defaultKind: 'memory' });
  harness = new Harness({
    store, live, hands,
    model: createAnthropicModel({ apiKey: 'test-key', baseURL: fake.url, model: 'claude-fake-test' }),
    maxRetries: 0, retryBaseMs: 5, leaseTtlMs: 5_000,
  });
});

afterEach(async () => {
  await harness.close();
  await fake.close();
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const agentWith = (policy: ContextPolicy) => policyAgent(policy);

const USAGE = { input_tokens: 100, output_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };

/** `turns` answered turns, as the harness would have stored them; `say(i)` is what the user says in turn i. */
async function pastTurns(sessionId: string, turns: number, say: (i: number) => string): Promise<void> {
  for (let i = 1; i <= turns; i++) {
    const [, start] = await store.emitEvents(sessionId, [
      { type: 'user.message', content: [{ type: 'text', text: say(i) }] },
      { type: 'span.model_request_start', model: 'claude-agent-model' },
    ]);
    const batch: NewEvent[] = [
      { type: 'agent.message', content: [{ type: 'text', text: `Noted (turn ${i}).` }] },
      { type: 'span.model_request_end', model_request_start_id: start!.id, is_error: false, model_usage: USAGE },
    ];
    await store.emitEvents(sessionId, batch);
  }
  await store.emitEvent(sessionId, { type: 'session.status_idle', stop_reason: { type: 'end_turn' }, stop_details: null });
}

async function runUntilIdle(sessionId: string, text: string): Promise<StoredEvent[]> {
  const before = (await store.getEvents(sessionId)).length;
  await store.emitEvent(sessionId, { type: 'user.message', content: [{ type: 'text', text }] });
  await harness.wake(sessionId);
  for (let i = 0; i < 200; i++) {
    const events = await store.getEvents(sessionId);
    if (events.length > before + 1 && events.at(-1)!.type === 'session.status_idle') return events;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('the session did not go idle');
}

/** The text of the newest user content of a recorded request. */
function lastUserText(r: RecordedRequest): string {
  const messages = (r.body?.messages ?? []) as Array<{ role: string; content: Array<{ type: string; text?: string; content?: Array<{ text?: string }> }> }>;
  const last = messages.at(-1)!;
  return last.content.map((b) => b.text ?? (b.content ?? []).map((c) => c.text ?? '').join(' ')).join(' ');
}

describe('context policies in a session', () => {
  it('recovers a fact from turn 3 of a 300-turn session, dropped by the window, through session_events', async () => {
    const s = await store.createSession({ agent: agentWith({ type: 'window', max_input_tokens: 12_000 }) });
    await pastTurns(s.id, 299, (i) => (i === 3 ? 'Remember this: the vault combination is 31-17-44.' : `Turn ${i}: ${'nothing to remember here. '.repeat(6)}`));
    // A fake that looks things up: asked about the combination, it searches its log; given the result, it answers from it.
    fake.setFallback((req) => {
      const last = lastUserText(req);
      const found = /vault combination is ([\d-]+)/.exec(last);
      if (found) return textResponse(`You told me: ${found[1]}.`);
      if (last.includes('What was the vault combination')) return toolUseResponse('session_events', { query: 'vault combination', types: ['user.message'] });
      return textResponse('Hmm.');
    });
    const events = await runUntilIdle(s.id, 'What was the vault combination I gave you?');

    const [asked, answered] = fake.requests.filter((r) => r.path.endsWith('/messages'));
    // The window had dropped it: the question's request does not hold the fact, but offers the tool and says what was left out.
    expect(JSON.stringify(asked!.body?.messages)).not.toContain('31-17-44');
    expect(JSON.stringify(asked!.body?.messages)).toMatch(/Events 2–\d+ of this session are left out/);
    expect((asked!.body?.tools as Array<{ name: string }>).map((t) => t.name)).toContain('session_events');
    // The tool found it in the log, and the model answered with it.
    const result = events.find((e) => e.type === 'agent.tool_result');
    expect(JSON.stringify(result)).toContain('the vault combination is 31-17-44');
    expect(JSON.stringify(answered!.body?.messages)).toContain('31-17-44');
    const answer = events.filter((e) => e.type === 'agent.message').at(-1);
    expect(JSON.stringify(answer)).toContain('You told me: 31-17-44.');
    expect(events.at(-1)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });
  }, 30_000);

  it('compacts a long session near its budget: a summary is stored with the range it covers, and later requests start from it', async () => {
    const s = await store.createSession({ agent: agentWith({ type: 'compaction', trigger_input_tokens: 4_000 }) });
    await pastTurns(s.id, 60, (i) => `Turn ${i}: ${i === 2 ? 'the deploy target is eu-west-3. ' : ''}${'filler words to fill the context. '.repeat(6)}`);
    fake.setFallback((req) => (req.body?.tool_choice ? textResponse('SUMMARY: sixty turns of notes; the deploy target is eu-west-3.') : textResponse('Going on from the summary.')));
    const events = await runUntilIdle(s.id, 'Carry on.');

    const compacted = events.find((e) => e.type === 'agent.thread_context_compacted');
    // It stands for every event before it (the message and the running status included).
    const before = events[events.indexOf(compacted!) - 1]!;
    expect(compacted).toMatchObject({ summary: expect.stringContaining('eu-west-3') as unknown, from_seq: 1, to_seq: before.seq, model_usage: expect.any(Object) as unknown });
    const requests = fake.requests.filter((r) => r.path.endsWith('/messages'));
    expect(requests).toHaveLength(2);
    // Near the trigger, the model server's own count decided (the fake has count_tokens).
    expect(fake.requests.filter((r) => r.path.endsWith('/count_tokens')).length).toBeGreaterThanOrEqual(1);
    // The summary request: the same prefix, the compaction prompt, no tools to call.
    expect(requests[0]!.body?.tool_choice).toEqual({ type: 'none' });
    expect(lastUserText(requests[0]!)).toContain('Write a summary that will replace everything above');
    // The turn's request: the summary, not the turns it stands for.
    const turn = JSON.stringify(requests[1]!.body?.messages);
    expect(turn).toContain('SUMMARY: sixty turns of notes');
    expect(turn).not.toContain('Turn 30:');
    expect(turn.length).toBeLessThan(JSON.stringify(requests[0]!.body?.messages).length / 5);
    expect(JSON.stringify(events.filter((e) => e.type === 'agent.message').at(-1))).toContain('Going on from the summary.');
    // The log keeps every turn.
    expect(events.filter((e) => e.type === 'user.message')).toHaveLength(61);
    // The next turn does not compact again: it is under the budget now.
    const more = await runUntilIdle(s.id, 'And again.');
    expect(more.filter((e) => e.type === 'agent.thread_context_compacted')).toHaveLength(1);
  }, 30_000);
});
