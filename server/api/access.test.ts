import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SignJWT } from 'jose';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '~/lib/errors';
import { WIDGET_DEFAULTS } from '~/lib/widget';
import { Access, sessionCookieName } from '~/server/access/access';
import { KyselyAccessStore } from '~/server/access/access-store';
import { appRouter } from '~/server/api/root';
import { SAME_ORIGIN, answeredStatus, httpApi } from '~/server/api/testing/http';
import { createDemoBrain } from '~/server/harness/demo-brain';
import { testRuntime } from '~/server/harness/testing/test-runtime';
import type { Runtime } from '~/server/runtime';
import { type SqliteSessionStore, openSqliteStore } from '~/server/session/sqlite-store';

let dir: string;
let store: SqliteSessionStore;
let rt: Runtime;
const ENV_KEY = 'pdk_from-the-environment-0123456789';

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-access-'));
  store = await openSqliteStore({ file: path.join(dir, 'db.sqlite') });
  rt = testRuntime({ store, model: createDemoBrain({ chunkDelayMs: 0 }), dataDir: dir, env: { PADDOCK_API_KEY: ENV_KEY, PADDOCK_MAX_MESSAGE_CHARS: '1000', PADDOCK_MAX_FILE_WRITE_BYTES: '2048' } });
});

afterEach(async () => {
  await rt.harness.close();
  await rt.store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Signs in with a fresh one-time token, as a person opening the printed URL; returns the cookie header. */
async function signIn(): Promise<string> {
  const signed = await rt.access.signIn(await rt.access.newSigninToken(), { host: 'localhost:3000', secure: false });
  expect(signed).not.toBeNull();
  return signed!.setCookie.split(';')[0]!;
}

const procedures = Object.entries(appRouter._def.procedures as unknown as Record<string, { _def: { type: 'query' | 'mutation' | 'subscription' } }>);
/** What a share link's viewer may call, of its own session only (sessionReadProcedure); every other procedure refuses it. */
const VIEWER_READS = new Set(['sessions.shared', 'events.list', 'events.follow', 'hands.listFiles', 'hands.readFile']);
/** What a widget's visitor may call: its widget's procedures, and reads of the sessions it started. */
const VISITOR_READS = new Set(['events.list', 'events.follow']);
/** The one procedure a caller without credentials reaches: opening a widget (a visitor's sign-in; 404 unless the agent's widget is on for that origin). */
const PUBLIC = new Set(['widget.open']);
/** The widget's procedures that act on one conversation: the visitor's own, another's is a 404. */
const WIDGET_SESSION_WRITES = new Set(['widget.send', 'widget.stop']);

describe('access', () => {
  it('refuses every procedure of the router to a caller without credentials (a new unprotected one fails here)', async () => {
    const api = httpApi(rt);
    expect(procedures.length).toBeGreaterThan(10);
    for (const [name, proc] of procedures) {
      for (const headers of [SAME_ORIGIN, { ...SAME_ORIGIN, cookie: 'paddock_session_3000=forged.jwt.value' }, { ...SAME_ORIGIN, authorization: 'Bearer pdk_wrong' }, { ...SAME_ORIGIN, 'x-api-key': '' }]) {
        const r = proc._def.type === 'mutation' ? await api.mutate(name, {}, headers) : await api.query(name, {}, headers);
        expect(answeredStatus(r), `${name} with ${JSON.stringify(headers)}`).toBe(PUBLIC.has(name) ? 400 : 401);
      }
    }
    expect(await store.listSessions({ limit: 10 })).toMatchObject({ data: [] });
  });

  it("refuses a share link's viewer every procedure but the reads of its own session (a new procedure fails here until it says which it is)", async () => {
    const mine = await store.createSession({});
    const other = await store.createSession({});
    const { token } = await rt.access.shares.create(mine.id, { label: '', expiresAt: null, hideFiles: false });
    const api = httpApi(rt);
    const cookie = await signIn();
    for (const [name, proc] of procedures) {
      for (const target of [mine.id, other.id]) {
        const input = { sessionId: target, id: target, hand: 'memory-1', path: 'a.txt', tabId: 'tab-viewer01', engine: 'offline', event: { type: 'user.interrupt' } };
        // The owner's cookie beside the token changes nothing: the share page never acts as its owner.
        const headers = { ...SAME_ORIGIN, cookie, 'x-paddock-share': token };
        const r = proc._def.type === 'mutation' ? await api.mutate(name, input, headers) : await api.query(name, input, headers);
        const status = answeredStatus(r);
        if (!VIEWER_READS.has(name)) expect(status, `${name} for a viewer`).toBe(403);
        else if (target === other.id) expect(status, `${name} of another session for a viewer`).toBe(404);
        else expect([200, 412], `${name} of its session for a viewer`).toContain(status);
      }
    }
    expect(await store.getEvents(mine.id)).toEqual([]);
    expect(await store.getEvents(other.id)).toEqual([]);
    expect((await store.listSessions({ limit: 10 })).data).toHaveLength(2);
  });

  it("refuses a widget's visitor every procedure but its widget's and the reads of its own sessions (a new procedure fails here until it says which it is)", async () => {
    await rt.agents.ensureDefaults();
    const origin = 'http://127.0.0.1:4020';
    await rt.access.widgets.store.save('agent_default', { ...WIDGET_DEFAULTS, enabled: true, allowed_origins: [origin], environment_id: 'env_default' });
    const api = httpApi(rt);
    const { token } = await rt.access.newVisitorToken('agent_default', origin);
    const cookie = await signIn();
    // The owner's cookie beside the token changes nothing: the widget never acts as the owner.
    const headers = { ...SAME_ORIGIN, cookie, 'x-paddock-visitor': token };
    const mine = ((await api.mutate('widget.create', undefined, headers)).body!.result!.data as { id: string }).id;
    const other = (await store.createSession({})).id;
    for (const [name, proc] of procedures) {
      for (const target of [mine, other]) {
        const input = { sessionId: target, id: target, hand: 'memory-1', path: 'a.txt', tabId: 'tab-visitor1', engine: 'offline', event: { type: 'user.interrupt' }, agentId: 'agent_default', origin, text: 'hi' };
        const r = proc._def.type === 'mutation' ? await api.mutate(name, input, headers) : await api.query(name, input, headers);
        const status = answeredStatus(r);
        if (WIDGET_SESSION_WRITES.has(name)) expect(status, `${name} of ${target === mine ? 'its' : 'another'} session for a visitor`).toBe(target === mine ? 200 : 404);
        else if (name.startsWith('widget.')) expect(status, `${name} for a visitor`).not.toBe(403);
        else if (!VISITOR_READS.has(name)) expect(status, `${name} for a visitor`).toBe(403);
        else if (target === other) expect(status, `${name} of another session for a visitor`).toBe(404);
        else expect(status, `${name} of its session for a visitor`).toBe(200);
      }
    }
    expect(await store.getEvents(other)).toEqual([]);
  });

  it('signs the owner in once per one-time token, with an HttpOnly SameSite cookie that opens the API until sign-out', async () => {
    const token = await rt.access.newSigninToken();
    const signed = await rt.access.signIn(token, { host: 'localhost:3000', secure: false });
    expect(signed!.setCookie).toMatch(/^paddock_session_3000=[\w-]+\.[\w-]+\.[\w-]+; Max-Age=\d+; Path=\/; HttpOnly; SameSite=Lax$/);
    expect(await rt.access.signIn(token, { host: 'localhost:3000', secure: false })).toBeNull();
    expect(await rt.access.signIn('not-the-token', { host: 'localhost:3000', secure: false })).toBeNull();

    const cookie = signed!.setCookie.split(';')[0]!;
    const api = httpApi(rt);
    expect((await api.mutate('sessions.create', { title: 'mine' }, { ...SAME_ORIGIN, cookie })).status).toBe(200);
    expect((await api.query('sessions.me', undefined, { ...SAME_ORIGIN, cookie })).body?.result?.data).toEqual({ kind: 'owner' });
    // Another port's Paddock on the same host has its own cookie name.
    expect((await api.query('sessions.list', undefined, { ...SAME_ORIGIN, cookie: cookie.replace('_3000', '_3001') })).status).toBe(401);

    const cleared = await rt.access.signOut(new Headers({ host: 'localhost:3000', cookie }), false);
    expect(cleared).toMatch(/^paddock_session_3000=; Max-Age=0/);
    expect((await api.query('sessions.list', undefined, { ...SAME_ORIGIN, cookie })).status).toBe(401);
  });

  it('answers 503 while the database cannot say who a cookie belongs to, never 401 (which would sign the owner out)', async () => {
    const cookie = await signIn();
    class DownStore extends KyselyAccessStore {
      override ownerSessionValid(): Promise<boolean> {
        return Promise.reject(new StoreUnavailableError('PostgreSQL', 'ECONNREFUSED'));
      }
    }
    const outage = { ...rt, access: new Access({ store: new DownStore(store.db), sessionDays: 1 }) };
    const r = await httpApi(outage).query('sessions.list', undefined, { ...SAME_ORIGIN, cookie });
    expect(r.status).toBe(503);
    expect(r.body?.error?.message).toContain('unreachable');
  });

  it('names the cookie after the port of the public URL behind a proxy, whichever instance the Host names', () => {
    expect(sessionCookieName('127.0.0.1:3213', 'http://127.0.0.1:3215')).toBe('paddock_session_3215');
    expect(sessionCookieName('127.0.0.1:3214', 'https://paddock.example.com')).toBe('paddock_session');
    expect(sessionCookieName('localhost:3001')).toBe('paddock_session_3001');
  });

  it('marks the cookie Secure over https', async () => {
    const signed = await rt.access.signIn(await rt.access.newSigninToken(), { host: 'paddock.example.com', secure: true });
    expect(signed!.setCookie).toMatch(/^paddock_session=.*; Secure/);
  });

  it('treats a cookie signed with another key, or expired, as no cookie', async () => {
    const sid = 'guessed-session-id';
    const foreign = await new SignJWT({ sid }).setProtectedHeader({ alg: 'HS256' }).setIssuer('paddock').setExpirationTime('1h').sign(new Uint8Array(32));
    expect(await rt.access.identify(new Headers({ host: 'localhost:3000', cookie: `paddock_session_3000=${foreign}` }))).toEqual({ kind: 'anonymous' });
    const expired = await new SignJWT({ sid }).setProtectedHeader({ alg: 'HS256' }).setIssuer('paddock').setExpirationTime(Math.floor(Date.now() / 1000) - 10).sign(await new KyselyAccessStore(store.db).signingKey());
    expect(await rt.access.identify(new Headers({ host: 'localhost:3000', cookie: `paddock_session_3000=${expired}` }))).toEqual({ kind: 'anonymous' });
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify({ sid, iss: 'paddock' })).toString('base64url')}.`;
    expect(await rt.access.identify(new Headers({ host: 'localhost:3000', cookie: `paddock_session_3000=${none}` }))).toEqual({ kind: 'anonymous' });
  });

  it("keeps the settings page's vault procedures to the owner, and never answers a value", async () => {
    const cookie = await signIn();
    const api = httpApi(rt);
    const owner = { ...SAME_ORIGIN, cookie };
    const vault = (await api.mutate('vaults.create', { display_name: 'team' }, owner)).body!.result!.data as { id: string };
    const added = await api.mutate('vaults.addCredential', { vaultId: vault.id, auth: { type: 'static_bearer', mcp_server_url: 'https://mcp.example.com/mcp', token: 'CANARY-owner-token' } }, owner);
    expect(added.status).toBe(200);
    const listed = await api.query('vaults.credentials', { vaultId: vault.id }, owner);
    expect(listed.body!.result!.data).toMatchObject({ data: [{ auth: { type: 'static_bearer', mcp_server_url: 'https://mcp.example.com/mcp' } }] });
    expect(added.text + listed.text).not.toContain('CANARY');
    // A program's key opens /v1/vaults, not the settings page's procedures.
    const program = { host: 'localhost:3000', 'content-type': 'application/json', 'x-api-key': ENV_KEY };
    expect((await api.query('vaults.list', undefined, program)).status).toBe(403);
    expect((await api.mutate('vaults.addCredential', { vaultId: vault.id, auth: { type: 'static_bearer', mcp_server_url: 'https://x.example.com/mcp', token: 't' } }, program)).status).toBe(403);
    expect((await api.mutate('vaults.delete', { id: vault.id }, program)).status).toBe(403);
    expect((await api.query('vaults.list', undefined, owner)).body!.result!.data).toMatchObject({ data: [{ id: vault.id }] });
  });

  it('makes API keys shown once and stored hashed, accepts them as Bearer and x-api-key, and refuses them once revoked', async () => {
    const cookie = await signIn();
    const api = httpApi(rt);
    const made = await api.mutate('apiKeys.create', { name: 'ci' }, { ...SAME_ORIGIN, cookie });
    const { key, id } = made.body!.result!.data as { key: string; id: string };
    expect(key).toMatch(/^pdk_[\w-]{43}$/);
    const rows = await store.db.selectFrom('api_keys').selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(key.slice(10));

    // Programs send no Origin: the key itself is what lets them write.
    const program = { host: 'localhost:3000', 'content-type': 'application/json' };
    expect((await api.mutate('sessions.create', {}, { ...program, authorization: `Bearer ${key}` })).status).toBe(200);
    expect((await api.query('sessions.list', undefined, { ...program, 'x-api-key': key })).status).toBe(200);
    expect((await api.query('sessions.list', undefined, { ...program, 'x-api-key': ENV_KEY })).status).toBe(200);
    expect((await api.mutate('sessions.create', {}, program)).status).toBe(403);
    // A program cannot manage keys, not even with a valid one.
    expect((await api.mutate('apiKeys.create', { name: 'more' }, { ...program, 'x-api-key': key })).status).toBe(403);
    expect((await api.query('apiKeys.list', undefined, { ...program, 'x-api-key': key })).status).toBe(403);

    const listed = (await api.query('apiKeys.list', undefined, { ...SAME_ORIGIN, cookie })).body!.result!.data as { id: string; prefix: string; last_used_at: string | null }[];
    expect(listed).toEqual([expect.objectContaining({ id, prefix: key.slice(0, 10), last_used_at: expect.any(String) as unknown })]);
    expect(JSON.stringify(listed)).not.toContain(key);

    expect((await api.mutate('apiKeys.revoke', { id }, { ...SAME_ORIGIN, cookie })).status).toBe(200);
    expect((await api.query('sessions.list', undefined, { ...program, 'x-api-key': key })).status).toBe(401);
    expect((await api.mutate('apiKeys.revoke', { id }, { ...SAME_ORIGIN, cookie })).status).toBe(404);
  });

  it('creates nothing for a request whose Host is another name (DNS rebinding)', async () => {
    const cookie = await signIn();
    const r = await httpApi(rt).mutate('sessions.create', {}, { ...SAME_ORIGIN, host: 'rebind.attacker.example:3000', origin: 'http://rebind.attacker.example:3000', cookie });
    expect(r.status).toBe(421);
    expect((await store.listSessions({ limit: 10 })).data).toHaveLength(0);
  });

  it('creates nothing for a cross-site form, even with the owner cookie attached', async () => {
    const cookie = await signIn();
    const api = httpApi(rt);
    const form = new FormData();
    form.set('title', 'csrf');
    const multipart = await api.send(new Request('http://localhost:3000/api/trpc/sessions.create', { method: 'POST', headers: { host: 'localhost:3000', origin: 'http://evil.example', cookie }, body: form }));
    expect(multipart.status).toBe(403);
    const plain = await api.send(new Request('http://localhost:3000/api/trpc/sessions.create', { method: 'POST', headers: { host: 'localhost:3000', origin: 'http://localhost:3000', 'content-type': 'text/plain', cookie }, body: '{"title":"csrf"}' }));
    expect(plain.status).toBe(415);
    expect((await store.listSessions({ limit: 10 })).data).toHaveLength(0);
  });
});

describe('input limits', () => {
  it('answers a 10 MB message with 413 naming the limit, and stores nothing', async () => {
    const cookie = await signIn();
    const s = await store.createSession({});
    const huge = { sessionId: s.id, event: { type: 'user.message', content: [{ type: 'text', text: 'x'.repeat(10 * 1024 * 1024) }] } };
    const r = await httpApi(rt).mutate('events.send', huge, { ...SAME_ORIGIN, cookie });
    expect(r.status).toBe(413);
    expect(r.body?.error?.message).toMatch(/PADDOCK_MAX_BODY_BYTES/);
    expect(await store.getEvents(s.id)).toHaveLength(0);
  });

  it('answers a message over the text limit with 413 naming PADDOCK_MAX_MESSAGE_CHARS, and stores nothing', async () => {
    const cookie = await signIn();
    const s = await store.createSession({});
    const r = await httpApi(rt).mutate('events.send', { sessionId: s.id, event: { type: 'user.message', content: [{ type: 'text', text: 'y'.repeat(600) }, { type: 'text', text: 'z'.repeat(600) }] } }, { ...SAME_ORIGIN, cookie });
    expect(r.status).toBe(413);
    expect(r.body?.error?.message).toMatch(/1200 characters, over the limit of 1000 \(PADDOCK_MAX_MESSAGE_CHARS\)/);
    expect(await store.getEvents(s.id)).toHaveLength(0);
  });

  it('answers a file write over the limit with 413, and unknown hands or paths outside the workspace with 400, never 500', async () => {
    const cookie = await signIn();
    const api = httpApi(rt);
    const s = await store.createSession({});
    const h = { ...SAME_ORIGIN, cookie };
    expect((await api.mutate('hands.writeFile', { sessionId: s.id, hand: 'memory-1', path: 'a.txt', content: 'q'.repeat(4096) }, h)).status).toBe(413);
    const edit = await api.mutate('events.send', { sessionId: s.id, event: { type: 'user.file_edit', hand: 'memory-1', path: 'a.txt', content: 'q'.repeat(4096) } }, h);
    expect(edit.status).toBe(413);
    const unknown = await api.query('hands.readFile', { sessionId: s.id, hand: 'sandbox-9', path: 'a.txt' }, h);
    expect(unknown.status).toBe(400);
    expect(unknown.body?.error?.message).toMatch(/no hand named sandbox-9/);
    // Give the session a hand, then step outside its workspace.
    await rt.hands.provision({ sessionId: s.id, signal: new AbortController().signal, emit: (e, k) => store.emitEvent(s.id, e, { idempotencyKey: k }) }, { kind: 'memory' });
    const outside = await api.query('hands.readFile', { sessionId: s.id, hand: 'memory-1', path: '../../etc/passwd' }, h);
    expect(outside.status).toBe(400);
    expect(await store.getEvents(s.id, { types: ['user.file_edit'] })).toHaveLength(0);
  });
});
