import { TRPCError } from '@trpc/server';
import { describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '~/lib/errors';
import { SHARE_HEADER } from '~/lib/share-token';
import { createSessionFor } from '~/server/agents/new-session';
import type { Caller } from '~/server/access/access';
import type { FollowItem } from '~/server/api/follow';
import { createCaller } from '~/server/api/root';
import { demoRuntimePerTest } from '~/server/api/testing/demo-runtime';
import { SAME_ORIGIN, answeredStatus, httpApi } from '~/server/api/testing/http';
import { watchShare } from '~/server/api/share-watch';

const runtime = demoRuntimePerTest('paddock-share-');

async function signedIn(): Promise<Record<string, string>> {
  const signed = await runtime().access.signIn(await runtime().access.newSigninToken(), { host: 'localhost:3000', secure: false });
  return { ...SAME_ORIGIN, cookie: signed!.setCookie.split(';')[0]! };
}

const scopeOf = (sessionId: string) => ({ sessionId, signal: new AbortController().signal, emit: (e: Parameters<ReturnType<typeof runtime>['store']['emitEvent']>[1], k: string) => runtime().store.emitEvent(sessionId, e, { idempotencyKey: k }) });

describe('share links', () => {
  it('are made, listed and revoked by the owner only; the token is answered once and never listed', async () => {
    const owner = await signedIn();
    const api = httpApi(runtime());
    const s = await runtime().store.createSession({ title: 'shared' });
    const made = await api.mutate('shares.create', { sessionId: s.id, label: 'for Ana', expiresInHours: 24, hideFiles: true }, owner);
    expect(made.status).toBe(200);
    const link = made.body!.result!.data as { id: string; token: string; path: string; hide_files: boolean; expires_at: string };
    expect(link.path).toBe(`/share/${link.token}`);
    expect(link.token).toMatch(/^pds_[\w-]{43}\.[0-9a-z]+$/);
    expect(link).toMatchObject({ hide_files: true, expires_at: expect.any(String) as unknown });
    const listed = await api.query('shares.list', { sessionId: s.id }, owner);
    expect(listed.body!.result!.data).toEqual([expect.objectContaining({ id: link.id, label: 'for Ana' })]);
    expect(listed.text).not.toContain(link.token.slice(4, 40));

    // A program's key cannot hand out sessions.
    const program = { host: 'localhost:3000', 'content-type': 'application/json', 'x-api-key': (await runtime().access.createApiKey('ci')).key };
    expect((await api.mutate('shares.create', { sessionId: s.id }, program)).status).toBe(403);
    expect((await api.mutate('shares.revoke', { sessionId: s.id, id: link.id }, program)).status).toBe(403);

    expect((await api.mutate('shares.revoke', { sessionId: s.id, id: link.id }, owner)).status).toBe(200);
    expect((await api.mutate('shares.revoke', { sessionId: s.id, id: link.id }, owner)).status).toBe(404);
    expect((await api.query('shares.list', { sessionId: s.id }, owner)).body!.result!.data).toEqual([]);
  });

  it("lets a viewer read its session (the conversation, the log, live) and nothing of the owner's setup", async () => {
    const rt = runtime();
    await rt.agents.ensureDefaults();
    const { session } = await createSessionFor({ store: rt.store, agents: rt.agents, vaults: rt.vaults, config: rt.config, repositories: rt.repositories }, { agent: 'agent_default', metadata: { owner_note: 'PRIVATE-NOTE' } });
    await rt.store.emitEvent(session.id, { type: 'user.message', content: [{ type: 'text', text: 'hello' }] });
    await rt.harness.wake(session.id);
    const { token } = await rt.access.shares.create(session.id, { label: '', expiresAt: null, hideFiles: false });
    const viewer = { ...SAME_ORIGIN, [SHARE_HEADER]: token };
    const api = httpApi(rt);
    const shown = await api.query('sessions.shared', { id: session.id }, viewer);
    expect(shown.status).toBe(200);
    expect(Object.keys(shown.body!.result!.data as object).sort()).toEqual(['agent', 'brain', 'created_at', 'environment_id', 'id', 'last_seq', 'resources', 'status', 'title', 'updated_at']);
    expect(shown.text).not.toContain('PRIVATE-NOTE');
    const events = await api.query('events.list', { sessionId: session.id }, viewer);
    expect(events.status).toBe(200);
    expect((events.body!.result!.data as { type: string }[]).some((e) => e.type === 'agent.message')).toBe(true);
    const follow = await api.query('events.follow', { sessionId: session.id }, viewer);
    expect(answeredStatus(follow)).toBe(200);
    expect(follow.text).toContain('agent.message');
  });

  it("answers a viewer's read of another session with 404, whatever field it hides the id in", async () => {
    const rt = runtime();
    const mine = await rt.store.createSession({});
    const other = await rt.store.createSession({ title: 'OTHER-SESSION' });
    const { token } = await rt.access.shares.create(mine.id, { label: '', expiresAt: null, hideFiles: false });
    const viewer = { ...SAME_ORIGIN, [SHARE_HEADER]: token };
    const api = httpApi(rt);
    for (const [name, input] of [
      ['sessions.shared', { id: other.id }],
      ['sessions.shared', { id: other.id, sessionId: mine.id }],
      ['events.list', { sessionId: other.id }],
      ['events.list', { sessionId: other.id, id: mine.id }],
      ['events.follow', { sessionId: other.id }],
      ['hands.listFiles', { sessionId: other.id, hand: 'memory-1' }],
      ['hands.readFile', { sessionId: other.id, hand: 'memory-1', path: 'a.txt' }],
    ] as const) {
      const r = await api.query(name, input, viewer);
      expect(answeredStatus(r), `${name} ${JSON.stringify(input)}`).toBe(404);
      expect(r.text).not.toContain('OTHER-SESSION');
    }
  });

  it('refuses a viewer every write, even with the owner cookie beside its token, and stores nothing', async () => {
    const rt = runtime();
    const owner = await signedIn();
    const s = await rt.store.createSession({});
    const { token } = await rt.access.shares.create(s.id, { label: '', expiresAt: null, hideFiles: false });
    const api = httpApi(rt);
    const viewer = { ...owner, [SHARE_HEADER]: token };
    const send = await api.mutate('events.send', { sessionId: s.id, event: { type: 'user.message', content: [{ type: 'text', text: 'hi' }] } }, viewer);
    expect(send.status).toBe(403);
    expect(send.body?.error?.message).toMatch(/read-only/);
    expect((await api.mutate('events.send', { sessionId: s.id, event: { type: 'user.interrupt' } }, viewer)).status).toBe(403);
    expect((await api.mutate('hands.attachBrowser', { sessionId: s.id, tabId: 'tab-viewer01', engine: 'offline' }, viewer)).status).toBe(403);
    expect((await api.mutate('hands.writeFile', { sessionId: s.id, hand: 'memory-1', path: 'a.txt', content: 'x' }, viewer)).status).toBe(403);
    expect((await api.mutate('shares.create', { sessionId: s.id }, viewer)).status).toBe(403);
    expect((await api.query('sessions.get', { id: s.id }, viewer)).status).toBe(403);
    expect((await api.query('sessions.list', undefined, viewer)).status).toBe(403);
    expect(await rt.store.getEvents(s.id)).toEqual([]);
    expect((await rt.store.listSessions({ limit: 10 })).data).toHaveLength(1);
    expect(await rt.access.shares.list(s.id)).toHaveLength(1);
  });

  it('treats a revoked, expired or forged token as nobody (401)', async () => {
    const rt = runtime();
    const s = await rt.store.createSession({});
    const revoked = await rt.access.shares.create(s.id, { label: '', expiresAt: null, hideFiles: false });
    await rt.access.shares.revoke(s.id, revoked.link.id);
    const now = Date.now();
    const expired = await rt.access.shares.create(s.id, { label: '', expiresAt: now + 1, hideFiles: false }, now - 1_000);
    const api = httpApi(rt);
    for (const token of [revoked.token, expired.token, `pds_${'A'.repeat(43)}`, '', 'x'.repeat(10_000), 'pds_../../etc']) {
      const r = await api.query('events.list', { sessionId: s.id }, { ...SAME_ORIGIN, [SHARE_HEADER]: token });
      expect(r.status, token.slice(0, 20)).toBe(401);
    }
  });

  it("ends a viewer's open follow within seconds of a revoke (the row is read again: any instance may have revoked it)", { timeout: 15_000 }, async () => {
    const rt = runtime();
    const s = await rt.store.createSession({});
    await rt.store.emitEvent(s.id, { type: 'user.interrupt' });
    const { token, link } = await rt.access.shares.create(s.id, { label: '', expiresAt: null, hideFiles: false });
    const viewer = await rt.access.byShareToken(token);
    expect(viewer).toMatchObject({ kind: 'viewer', sessionId: s.id });
    const ac = new AbortController();
    const stream = await createCaller({ runtime: rt, caller: viewer }, { signal: ac.signal }).events.follow({ sessionId: s.id });
    const seqs: number[] = [];
    let ended: unknown = null;
    const reading = (async () => {
      try {
        for await (const item of stream) {
          const value = (Array.isArray(item) ? item[1] : item) as FollowItem;
          if (value.kind === 'event') seqs.push(value.event.seq);
        }
      } catch (e) {
        ended = e;
      }
    })();
    await expect.poll(() => seqs).toEqual([1]);
    await rt.store.emitEvent(s.id, { type: 'user.interrupt' });
    await expect.poll(() => seqs).toEqual([1, 2]);
    const t0 = Date.now();
    await rt.access.shares.revoke(s.id, link.id);
    await reading;
    ac.abort();
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(ended).toBeInstanceOf(TRPCError);
    expect((ended as TRPCError).code).toBe('NOT_FOUND');
  });

  it('keeps following through a database outage during a re-check (an outage is not a revoke)', async () => {
    const ac = new AbortController();
    let calls = 0;
    const w = watchShare({ isLive: () => (++calls === 1 ? Promise.reject(new StoreUnavailableError('PostgreSQL', 'ECONNREFUSED')) : Promise.resolve(calls < 3)) }, 'shr_x', ac.signal, 10);
    await expect.poll(() => calls).toBeGreaterThanOrEqual(3);
    expect(w.signal.aborted).toBe(true);
    expect(w.ended()?.code).toBe('NOT_FOUND');
    w.close();
  });

  it("reads a live server hand's files for a viewer, never provisions or resumes one, and nothing when the owner hid them", async () => {
    const rt = runtime();
    const s = await rt.store.createSession({});
    const open = await rt.access.shares.create(s.id, { label: '', expiresAt: null, hideFiles: false });
    const hidden = await rt.access.shares.create(s.id, { label: '', expiresAt: null, hideFiles: true });
    const api = httpApi(rt);
    const viewer = { ...SAME_ORIGIN, [SHARE_HEADER]: open.token };
    // No hand yet: the owner's listing would provision one; the viewer's says none is live.
    const none = await api.query('hands.listFiles', { sessionId: s.id, hand: 'memory-1' }, viewer);
    expect(none.status).toBe(412);
    expect(none.body?.error?.message).toMatch(/no hand is live/);
    expect(await rt.store.getEvents(s.id)).toEqual([]);

    const entry = await rt.hands.provision(scopeOf(s.id), { kind: 'memory' });
    await entry.hand!.execute('write', { file_path: 'notes.txt', content: 'SHARED-CONTENT' }, { callId: 'c1', signal: new AbortController().signal });
    const listed = await api.query('hands.listFiles', { sessionId: s.id, hand: entry.id }, viewer);
    expect(listed.body?.result?.data).toEqual({ files: ['notes.txt'] });
    const read = await api.query('hands.readFile', { sessionId: s.id, hand: entry.id, path: 'notes.txt' }, viewer);
    expect(read.text).toContain('SHARED-CONTENT');
    const hid = await api.query('hands.readFile', { sessionId: s.id, hand: entry.id, path: 'notes.txt' }, { ...SAME_ORIGIN, [SHARE_HEADER]: hidden.token });
    expect(hid.status).toBe(403);
    expect(hid.text).not.toContain('SHARED-CONTENT');
    expect((await api.query('hands.listFiles', { sessionId: s.id, hand: entry.id }, { ...SAME_ORIGIN, [SHARE_HEADER]: hidden.token })).status).toBe(403);

    // A released hand is not live: nothing is started again for the viewer.
    await rt.hands.release(scopeOf(s.id), entry.id);
    const before = (await rt.store.getEvents(s.id)).length;
    expect((await api.query('hands.listFiles', { sessionId: s.id, hand: entry.id }, viewer)).status).toBe(412);
    expect((await api.query('hands.listFiles', { sessionId: s.id, hand: 'memory-2' }, viewer)).status).toBe(412);
    expect(await rt.store.getEvents(s.id)).toHaveLength(before);
  });

  it('never wakes the harness for a viewer', async () => {
    const rt = runtime();
    const s = await rt.store.createSession({});
    const { token } = await rt.access.shares.create(s.id, { label: '', expiresAt: null, hideFiles: false });
    let woken = 0;
    const wake = rt.harness.wake.bind(rt.harness);
    rt.harness.wake = (id: string) => {
      woken++;
      return wake(id);
    };
    const viewer: Caller = await rt.access.byShareToken(token);
    const api = createCaller({ runtime: rt, caller: viewer });
    await api.sessions.shared({ id: s.id });
    await api.events.list({ sessionId: s.id });
    await expect(api.events.send({ sessionId: s.id, event: { type: 'user.message', content: [{ type: 'text', text: 'x' }] } })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    expect(woken).toBe(0);
  });
});
