import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { BUDGET_SPENT, VISITOR_HEADER, WIDGET_DEFAULTS } from '~/lib/widget';
import { KyselyAccessStore } from '~/server/access/access-store';
import { createCaller } from '~/server/api/root';
import { demoRuntimePerTest } from '~/server/api/testing/demo-runtime';
import { SAME_ORIGIN, answeredStatus, httpApi } from '~/server/api/testing/http';
import type { Runtime } from '~/server/runtime';
import { type KyselySessionStore } from '~/server/session/kysely-queries';

const runtime = demoRuntimePerTest('paddock-widget-');
const DOCS = 'http://127.0.0.1:4020';

async function owner(rt: Runtime): Promise<Record<string, string>> {
  const signed = await rt.access.signIn(await rt.access.newSigninToken(), { host: 'localhost:3000', secure: false });
  return { ...SAME_ORIGIN, cookie: signed!.setCookie.split(';')[0]! };
}

async function enable(rt: Runtime, o: Partial<typeof WIDGET_DEFAULTS> = {}): Promise<void> {
  await rt.agents.ensureDefaults();
  await rt.access.widgets.store.save('agent_default', { ...WIDGET_DEFAULTS, enabled: true, allowed_origins: [DOCS], environment_id: 'env_default', ...o });
}

/** A visitor as the widget becomes one: `widget.open` from the embed page, its token then on every request. */
async function visitor(rt: Runtime, ip = '203.0.113.7'): Promise<Record<string, string>> {
  const r = await httpApi(rt).mutate('widget.open', { agentId: 'agent_default', origin: DOCS }, { ...SAME_ORIGIN, 'x-forwarded-for': ip });
  expect(r.status).toBe(200);
  const { token } = r.body!.result!.data as { token: string };
  return { ...SAME_ORIGIN, [VISITOR_HEADER]: token, 'x-forwarded-for': ip };
}

const db = (rt: Runtime) => (rt.store as KyselySessionStore).db;

describe('docs widget', () => {
  it('opens only for an agent whose widget is on for that origin, and gives a returning visitor no new token', async () => {
    const rt = runtime();
    const api = httpApi(rt);
    await rt.agents.ensureDefaults();
    const ask = (origin: string, headers = SAME_ORIGIN) => api.mutate('widget.open', { agentId: 'agent_default', origin }, headers);
    expect((await ask(DOCS)).status).toBe(404);
    await enable(rt, { enabled: false });
    expect((await ask(DOCS)).status).toBe(404);
    await enable(rt);
    expect((await ask('http://127.0.0.1:4021')).status).toBe(404);
    expect((await ask('javascript:alert(1)')).status).toBe(400);
    expect((await api.mutate('widget.open', { agentId: 'agent_nope', origin: DOCS })).status).toBe(404);
    const first = await ask(DOCS);
    expect(first.body!.result!.data).toMatchObject({ agent: { name: expect.any(String) as unknown }, budget: { max_tokens: 200_000, max_minutes: 30 }, token: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/) as unknown });
    const token = (first.body!.result!.data as { token: string }).token;
    expect((await ask(DOCS, { ...SAME_ORIGIN, [VISITOR_HEADER]: token })).body!.result!.data).toMatchObject({ token: null });
  });

  it("lets a visitor start conversations with its agent only, in the widget's environment, send to them and read them; the owner lists them by agent and origin", async () => {
    const rt = runtime();
    await enable(rt);
    const api = httpApi(rt);
    const me = await visitor(rt);
    const made = await api.mutate('widget.create', undefined, me);
    expect(made.status).toBe(200);
    const { id } = made.body!.result!.data as { id: string };
    const session = (await rt.store.getSession(id))!;
    expect(session).toMatchObject({ environment_id: 'env_default', agent: { id: 'agent_default' }, metadata: { widget_origin: DOCS } });
    const sent = await api.mutate('widget.send', { sessionId: id, text: 'How do I install it?' }, me);
    expect(sent.status).toBe(200);
    await rt.harness.wake(id);
    const events = await api.query('events.list', { sessionId: id }, me);
    expect((events.body!.result!.data as { type: string }[]).map((e) => e.type)).toContain('agent.message');
    expect(answeredStatus(await api.query('events.follow', { sessionId: id }, me))).toBe(200);
    expect((await api.query('widget.sessions', undefined, me)).body!.result!.data).toEqual([expect.objectContaining({ id, title: 'How do I install it?' })]);

    const boss = await owner(rt);
    await rt.store.createSession({ title: 'not from a widget' });
    const all = await api.query('sessions.list', {}, boss);
    expect((all.body!.result!.data as { data: unknown[] }).data).toHaveLength(2);
    const widgetOnly = await api.query('sessions.list', { widgetOrigin: DOCS, agentId: 'agent_default' }, boss);
    expect((widgetOnly.body!.result!.data as { data: unknown[] }).data).toEqual([expect.objectContaining({ id, widget: { agent_id: 'agent_default', origin: DOCS } })]);
    expect((await api.query('sessions.list', { widgetOrigin: 'http://127.0.0.1:4021' }, boss)).body!.result!.data).toMatchObject({ data: [] });
    expect((await api.query('widgets.origins', undefined, boss)).body!.result!.data).toEqual([DOCS]);
    // The visitor's id is never shown to the owner.
    expect(all.text).not.toContain(me[VISITOR_HEADER]!.split('.')[1]!);
  });

  it("answers a visitor's read or send of another visitor's or the owner's session with 404, and stores nothing", async () => {
    const rt = runtime();
    await enable(rt);
    const api = httpApi(rt);
    const ana = await visitor(rt, '198.51.100.1');
    const bo = await visitor(rt, '198.51.100.2');
    const anas = ((await api.mutate('widget.create', undefined, ana)).body!.result!.data as { id: string }).id;
    await api.mutate('widget.send', { sessionId: anas, text: 'ANA-SECRET' }, ana);
    const owners = (await rt.store.createSession({ title: 'OWNER-SESSION' })).id;
    const messages = async () => JSON.stringify(await Promise.all([rt.store.getEvents(anas, { types: ['user.message'] }), rt.store.getEvents(owners)]));
    const before = await messages();
    for (const target of [anas, owners]) {
      for (const r of [
        await api.query('events.list', { sessionId: target }, bo),
        await api.query('events.follow', { sessionId: target }, bo),
        await api.mutate('widget.send', { sessionId: target, text: 'hi' }, bo),
      ]) {
        expect(answeredStatus(r)).toBe(404);
        expect(r.text).not.toMatch(/ANA-SECRET|OWNER-SESSION/);
      }
    }
    expect((await api.query('widget.sessions', undefined, bo)).body!.result!.data).toEqual([]);
    expect(await messages()).toBe(before);
  });

  it("refuses a visitor the owner's procedures and the browser hand, even with the owner's cookie beside its token", async () => {
    const rt = runtime();
    await enable(rt);
    const api = httpApi(rt);
    const me = { ...(await visitor(rt)), cookie: (await owner(rt)).cookie! };
    const id = ((await api.mutate('widget.create', undefined, me)).body!.result!.data as { id: string }).id;
    for (const r of [
      await api.mutate('events.send', { sessionId: id, event: { type: 'user.message', content: [{ type: 'text', text: 'x' }] } }, me),
      await api.mutate('hands.attachBrowser', { sessionId: id, tabId: 'tab-visitor1', engine: 'offline' }, me),
      await api.query('hands.listFiles', { sessionId: id, hand: 'memory-1' }, me),
      await api.mutate('sessions.create', { agentId: 'agent_default' }, me),
      await api.query('sessions.list', {}, me),
      await api.mutate('widgets.set', { agentId: 'agent_default', ...WIDGET_DEFAULTS, environment_id: 'env_default' }, me),
      await api.mutate('shares.create', { sessionId: id }, me),
    ]) expect(r.status).toBe(403);
    expect((await rt.store.listSessions({})).data).toHaveLength(1);
  });

  it('treats a forged, foreign-signed, expired token, or one for a widget since turned off or an origin no longer allowed, as nobody', async () => {
    const rt = runtime();
    await enable(rt);
    const api = httpApi(rt);
    const key = await new KyselyAccessStore(db(rt)).signingKey();
    const claims = { vid: 'guessed', agt: 'agent_default', org: DOCS };
    const sign = (k: Uint8Array, aud = 'paddock:widget', exp: string | number = '1h') => new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setIssuer('paddock').setAudience(aud).setExpirationTime(exp).sign(k);
    for (const token of [await sign(new Uint8Array(32)), await sign(key, 'paddock:other'), await sign(key, 'paddock:widget', Math.floor(Date.now() / 1000) - 10), 'x'.repeat(5_000), '']) {
      expect((await api.mutate('widget.create', undefined, { ...SAME_ORIGIN, [VISITOR_HEADER]: token })).status).toBe(401);
    }
    const me = await visitor(rt);
    expect((await api.query('widget.sessions', undefined, me)).status).toBe(200);
    await enable(rt, { allowed_origins: ['https://docs.example.com'] });
    expect((await api.query('widget.sessions', undefined, me)).status).toBe(401);
    await enable(rt, { enabled: false });
    expect((await api.mutate('widget.create', undefined, me)).status).toBe(401);
    expect((await rt.store.listSessions({})).data).toEqual([]);
  });

  it('refuses messages past the per-visitor and per-IP limits (429) and new conversations past the hourly cap, storing nothing', async () => {
    const rt = runtime();
    await enable(rt, { visitor_per_minute: 3, ip_per_minute: 5, sessions_per_hour: 3 });
    const api = httpApi(rt);
    const ana = await visitor(rt, '192.0.2.1');
    const id = ((await api.mutate('widget.create', undefined, ana)).body!.result!.data as { id: string }).id;
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await api.mutate('widget.send', { sessionId: id, text: `m${i}` }, ana)).status);
    expect(statuses).toEqual([200, 200, 429, 429]);
    expect(await rt.store.getEvents(id, { types: ['user.message'] })).toHaveLength(2);
    // A second visitor behind the same address shares its minute.
    const bo = await visitor(rt, '192.0.2.1');
    const bos = await api.mutate('widget.create', undefined, bo);
    expect(bos.status).toBe(200);
    const boId = (bos.body!.result!.data as { id: string }).id;
    expect((await api.mutate('widget.send', { sessionId: boId, text: 'x' }, bo)).status).toBe(200);
    expect((await api.mutate('widget.send', { sessionId: boId, text: 'y' }, bo)).status).toBe(429);
    // The hourly cap holds for everyone, whatever address they claim.
    const cy = await visitor(rt, '192.0.2.99');
    expect((await api.mutate('widget.create', undefined, cy)).status).toBe(200);
    const dee = await visitor(rt, '192.0.2.100');
    const refused = await api.mutate('widget.create', undefined, dee);
    expect(refused.status).toBe(429);
    expect((await rt.store.listSessions({})).data).toHaveLength(3);
  });

  it('gives one address at most 30 new visitors an hour', async () => {
    const rt = runtime();
    await enable(rt);
    const api = httpApi(rt);
    const statuses = new Set<number>();
    for (let i = 0; i < 31; i++) statuses.add((await api.mutate('widget.open', { agentId: 'agent_default', origin: DOCS }, { ...SAME_ORIGIN, 'x-forwarded-for': '192.0.2.50' })).status);
    expect([...statuses]).toEqual([200, 429]);
    expect((await api.mutate('widget.open', { agentId: 'agent_default', origin: DOCS }, { ...SAME_ORIGIN, 'x-forwarded-for': '192.0.2.51' })).status).toBe(200);
  });

  it('ends a conversation politely once its token or time budget is spent: the next message is refused (412) and not stored', async () => {
    const rt = runtime();
    await enable(rt, { max_tokens_per_session: 1_000 });
    const api = httpApi(rt);
    const me = await visitor(rt);
    const id = ((await api.mutate('widget.create', undefined, me)).body!.result!.data as { id: string }).id;
    await rt.store.emitEvent(id, { type: 'span.model_request_end', model_request_start_id: 'sevt_01ARZ3NDEKTSV4RRFFQ69G5FAV', is_error: false, model_usage: { input_tokens: 900, output_tokens: 200, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } });
    const r = await api.mutate('widget.send', { sessionId: id, text: 'one more?' }, me);
    expect(r.status).toBe(412);
    expect(r.body?.error?.message).toBe(BUDGET_SPENT);
    expect(await rt.store.getEvents(id, { types: ['user.message'] })).toEqual([]);

    await enable(rt, { max_minutes_per_session: 1 });
    const old = ((await api.mutate('widget.create', undefined, me)).body!.result!.data as { id: string }).id;
    await db(rt).updateTable('sessions').set({ created_at: new Date(Date.now() - 2 * 60_000).toISOString() }).where('id', '=', old).execute();
    expect((await api.mutate('widget.send', { sessionId: old, text: 'still there?' }, me)).status).toBe(412);
    expect(await rt.store.getEvents(old, { types: ['user.message'] })).toEqual([]);
  });

  it('refuses an oversized or empty message (413, 400) and stores nothing', async () => {
    const rt = runtime();
    await enable(rt);
    const api = httpApi(rt);
    const me = await visitor(rt);
    const id = ((await api.mutate('widget.create', undefined, me)).body!.result!.data as { id: string }).id;
    expect((await api.mutate('widget.send', { sessionId: id, text: 'x'.repeat(4_001) }, me)).status).toBe(413);
    expect((await api.mutate('widget.send', { sessionId: id, text: 'x'.repeat(3 * 1024 * 1024) }, me)).status).toBe(413);
    expect((await api.mutate('widget.send', { sessionId: id, text: '   ' }, me)).status).toBe(400);
    expect(await rt.store.getEvents(id)).toEqual([]);
  });

  it('keeps the settings to the owner (never a program key), validates origins and the environment', async () => {
    const rt = runtime();
    await rt.agents.ensureDefaults();
    const api = httpApi(rt);
    const boss = await owner(rt);
    const got = await api.query('widgets.get', { agentId: 'agent_default' }, boss);
    expect(got.body!.result!.data).toMatchObject({ enabled: false, allowed_origins: [], environment_id: 'env_default' });
    const set = (over: Record<string, unknown>, headers = boss) => api.mutate('widgets.set', { agentId: 'agent_default', ...WIDGET_DEFAULTS, environment_id: 'env_default', enabled: true, allowed_origins: [DOCS], ...over }, headers);
    expect((await set({ allowed_origins: ['HTTP://127.0.0.1:4020', DOCS] })).body!.result!.data).toMatchObject({ allowed_origins: [DOCS] });
    for (const bad of ['https://docs.example.com/path', '*', 'file:///x', 'https://user:pw@docs.example.com']) expect((await set({ allowed_origins: [bad] })).status, bad).toBe(400);
    expect((await set({ environment_id: 'env_missing' })).status).toBe(400);
    expect((await api.mutate('widgets.set', { agentId: 'agent_nope', ...WIDGET_DEFAULTS, environment_id: 'env_default' }, boss)).status).toBe(404);
    const program = { host: 'localhost:3000', 'content-type': 'application/json', 'x-api-key': (await rt.access.createApiKey('ci')).key };
    expect((await set({ allowed_origins: ['https://evil.example'] }, program)).status).toBe(403);
    expect((await rt.access.widgets.store.settings('agent_default'))?.allowed_origins).toEqual([DOCS]);
  });
});

describe('docs widget follow', () => {
  it("ends a visitor's open follow within seconds of the widget being turned off for its site", { timeout: 15_000 }, async () => {
    const rt = runtime();
    await enable(rt);
    const me = await visitor(rt);
    const id = ((await httpApi(rt).mutate('widget.create', undefined, me)).body!.result!.data as { id: string }).id;
    await rt.store.emitEvent(id, { type: 'user.interrupt' });
    const caller = await rt.access.byVisitorToken(me[VISITOR_HEADER]!);
    expect(caller).toMatchObject({ kind: 'visitor', agentId: 'agent_default', origin: DOCS });
    const ac = new AbortController();
    const stream = await createCaller({ runtime: rt, caller }, { signal: ac.signal }).events.follow({ sessionId: id });
    let seen = 0;
    let ended: unknown = null;
    const reading = (async () => {
      try {
        for await (const _item of stream) seen++;
      } catch (e) {
        ended = e;
      }
    })();
    await expect.poll(() => seen).toBeGreaterThan(0);
    await enable(rt, { enabled: false });
    await reading;
    ac.abort();
    expect(ended).toMatchObject({ code: 'NOT_FOUND', message: 'this widget was turned off for this site' });
  });
});

describe('docs widget under abuse', () => {
  it('answers a burst of 200 sends, half with forged or foreign tokens and ids, with 0 5xx; exactly the limit is stored, nothing for a refusal', async () => {
    const rt = runtime();
    await enable(rt, { visitor_per_minute: 7, ip_per_minute: 1_000 });
    const api = httpApi(rt);
    const me = await visitor(rt, '198.51.100.10');
    const other = await visitor(rt, '198.51.100.11');
    const mine = ((await api.mutate('widget.create', undefined, me)).body!.result!.data as { id: string }).id;
    const theirs = ((await api.mutate('widget.create', undefined, other)).body!.result!.data as { id: string }).id;
    const forged = { ...me, [VISITOR_HEADER]: `${me[VISITOR_HEADER]!.slice(0, -4)}AAAA` };
    const statuses = await Promise.all(
      Array.from({ length: 200 }, (_, i) => {
        const [headers, sessionId, text] = [
          [me, mine, `burst ${i}`],
          [me, theirs, 'into another visitor'],
          [forged, mine, 'forged'],
          [me, mine, 'x'.repeat(5_000)],
        ][i % 4] as [Record<string, string>, string, string];
        return api.mutate('widget.send', { sessionId, text }, headers).then((r) => r.status);
      }),
    );
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
    // One created conversation counted against the visitor's minute already.
    expect(statuses.filter((s) => s === 200)).toHaveLength(6);
    expect(new Set(statuses)).toEqual(new Set([200, 429, 404, 401, 413]));
    expect(await rt.store.getEvents(mine, { types: ['user.message'] })).toHaveLength(6);
    expect(await rt.store.getEvents(theirs, { types: ['user.message'] })).toHaveLength(0);
  });
});
