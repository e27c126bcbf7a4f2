import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TRPCError } from '@trpc/server';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OWNER } from '~/server/access/testing/callers';
import { createCaller } from '~/server/api/root';
import { createDemoBrain } from '~/server/harness/demo-brain';
import { testRuntime } from '~/server/harness/testing/test-runtime';
import { handleRest } from '~/server/rest/handler';
import { type FetchServer, serveFetch } from '~/server/rest/testing/serve-fetch';
import type { Runtime } from '~/server/runtime';
import { openSqliteStore } from '~/server/session/sqlite-store';

/**
 * Both edges call one commands layer (server/commands): the same case sent through `/v1` and
 * through tRPC gets the same verdict and leaves the same log. A rule written on one edge only
 * fails here.
 */
const KEY = 'both-edges-api-key-0123456789';
let dir: string;
let rt: Runtime;
let server: FetchServer;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-edges-'));
  const store = await openSqliteStore({ file: path.join(dir, 'db.sqlite') });
  rt = testRuntime({ store, model: createDemoBrain({ chunkDelayMs: 0 }), dataDir: dir, env: { PADDOCK_API_KEY: KEY, PADDOCK_MAX_MESSAGE_CHARS: '100' } });
  await rt.agents.ensureDefaults();
  server = await serveFetch((req) => handleRest(req, { runtime: () => Promise.resolve(rt), maxBodyBytes: 256 * 1024 }));
});

afterEach(async () => {
  await server.close();
  await rt.harness.close();
  await rt.store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

type Verdict = 'ok' | 'not_found' | 'conflict' | 'invalid' | 'too_large';
const REST_VERDICT: Record<number, Verdict> = { 200: 'ok', 404: 'not_found', 409: 'conflict', 400: 'invalid', 413: 'too_large' };
const TRPC_VERDICT: Partial<Record<TRPCError['code'], Verdict>> = { NOT_FOUND: 'not_found', CONFLICT: 'conflict', BAD_REQUEST: 'invalid', PAYLOAD_TOO_LARGE: 'too_large' };

type Command = { kind: 'send'; text: string } | { kind: 'delete' } | { kind: 'outcome'; max_iterations: number } | { kind: 'rename'; title: string };

const outcome = (max_iterations: number) => ({ description: 'A haiku', rubric: 'Three lines.', max_iterations });

const rest = async (sessionId: string, c: Command): Promise<Verdict> => {
  const post = (url: string, body: unknown) => fetch(url, { method: 'POST', headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const events = `${server.url}/v1/sessions/${sessionId}/events`;
  const res =
    c.kind === 'send'
      ? await post(events, { events: [{ type: 'user.message', content: [{ type: 'text', text: c.text }] }] })
      : c.kind === 'outcome'
        ? await post(events, { events: [{ type: 'user.define_outcome', ...outcome(c.max_iterations), rubric: { type: 'text', content: outcome(c.max_iterations).rubric } }] })
        : c.kind === 'rename'
          ? await post(`${server.url}/v1/sessions/${sessionId}`, { title: c.title })
          : await fetch(`${server.url}/v1/sessions/${sessionId}`, { method: 'DELETE', headers: { 'x-api-key': KEY } });
  await res.body?.cancel();
  return REST_VERDICT[res.status] ?? (`status ${res.status}` as Verdict);
};

const trpc = async (sessionId: string, c: Command): Promise<Verdict> => {
  const api = createCaller({ runtime: rt, caller: OWNER });
  try {
    if (c.kind === 'send') await api.events.send({ sessionId, event: { type: 'user.message', content: [{ type: 'text', text: c.text }] } });
    else if (c.kind === 'outcome') await api.outcomes.define({ sessionId, ...outcome(c.max_iterations) });
    else if (c.kind === 'rename') await api.sessions.update({ id: sessionId, title: c.title });
    else await api.sessions.delete({ id: sessionId });
    return 'ok';
  } catch (e) {
    if (e instanceof TRPCError) return TRPC_VERDICT[e.code] ?? (`code ${e.code}` as Verdict);
    throw e;
  }
};

/** A session in the state a case needs, made through the store (as the harness or the budget watch would leave it). */
async function sessionIn(state: 'idle' | 'terminated' | 'archived' | 'running' | 'unknown'): Promise<string> {
  if (state === 'unknown') return 'sesn_00000000000000000000000000';
  const s = await rt.store.createSession({});
  if (state === 'terminated') await rt.store.emitEvent(s.id, { type: 'session.status_terminated' });
  if (state === 'archived') await rt.store.updateSession(s.id, { archived: true });
  if (state === 'running') await rt.store.emitEvent(s.id, { type: 'session.status_running' });
  return s.id;
}

const CASES: Array<[string, Parameters<typeof sessionIn>[0], Command, Verdict]> = [
  ['a message to an idle session is stored', 'idle', { kind: 'send', text: 'hello there' }, 'ok'],
  ['a message to a terminated session is refused (final)', 'terminated', { kind: 'send', text: 'hello' }, 'conflict'],
  ['a message to an archived session is refused', 'archived', { kind: 'send', text: 'hello' }, 'invalid'],
  ['a message over the size cap is refused', 'idle', { kind: 'send', text: 'x'.repeat(101) }, 'too_large'],
  ['a message to an unknown session is not found', 'unknown', { kind: 'send', text: 'hello' }, 'not_found'],
  ['a running session is not deleted', 'running', { kind: 'delete' }, 'conflict'],
  ['an idle session is deleted', 'idle', { kind: 'delete' }, 'ok'],
  ['an unknown session is not found on delete', 'unknown', { kind: 'delete' }, 'not_found'],
  ['an outcome for an idle session is stored', 'idle', { kind: 'outcome', max_iterations: 20 }, 'ok'],
  ['an outcome for a terminated session is refused (final)', 'terminated', { kind: 'outcome', max_iterations: 3 }, 'conflict'],
  ['an outcome for an archived session is refused', 'archived', { kind: 'outcome', max_iterations: 3 }, 'invalid'],
  ['an outcome of more than 20 iterations is refused', 'idle', { kind: 'outcome', max_iterations: 21 }, 'invalid'],
  ['an outcome for an unknown session is not found', 'unknown', { kind: 'outcome', max_iterations: 3 }, 'not_found'],
  ['a session is renamed', 'idle', { kind: 'rename', title: 'Renamed' }, 'ok'],
  ['a session is not renamed to an empty title', 'idle', { kind: 'rename', title: '' }, 'invalid'],
];

describe('one commands layer for both edges', () => {
  it.each(CASES)('%s: the same verdict through /v1 and tRPC', async (_what, state, command, verdict) => {
    const [a, b] = [await sessionIn(state), await sessionIn(state)];
    expect(await rest(a, command)).toBe(verdict);
    expect(await trpc(b, command)).toBe(verdict);
    // The same log on both sides (a refusal writes nothing), compared by event types.
    const types = async (id: string) => (await rt.store.getEvents(id).catch(() => [])).map((e) => e.type).filter((t) => t === 'user.message' || t === 'user.define_outcome' || t === 'session.updated');
    expect(await types(a)).toEqual(await types(b));
  });

  it('names an untitled session after its first message, whichever edge sent it', async () => {
    const [a, b] = [await sessionIn('idle'), await sessionIn('idle')];
    await rest(a, { kind: 'send', text: 'Plan the   release\nfor Friday' });
    await trpc(b, { kind: 'send', text: 'Plan the   release\nfor Friday' });
    expect((await rt.store.getSession(a))?.title).toBe('Plan the release for Friday');
    expect((await rt.store.getSession(b))?.title).toBe('Plan the release for Friday');
  });

  it('names an untitled session made with its first message after it, and keeps a given title', async () => {
    const create = async (body: object) => {
      const res = await fetch(`${server.url}/v1/sessions`, { method: 'POST', headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return (await res.json()) as { id: string; title: string };
    };
    const initial_events = [{ type: 'user.message', content: [{ type: 'text', text: 'Summarize the open issues' }] }];
    const named = await create({ agent: 'agent_default', initial_events });
    expect(named.title).toBe('Summarize the open issues');
    expect((await rt.store.getSession(named.id))?.title).toBe('Summarize the open issues');
    expect((await create({ agent: 'agent_default', title: 'Mine', initial_events })).title).toBe('Mine');
  });
});

describe('file resources: the same verdict through /v1 and tRPC', () => {
  const addRest = async (sessionId: string, fileId: string, mountPath?: string): Promise<Verdict> => {
    const res = await fetch(`${server.url}/v1/sessions/${sessionId}/resources`, { method: 'POST', headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body: JSON.stringify({ type: 'file', file_id: fileId, ...(mountPath ? { mount_path: mountPath } : {}) }) });
    await res.body?.cancel();
    return REST_VERDICT[res.status] ?? (`status ${res.status}` as Verdict);
  };
  const addTrpc = async (sessionId: string, fileId: string, mountPath?: string): Promise<Verdict> => {
    try {
      await createCaller({ runtime: rt, caller: OWNER }).files.addToSession({ sessionId, fileId, ...(mountPath ? { mountPath } : {}) });
      return 'ok';
    } catch (e) {
      if (e instanceof TRPCError) return TRPC_VERDICT[e.code] ?? (`code ${e.code}` as Verdict);
      throw e;
    }
  };

  it.each([
    ['a known file', 'known', undefined, 'ok'],
    ['an unknown file', 'file_01JZZZZZZZZZZZZZZZZZZZZZZZ', undefined, 'not_found'],
    ['a mount path outside the uploads folder', 'known', '/etc/passwd', 'invalid'],
  ] as const)('%s', async (_name, which, mountPath, verdict) => {
    const file = (await rt.files.create({ filename: 'a.csv', mimeType: 'text/csv', size: 1, sha256: '0'.repeat(64), expiresAt: null, scopeId: null })).metadata.id;
    const fileId = which === 'known' ? file : which;
    const [a, b] = [await sessionIn('idle'), await sessionIn('idle')];
    expect(await addRest(a, fileId, mountPath)).toBe(verdict);
    expect(await addTrpc(b, fileId, mountPath)).toBe(verdict);
    expect((await rt.sessionFiles.list(a)).length).toBe((await rt.sessionFiles.list(b)).length);
  });
});
