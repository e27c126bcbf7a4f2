import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAnthropicModel } from '~/server/harness/anthropic-model';
import { type FakeMessagesApi, startFakeMessagesApi, textResponse, toolUseResponse } from '~/server/harness/testing/fake-messages-api';
import { testRuntime } from '~/server/harness/testing/test-runtime';
import { setLiveSources } from '~/server/metrics/metrics';
import { handleRest } from '~/server/rest/handler';
import { type FetchServer, serveFetch } from '~/server/rest/testing/serve-fetch';
import type { Runtime } from '~/server/runtime';
import { openSqliteStore } from '~/server/session/sqlite-store';

const KEY = 'metrics-test-api-key-0123456789';
let dir: string;
let fake: FakeMessagesApi;
let rt: Runtime;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-metrics-'));
  fake = await startFakeMessagesApi();
  const store = await openSqliteStore({ file: path.join(dir, 'db.sqlite') });
  rt = testRuntime({ store, model: createAnthropicModel({ apiKey: 'k', baseURL: fake.url, model: 'claude-metrics' }), dataDir: dir, env: { PADDOCK_API_KEY: KEY }, harness: { maxRetries: 0 } });
  setLiveSources({ hands: () => rt.hands.liveHandCounts(), sessions: () => rt.harness.runningSessions });
  server = await serveFetch((req) => handleRest(req, { runtime: () => Promise.resolve(rt), maxBodyBytes: 1024 }));
});

afterEach(async () => {
  await server.close();
  await rt.harness.close();
  await rt.store.close();
  await fake.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

let server: FetchServer;
const get = (url: string, headers: Record<string, string> = {}) => fetch(`${server.url}${url}`, { headers });

/** The value of one series in the exposition text (0 when absent). */
function value(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

async function scrapeText(): Promise<string> {
  const res = await get('/v1/metrics', { 'x-api-key': KEY });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('text/plain');
  return res.text();
}

describe('/metrics', () => {
  it('answers only an API key, like the rest of /v1', async () => {
    const res = await get('/v1/metrics');
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    expect((await get('/v1/metrics', { authorization: `Bearer ${KEY}` })).status).toBe(200);
  });

  it('counts a turn: time to first token, request duration, tokens by kind, the tool call by hand kind, the cold provision', async () => {
    const before = await scrapeText();
    fake.enqueue(
      toolUseResponse('write', { file_path: 'a.txt', content: 'hi' }, { usage: { input_tokens: 120, output_tokens: 30, cache_read_input_tokens: 400, cache_creation_input_tokens: 50 } }),
      textResponse('done', { usage: { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 570, cache_creation_input_tokens: 0 } }),
    );
    const s = await rt.store.createSession({});
    await rt.store.emitEvent(s.id, { type: 'user.message', content: [{ type: 'text', text: 'write a' }] });
    await rt.harness.wake(s.id);
    for (let i = 0; i < 200 && (await rt.store.getEvents(s.id)).at(-1)?.type !== 'session.status_idle'; i++) await new Promise((r) => setTimeout(r, 20));
    const after = await scrapeText();
    const delta = (series: string) => value(after, series) - value(before, series);
    expect(delta('paddock_model_tokens_total{kind="input"}')).toBe(130);
    expect(delta('paddock_model_tokens_total{kind="output"}')).toBe(35);
    expect(delta('paddock_model_tokens_total{kind="cache_read"}')).toBe(970);
    expect(delta('paddock_model_tokens_total{kind="cache_write"}')).toBe(50);
    expect(delta('paddock_model_time_to_first_token_seconds_count{model="claude-metrics"}')).toBe(2);
    expect(delta('paddock_model_request_duration_seconds_count{model="claude-metrics",outcome="ok"}')).toBe(2);
    expect(delta('paddock_tool_duration_seconds_count{tool="write",hand_kind="memory",outcome="ok"}')).toBe(1);
    expect(delta('paddock_hand_provisions_total{kind="memory",source="cold"}')).toBe(1);
    expect(value(after, 'paddock_hands_live{kind="memory"}')).toBe(1);
    expect(after).toContain('paddock_sessions_live');
    expect(after).toContain('paddock_process_resident_memory_bytes');
  });

  it('counts a lease taken over from a harness that died', async () => {
    const before = value(await scrapeText(), 'paddock_lease_takeovers_total');
    const s = await rt.store.createSession({});
    fake.enqueue(textResponse('taken over'));
    // Another harness took the lease and died with work waiting: its lease lapses.
    await rt.store.acquireLease(s.id, 'dead-instance:1', 50);
    await rt.store.emitEvent(s.id, { type: 'user.message', content: [{ type: 'text', text: 'anyone?' }] });
    await new Promise((r) => setTimeout(r, 100));
    const stop = rt.harness.startSweeper(25);
    try {
      for (let i = 0; i < 200 && (await rt.store.getEvents(s.id)).at(-1)?.type !== 'session.status_idle'; i++) await new Promise((r) => setTimeout(r, 20));
    } finally {
      stop();
    }
    expect(value(await scrapeText(), 'paddock_lease_takeovers_total') - before).toBe(1);
    expect(JSON.stringify(await rt.store.getEvents(s.id))).toContain('taken over');
  });
});
