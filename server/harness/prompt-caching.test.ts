import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ContextPolicy } from '~/lib/context-policy';
import type { StoredEvent } from '~/lib/events';
import { HandRegistry } from '~/server/hands/registry';
import { createMemoryProvisioner } from '~/server/hands/memory-hand';
import { createAnthropicModel } from '~/server/harness/anthropic-model';
import { Harness } from '~/server/harness/harness';
import { LiveBus } from '~/server/session/live-bus';
import { type FakeMessagesApi, type RecordedRequest, startFakeMessagesApi, textResponse, toolUseResponse } from '~/server/harness/testing/fake-messages-api';
import { PromptCache, requestBlocks } from '~/server/harness/testing/prompt-cache';
import { policyAgent } from '~/server/harness/testing/policy-agent';
import { openSqliteStore } from '~/server/session/sqlite-store';
import type { SessionStore } from '~/server/session/store';

/**
 * Prompt caching that holds: 50-turn sessions (each turn a write call and an answer) against a
 * fake whose cache reads are earned from shared prefixes (prompt-cache.ts). Under `full` every
 * request's prefix is its predecessor's; under `window` it is too, except where the window steps.
 */

let dir: string;
let store: SessionStore;
let fake: FakeMessagesApi;
let harness: Harness;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-caching-'));
  store = await openSqliteStore({ file: path.join(dir, 'db.sqlite') });
  fake = await startFakeMessagesApi({ promptCache: true });
  const live = new LiveBus();
  const hands = new HandRegistry({ store, live, provisioners: { memory: createMemoryProvisioner() }, defaultKind: 'memory' });
  harness = new Harness({ store, live, hands, model: createAnthropicModel({ apiKey: 'k', baseURL: fake.url, model: 'claude-fake-test' }), maxRetries: 0, retryBaseMs: 5, leaseTtlMs: 5_000 });
});

afterEach(async () => {
  await harness.close();
  await fake.close();
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const agentWith = (policy: ContextPolicy) => policyAgent(policy, `You are a careful agent. ${'Follow the house rules. '.repeat(200)}`);

/** Each turn: the model writes a file, then answers; the session goes idle. */
async function runTurns(sessionId: string, turns: number): Promise<StoredEvent[]> {
  let n = 0;
  fake.setFallback((req) => {
    const messages = (req.body?.messages ?? []) as Array<{ role: string; content: Array<{ type: string }> }>;
    const last = messages.at(-1)!;
    if (last.content.some((b) => b.type === 'tool_result')) return textResponse(`Wrote it (${n}). ${'Some notes on the change. '.repeat(8)}`);
    n += 1;
    return toolUseResponse('write', { file_path: `notes/${n}.md`, content: `# Note ${n}\n${'A line of the note. '.repeat(40)}` });
  });
  for (let t = 1; t <= turns; t++) {
    const before = (await store.getEvents(sessionId)).length;
    await store.emitEvent(sessionId, { type: 'user.message', content: [{ type: 'text', text: `Turn ${t}: write the next note.` }] });
    await harness.wake(sessionId);
    for (let i = 0; ; i++) {
      const events = await store.getEvents(sessionId);
      if (events.length > before + 1 && events.at(-1)!.type === 'session.status_idle') break;
      if (i > 400) throw new Error(`turn ${t} did not end`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }
  return store.getEvents(sessionId);
}

function cacheShare(events: StoredEvent[]): { read: number; total: number; share: number } {
  let read = 0;
  let total = 0;
  for (const e of events) {
    if (e.type !== 'span.model_request_end') continue;
    const u = e.model_usage;
    read += u.cache_read_input_tokens ?? 0;
    total += u.input_tokens + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0);
  }
  return { read, total, share: read / total };
}

/** For each request after the first: does it start with everything its predecessor sent? */
function prefixKept(requests: RecordedRequest[]): boolean[] {
  const blocks = requests.map((r) => requestBlocks(r.body as Parameters<typeof requestBlocks>[0]).map((b) => b.json));
  return blocks.slice(1).map((cur, i) => blocks[i]!.every((b, j) => cur[j] === b));
}

describe('prompt caching', () => {
  it('models the cache honestly: a repeated prefix is read, a new one written, a short one never cached', () => {
    const cache = new PromptCache();
    const tools = [{ name: 't', description: 'x'.repeat(6_000), input_schema: { type: 'object' }, cache_control: { type: 'ephemeral' } }];
    const first = cache.account({ tools, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }] }] });
    expect(first.cache_read_input_tokens).toBe(0);
    expect(first.cache_creation_input_tokens).toBeGreaterThan(1_500);
    const second = cache.account({ tools, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'text', text: 'more', cache_control: { type: 'ephemeral' } }] }] });
    expect(second.cache_read_input_tokens).toBe(first.cache_creation_input_tokens);
    // A changed tool (the very start of the prefix) reads nothing.
    const changed = cache.account({ tools: [{ ...tools[0]!, description: 'y'.repeat(6_000) }], messages: [] });
    expect(changed.cache_read_input_tokens).toBe(0);
    expect(new PromptCache().account({ messages: [{ role: 'user', content: [{ type: 'text', text: 'short', cache_control: { type: 'ephemeral' } }] }] }).cache_creation_input_tokens).toBe(0);
  });

  it('reads ≥ 90% of input tokens from the cache over 50 turns under full, every request extending the last', async () => {
    const s = await store.createSession({ agent: agentWith({ type: 'full' }) });
    const events = await runTurns(s.id, 50);
    const requests = fake.requests.filter((r) => r.path.endsWith('/messages'));
    expect(requests).toHaveLength(100);
    expect(prefixKept(requests).every(Boolean)).toBe(true);
    const { share } = cacheShare(events);
    expect(share).toBeGreaterThanOrEqual(0.9);
  }, 60_000);

  it('reads ≥ 90% of input tokens from the cache over 50 turns under window, the prefix changing only where the window steps', async () => {
    const s = await store.createSession({ agent: agentWith({ type: 'window', max_input_tokens: 12_000 }) });
    const events = await runTurns(s.id, 50);
    const requests = fake.requests.filter((r) => r.path.endsWith('/messages'));
    const kept = prefixKept(requests);
    const marker = (r: RecordedRequest) => /Events \d+–\d+ of this session/.exec(JSON.stringify(r.body?.messages ?? []))?.[0] ?? null;
    // Wherever the prefix changed, the window stepped (its marker names a new range); nowhere else.
    kept.forEach((k, i) => expect(k || marker(requests[i + 1]!) !== marker(requests[i]!), `request ${i + 2} changed its prefix without a window step`).toBe(true));
    const steps = kept.filter((k) => !k).length;
    expect(steps).toBeGreaterThan(0); // the window did move
    expect(steps).toBeLessThan(10);
    const { share } = cacheShare(events);
    expect(share).toBeGreaterThanOrEqual(0.9);
  }, 60_000);
});
