import fs from 'node:fs';
import Anthropic from '@anthropic-ai/sdk';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NewEvent, StoredEvent } from '~/lib/events';
import { BUDGET_SPENT, VISITOR_HEADER, WIDGET_DEFAULTS, type WidgetSettingsInput } from '~/lib/widget';
import { SAME_ORIGIN, httpApi } from '~/server/api/testing/http';
import { createAnthropicModel } from '~/server/harness/anthropic-model';
import { type FakeMessagesApi, startFakeMessagesApi, textResponse, toolUseResponse } from '~/server/harness/testing/fake-messages-api';
import { checkLogInvariants } from '~/server/harness/testing/log-invariants';
import { testRuntime } from '~/server/harness/testing/test-runtime';
import type { Runtime } from '~/server/runtime';
import { type KyselySessionStore } from '~/server/session/kysely-queries';
import { openSqliteStore } from '~/server/session/sqlite-store';
import { BudgetWatch } from '~/server/widgets/budget-watch';
import { handleRest } from '~/server/rest/handler';
import { serveFetch } from '~/server/rest/testing/serve-fetch';
import { CONVERSATION_ENDED } from '~/server/api/routers/widget';

const DOCS = 'http://127.0.0.1:4020';
const KEY = 'test-api-key-0123456789';
let dir: string;
let fake: FakeMessagesApi;
let rt: Runtime;
const stops: (() => void)[] = [];

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-budget-watch-'));
  fake = await startFakeMessagesApi();
  const store = await openSqliteStore({ file: path.join(dir, 'db.sqlite') });
  rt = testRuntime({ store, model: createAnthropicModel({ apiKey: 'test-key', baseURL: fake.url, model: 'claude-fake-test' }), dataDir: dir, env: { PADDOCK_API_KEY: KEY } });
  await rt.agents.ensureDefaults();
});

afterEach(async () => {
  for (const stop of stops.splice(0)) stop();
  await rt.harness.close();
  await rt.store.close();
  await fake.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function enable(o: Partial<WidgetSettingsInput>): Promise<void> {
  await rt.access.widgets.store.save('agent_default', { ...WIDGET_DEFAULTS, enabled: true, allowed_origins: [DOCS], environment_id: 'env_default', ...o });
}

/** A visitor and a conversation of its own, as the widget makes them. */
async function visitorConversation(): Promise<{ me: Record<string, string>; id: string }> {
  const api = httpApi(rt);
  const opened = await api.mutate('widget.open', { agentId: 'agent_default', origin: DOCS }, SAME_ORIGIN);
  const me = { ...SAME_ORIGIN, [VISITOR_HEADER]: (opened.body!.result!.data as { token: string }).token };
  const id = ((await api.mutate('widget.create', undefined, me)).body!.result!.data as { id: string }).id;
  return { me, id };
}

function watch(intervalMs = 100): BudgetWatch {
  const w = new BudgetWatch({ store: rt.store, widgets: rt.access.widgets.store, wake: (id) => rt.harness.wake(id) });
  stops.push(w.start(intervalMs));
  return w;
}

const db = () => (rt.store as KyselySessionStore).db;
const types = (events: readonly StoredEvent[]) => events.map((e) => e.type);
/** An answer that takes 8 s to stream. */
const SLOW = textResponse('a long and slow answer '.repeat(10), { chunks: 40, chunkDelayMs: 200 });
const notices = (events: readonly StoredEvent[]) => events.filter((e) => e.type === 'session.error' && e.error.message === BUDGET_SPENT);

/** The log once the session is terminated (the watch ends it within a tick or two of its turn stopping). */
async function terminated(id: string): Promise<StoredEvent[]> {
  await expect.poll(async () => (await rt.store.getSession(id))?.status, { timeout: 5_000 }).toBe('terminated');
  return rt.store.getEvents(id);
}

/** A running widget conversation whose first request spent its 1,000 tokens (the test plays the harness). */
async function spentConversation(): Promise<{ me: Record<string, string>; id: string }> {
  await enable({ max_tokens_per_session: 1_000 });
  const c = await visitorConversation();
  await rt.store.emitEvent(c.id, { type: 'user.message', content: [{ type: 'text', text: 'hi' }] });
  const [, start] = await rt.store.emitEvents(c.id, [{ type: 'session.status_running' }, { type: 'span.model_request_start' }]);
  await rt.store.emitEvent(c.id, { type: 'span.model_request_end', model_request_start_id: start!.id, is_error: false, model_usage: { input_tokens: 900, output_tokens: 200, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } });
  return c;
}

/** What the harness stores once the cut has aborted its step. */
const harnessStops = (id: string) => rt.store.emitEvent(id, { type: 'session.status_idle', stop_reason: { type: 'end_turn' }, stop_details: null });

describe('widget budget watch', () => {
  it('cuts a turn still running past the minutes of its conversation within seconds, and tells the visitor', { timeout: 20_000 }, async () => {
    await enable({ max_minutes_per_session: 1 });
    const { me, id } = await visitorConversation();
    // The conversation is 58.5 s old: its minute ends 1.5 s into the answer.
    const endsAt = Date.now() + 1_500;
    await db().updateTable('sessions').set({ created_at: new Date(endsAt - 60_000).toISOString() }).where('id', '=', id).execute();
    fake.enqueue(SLOW);
    expect((await httpApi(rt).mutate('widget.send', { sessionId: id, text: 'take your time' }, me)).status).toBe(200);
    const done = rt.harness.wake(id);
    watch();
    await done;
    const cutAfter = Date.now() - endsAt;
    expect(cutAfter).toBeGreaterThanOrEqual(0);
    expect(cutAfter).toBeLessThan(3_000);
    const events = await rt.store.getEvents(id);
    // What streamed before the cut is kept as an interrupted answer (the visitor saw it), nothing more.
    for (const m of events.filter((e) => e.type === 'agent.message')) expect(m).toMatchObject({ interrupted: true });
    expect(events.find((e) => e.type === 'span.model_request_end')).toMatchObject({ is_error: true, model_stop_reason: 'interrupted' });
    expect(events.filter((e) => e.type === 'user.interrupt')).toHaveLength(1);
    expect(notices(events)).toHaveLength(1);
    // Once the cut turn has stopped, the conversation ends: terminated, for good.
    const ended = await terminated(id);
    expect(types(ended).slice(-2)).toEqual(['session.status_idle', 'session.status_terminated']);
    expect(checkLogInvariants(ended)).toEqual([]);
    // And the conversation is over for the visitor.
    const refused = await httpApi(rt).mutate('widget.send', { sessionId: id, text: 'more?' }, me);
    expect(refused.status).toBe(409);
    expect(refused.body?.error?.message).toBe(CONVERSATION_ENDED);
  });

  it('cuts a turn after the model request whose usage crosses the token budget: the next step is aborted', { timeout: 20_000 }, async () => {
    await enable({ max_tokens_per_session: 1_000 });
    const { me, id } = await visitorConversation();
    // 1,100 tokens in the first request, which asks for a tool; the answer after it would stream for 8 s.
    fake.enqueue(toolUseResponse('bash', { command: 'echo hi' }, { usage: { input_tokens: 900, output_tokens: 200 } }), SLOW);
    await httpApi(rt).mutate('widget.send', { sessionId: id, text: 'use a tool' }, me);
    const done = rt.harness.wake(id);
    watch();
    const t0 = Date.now();
    await done;
    expect(Date.now() - t0).toBeLessThan(4_000);
    const events = await rt.store.getEvents(id);
    const ends = events.filter((e) => e.type === 'span.model_request_end');
    expect(ends[0]).toMatchObject({ is_error: false, model_usage: { input_tokens: 900, output_tokens: 200 } });
    // The cut comes after the request that crossed the budget; nothing the slow answer said is stored.
    const cut = events.find((e) => e.type === 'user.interrupt')!;
    expect(cut.seq).toBeGreaterThan(ends[0]!.seq);
    expect(types(events)).not.toContain('agent.message');
    expect(notices(events)).toHaveLength(1);
    const ended = await terminated(id);
    expect(types(ended).slice(-2)).toEqual(['session.status_idle', 'session.status_terminated']);
    expect(checkLogInvariants(ended)).toEqual([]);
  });

  it('leaves running conversations within their budget and idle ones past it alone', async () => {
    await enable({ max_tokens_per_session: 1_000, max_minutes_per_session: 1 });
    const within = (await visitorConversation()).id;
    const idlePast = (await visitorConversation()).id;
    await rt.store.emitEvent(within, { type: 'session.status_running' });
    await rt.store.emitEvent(within, { type: 'span.model_request_end', model_request_start_id: 'sevt_01ARZ3NDEKTSV4RRFFQ69G5FAV', is_error: false, model_usage: { input_tokens: 500, output_tokens: 100, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } });
    await db().updateTable('sessions').set({ created_at: new Date(Date.now() - 10 * 60_000).toISOString() }).where('id', '=', idlePast).execute();
    // An owner's session running past any widget's budget is no widget conversation.
    const owners = (await rt.store.createSession({})).id;
    await rt.store.emitEvent(owners, { type: 'session.status_running' });
    const w = new BudgetWatch({ store: rt.store, widgets: rt.access.widgets.store });
    expect(await w.tick()).toEqual([]);
    for (const id of [within, idlePast, owners]) expect(await rt.store.getEvents(id, { types: ['user.interrupt', 'session.error'] })).toEqual([]);
  });

  it('stores one cut however many instances see the budget spent, and each of them only once', async () => {
    await enable({ max_tokens_per_session: 1_000 });
    const { id } = await visitorConversation();
    await rt.store.emitEvent(id, { type: 'session.status_running' });
    await rt.store.emitEvent(id, { type: 'span.model_request_end', model_request_start_id: 'sevt_01ARZ3NDEKTSV4RRFFQ69G5FAV', is_error: false, model_usage: { input_tokens: 900, output_tokens: 200, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } });
    const [a, b] = [new BudgetWatch({ store: rt.store, widgets: rt.access.widgets.store }), new BudgetWatch({ store: rt.store, widgets: rt.access.widgets.store })];
    const first = await Promise.all([a.tick(), b.tick()]);
    expect(first.flat()).toEqual([id, id]);
    const seq = (await rt.store.getSession(id))!.last_seq;
    expect(await a.tick()).toEqual([]);
    expect(await b.tick()).toEqual([]);
    expect((await rt.store.getSession(id))!.last_seq).toBe(seq);
    const events = await rt.store.getEvents(id);
    expect(events.filter((e) => e.type === 'user.interrupt')).toHaveLength(1);
    expect(notices(events)).toHaveLength(1);
  });

  it('ends a cut conversation once its turn stops: one session.status_terminated however many instances, even ones that did not cut it', async () => {
    const { id } = await spentConversation();
    expect(await new BudgetWatch({ store: rt.store, widgets: rt.access.widgets.store }).tick()).toEqual([id]);
    // Still running: the end waits for the harness to stop the turn.
    const [a, b] = [new BudgetWatch({ store: rt.store, widgets: rt.access.widgets.store }), new BudgetWatch({ store: rt.store, widgets: rt.access.widgets.store })];
    await Promise.all([a.tick(), b.tick()]);
    expect((await rt.store.getSession(id))!.status).toBe('running');
    await harnessStops(id);
    // Two instances that restarted since the cut (no memory of it) look at once, and again.
    await Promise.all([a.tick(), b.tick()]);
    await Promise.all([a.tick(), b.tick()]);
    const events = await rt.store.getEvents(id);
    expect(events.filter((e) => e.type === 'session.status_terminated')).toHaveLength(1);
    expect(types(events).slice(-4)).toEqual(['user.interrupt', 'session.error', 'session.status_idle', 'session.status_terminated']);
    expect(notices(events)).toHaveLength(1);
    expect((await rt.store.getSession(id))!.status).toBe('terminated');
    expect(checkLogInvariants(events)).toEqual([]);
  });

  it('waits for a message or a verdict that came after the cut turn stopped to be taken up before it ends the conversation', async () => {
    const w = new BudgetWatch({ store: rt.store, widgets: rt.access.widgets.store });
    // The owner wrote meanwhile (the harness has not taken it up yet): not ended over it.
    const inputs: NewEvent[] = [
      { type: 'user.message', content: [{ type: 'text', text: 'one more' }] },
      { type: 'user.tool_confirmation', tool_use_id: 'sevt_01ARZ3NDEKTSV4RRFFQ69G5FAV', result: 'allow' },
    ];
    for (const input of inputs) {
      const { id } = await spentConversation();
      await w.tick();
      await harnessStops(id);
      await rt.store.emitEvent(id, input);
      await w.tick();
      expect((await rt.store.getSession(id))!.status, input.type).toBe('idle');
      expect(types(await rt.store.getEvents(id))).not.toContain('session.status_terminated');
    }
  });

  it('refuses every edge once a conversation is ended at its budget: the widget, the owner over tRPC and an API key over /v1, storing nothing', { timeout: 20_000 }, async () => {
    const { me, id } = await spentConversation();
    const w = new BudgetWatch({ store: rt.store, widgets: rt.access.widgets.store });
    await w.tick();
    await harnessStops(id);
    await w.tick();
    const seq = (await rt.store.getSession(id))!.last_seq;
    expect((await rt.store.getSession(id))!.status).toBe('terminated');

    const api = httpApi(rt);
    for (const [path, input] of [
      ['widget.send', { sessionId: id, text: 'more?' }],
      ['widget.stop', { sessionId: id }],
    ] as const) {
      const r = await api.mutate(path, input, me);
      expect(r.status, path).toBe(409);
      expect(r.body?.error?.message).toBe(CONVERSATION_ENDED);
    }
    const owner = { ...SAME_ORIGIN, 'x-api-key': KEY };
    for (const event of [{ type: 'user.message', content: [{ type: 'text', text: 'owner here' }] }, { type: 'user.interrupt' }]) {
      const r = await api.mutate('events.send', { sessionId: id, event }, owner);
      expect(r.status).toBe(409);
      expect(r.body?.error?.message).toBe(`session ${id} is terminated and takes no more events`);
    }

    const server = await serveFetch((req) => handleRest(req, { runtime: () => Promise.resolve(rt), maxBodyBytes: 256 * 1024 }));
    try {
      const client = new Anthropic({ apiKey: KEY, baseURL: server.url, maxRetries: 0 });
      const sent = client.beta.sessions.events.send(id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'key here' }] }] });
      await expect(sent).rejects.toBeInstanceOf(Anthropic.ConflictError);
      await expect(sent).rejects.toThrow('is terminated and takes no more events');
      expect((await client.beta.sessions.retrieve(id)).status).toBe('terminated');
    } finally {
      await server.close();
    }
    expect((await rt.store.getSession(id))!.last_seq).toBe(seq);
    // On reload the widget reads the notice and the end from the log (and so offers a new conversation).
    const log = (await api.query('events.list', { sessionId: id }, me)).body!.result!.data as StoredEvent[];
    expect(notices(log)).toHaveLength(1);
    expect(log.at(-1)).toMatchObject({ type: 'session.status_terminated' });
  });

  it('ends a conversation found spent when the visitor sends to it (never cut: its minutes ran out while idle), and refuses the send', async () => {
    await enable({ max_minutes_per_session: 1 });
    const { me, id } = await visitorConversation();
    await db().updateTable('sessions').set({ created_at: new Date(Date.now() - 2 * 60_000).toISOString() }).where('id', '=', id).execute();
    const r = await httpApi(rt).mutate('widget.send', { sessionId: id, text: 'hello?' }, me);
    expect(r.status).toBe(412);
    expect(r.body?.error?.message).toBe(BUDGET_SPENT);
    const events = await rt.store.getEvents(id);
    expect(types(events)).toEqual(['session.error', 'session.status_terminated']);
    expect(notices(events)).toHaveLength(1);
    expect((await httpApi(rt).mutate('widget.send', { sessionId: id, text: 'hello??' }, me)).status).toBe(409);
    expect(await rt.store.getEvents(id)).toHaveLength(2);
  });
});
