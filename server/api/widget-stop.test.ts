import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StoredEvent } from '~/lib/events';
import { VISITOR_HEADER, WIDGET_DEFAULTS } from '~/lib/widget';
import { SAME_ORIGIN, answeredStatus, httpApi } from '~/server/api/testing/http';
import { createAnthropicModel } from '~/server/harness/anthropic-model';
import { type FakeMessagesApi, startFakeMessagesApi, textResponse } from '~/server/harness/testing/fake-messages-api';
import { testRuntime } from '~/server/harness/testing/test-runtime';
import type { Runtime } from '~/server/runtime';
import { openSqliteStore } from '~/server/session/sqlite-store';

const DOCS = 'http://127.0.0.1:4020';
let dir: string;
let fake: FakeMessagesApi;
let rt: Runtime;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-widget-stop-'));
  fake = await startFakeMessagesApi();
  const store = await openSqliteStore({ file: path.join(dir, 'db.sqlite') });
  // The real SDK, over HTTP + SSE, against the scripted fake: a slow answer streams for seconds.
  rt = testRuntime({ store, model: createAnthropicModel({ apiKey: 'test-key', baseURL: fake.url, model: 'claude-fake-test' }), dataDir: dir });
  await rt.agents.ensureDefaults();
  await rt.access.widgets.store.save('agent_default', { ...WIDGET_DEFAULTS, enabled: true, allowed_origins: [DOCS], environment_id: 'env_default', visitor_per_minute: 8 });
});

afterEach(async () => {
  await rt.harness.close();
  await rt.store.close();
  await fake.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function visitor(ip: string): Promise<Record<string, string>> {
  const r = await httpApi(rt).mutate('widget.open', { agentId: 'agent_default', origin: DOCS }, { ...SAME_ORIGIN, 'x-forwarded-for': ip });
  expect(r.status).toBe(200);
  return { ...SAME_ORIGIN, [VISITOR_HEADER]: (r.body!.result!.data as { token: string }).token, 'x-forwarded-for': ip };
}

async function conversation(headers: Record<string, string>): Promise<string> {
  return ((await httpApi(rt).mutate('widget.create', undefined, headers)).body!.result!.data as { id: string }).id;
}

const types = (events: readonly StoredEvent[]) => events.map((e) => e.type);
const SLOW = textResponse('one two three four five six seven eight nine ten '.repeat(4), { chunks: 40, chunkDelayMs: 150 });

describe('widget.stop', () => {
  it('stops a running answer: the stream is aborted, no answer is stored, the conversation idles and then answers the next message', { timeout: 20_000 }, async () => {
    const api = httpApi(rt);
    const me = await visitor('203.0.113.1');
    const id = await conversation(me);
    fake.enqueue(SLOW, textResponse('the second answer'));
    expect((await api.mutate('widget.send', { sessionId: id, text: 'tell me everything' }, me)).status).toBe(200);
    const done = rt.harness.wake(id);
    // The answer is streaming once the model server has the request (the span start is stored just before it is sent).
    await expect.poll(() => fake.requests.filter((r) => r.path === '/v1/messages').length, { timeout: 5_000 }).toBe(1);

    const t0 = performance.now();
    const stopped = await api.mutate('widget.stop', { sessionId: id }, me);
    expect(stopped.status).toBe(200);
    expect(stopped.body!.result!.data).toEqual({ stopped: true });
    await done;
    // Far sooner than the 6 s the answer takes to stream.
    expect(performance.now() - t0).toBeLessThan(2_000);
    const events = await rt.store.getEvents(id);
    expect(types(events)).not.toContain('agent.message');
    expect(events.filter((e) => e.type === 'user.interrupt')).toHaveLength(1);
    expect(events.find((e) => e.type === 'span.model_request_end')).toMatchObject({ is_error: true, model_stop_reason: 'interrupted' });
    expect(events.at(-1)).toMatchObject({ type: 'session.status_idle' });

    // Idle: a stop is a no-op success, storing nothing.
    const last = events.at(-1)!.seq;
    expect((await api.mutate('widget.stop', { sessionId: id }, me)).body!.result!.data).toEqual({ stopped: false });
    expect((await rt.store.getEvents(id)).at(-1)!.seq).toBe(last);

    // And the conversation goes on.
    expect((await api.mutate('widget.send', { sessionId: id, text: 'short, please' }, me)).status).toBe(200);
    await rt.harness.wake(id);
    const after = await rt.store.getEvents(id, { types: ['agent.message'] });
    expect(after).toEqual([expect.objectContaining({ content: [{ type: 'text', text: 'the second answer' }] })]);
  });

  it('stops a message not yet taken up, and stores one interrupt however often a turn is stopped (a double press, a retried request)', async () => {
    const api = httpApi(rt);
    const me = await visitor('203.0.113.2');
    const id = await conversation(me);
    // No harness picks it up: the message waits, as it does for the moment before a turn is marked running.
    rt.harness.wake = () => Promise.resolve();
    await api.mutate('widget.send', { sessionId: id, text: 'go' }, me);
    for (let i = 0; i < 3; i++) expect((await api.mutate('widget.stop', { sessionId: id }, me)).body!.result!.data).toEqual({ stopped: true });
    expect(await rt.store.getEvents(id, { types: ['user.interrupt'] })).toHaveLength(1);
    // The next turn is a new one: its stop is stored too.
    await api.mutate('widget.send', { sessionId: id, text: 'again' }, me);
    await api.mutate('widget.stop', { sessionId: id }, me);
    expect(await rt.store.getEvents(id, { types: ['user.interrupt'] })).toHaveLength(2);
  });

  it("answers a stop of another visitor's, the owner's or another agent's conversation with 404 and stores nothing", { timeout: 20_000 }, async () => {
    const api = httpApi(rt);
    const ana = await visitor('198.51.100.1');
    const bo = await visitor('198.51.100.2');
    const anas = await conversation(ana);
    fake.enqueue(SLOW);
    await api.mutate('widget.send', { sessionId: anas, text: 'ANA-SECRET' }, ana);
    const done = rt.harness.wake(anas);
    await expect.poll(async () => types(await rt.store.getEvents(anas)), { timeout: 5_000 }).toContain('span.model_request_start');
    const owners = (await rt.store.createSession({ title: 'OWNER-SESSION' })).id;
    await rt.store.emitEvent(owners, { type: 'user.message', content: [{ type: 'text', text: 'owner asks' }] });

    // A visitor of another agent (with a conversation of its own there).
    const other = await rt.agents.createAgent({ name: 'other', model: 'claude-fake-test' });
    await rt.access.widgets.store.save(other.id, { ...WIDGET_DEFAULTS, enabled: true, allowed_origins: [DOCS], environment_id: 'env_default' });
    const opened = await api.mutate('widget.open', { agentId: other.id, origin: DOCS }, { ...SAME_ORIGIN, 'x-forwarded-for': '198.51.100.3' });
    const cy = { ...SAME_ORIGIN, [VISITOR_HEADER]: (opened.body!.result!.data as { token: string }).token, 'x-forwarded-for': '198.51.100.3' };

    for (const [who, target] of [
      [bo, anas],
      [bo, owners],
      [cy, anas],
      [cy, owners],
    ] as const) {
      const r = await api.mutate('widget.stop', { sessionId: target }, who);
      expect(answeredStatus(r)).toBe(404);
      expect(r.text).not.toMatch(/ANA-SECRET|OWNER-SESSION/);
    }
    expect(await rt.store.getEvents(anas, { types: ['user.interrupt'] })).toEqual([]);
    expect(await rt.store.getEvents(owners, { types: ['user.interrupt'] })).toEqual([]);
    // Ana's answer was not stopped by any of it.
    expect((await api.mutate('widget.stop', { sessionId: anas }, ana)).body!.result!.data).toEqual({ stopped: true });
    await done;
  });

  it('refuses a flood of stops past the minute (429) and bad input with a typed 400, never a 5xx', async () => {
    const api = httpApi(rt);
    const me = await visitor('192.0.2.7');
    const id = await conversation(me);
    const statuses = await Promise.all(Array.from({ length: 20 }, () => api.mutate('widget.stop', { sessionId: id }, me).then((r) => r.status)));
    // One conversation made counted against the visitor's 8 a minute already.
    expect(statuses.filter((s) => s === 200)).toHaveLength(7);
    expect(statuses.filter((s) => s === 429)).toHaveLength(13);
    // The same minute as a message: the send is refused too.
    expect((await api.mutate('widget.send', { sessionId: id, text: 'hi' }, me)).status).toBe(429);

    const fresh = await visitor('192.0.2.8');
    for (const input of [{}, { sessionId: 'nope' }, { sessionId: 42 }, { sessionId: 'sesn_'.padEnd(5_000, 'a') }, null, 'sesn_x']) {
      const r = await api.mutate('widget.stop', input, fresh);
      expect(r.status, JSON.stringify(input)).toBe(400);
      expect(r.body?.error?.data?.code).toBe('BAD_REQUEST');
    }
    expect(await rt.store.getEvents(id)).toEqual([]);
  });
});
