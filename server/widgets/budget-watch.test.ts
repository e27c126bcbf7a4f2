import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StoredEvent } from '~/lib/events';
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

const DOCS = 'http://127.0.0.1:4020';
let dir: string;
let fake: FakeMessagesApi;
let rt: Runtime;
const stops: (() => void)[] = [];

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-budget-watch-'));
  fake = await startFakeMessagesApi();
  const store = await openSqliteStore({ file: path.join(dir, 'db.sqlite') });
  rt = testRuntime({ store, model: createAnthropicModel({ apiKey: 'test-key', baseURL: fake.url, model: 'claude-fake-test' }), dataDir: dir });
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
    expect(types(events)).not.toContain('agent.message');
    expect(events.find((e) => e.type === 'span.model_request_end')).toMatchObject({ is_error: true, model_stop_reason: 'interrupted' });
    expect(events.filter((e) => e.type === 'user.interrupt')).toHaveLength(1);
    expect(notices(events)).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ type: 'session.status_idle' });
    expect(checkLogInvariants(events)).toEqual([]);
    // And the conversation is over for the visitor.
    expect((await httpApi(rt).mutate('widget.send', { sessionId: id, text: 'more?' }, me)).status).toBe(412);
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
    expect(events.at(-1)).toMatchObject({ type: 'session.status_idle' });
    expect(checkLogInvariants(events)).toEqual([]);
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
});
