import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StoredEvent } from '~/lib/events';
import { createCaller } from '~/server/api/root';
import { OWNER } from '~/server/access/testing/callers';
import { downloadFile, uploadFile } from '~/server/commands/file-commands';
import { sessionMounts } from '~/server/commands/session-mounts';
import { loadConfig } from '~/server/config';
import { createAnthropicModel } from '~/server/harness/anthropic-model';
import { type FakeTabAnswer, type FakeTabCall, fakeTab } from '~/server/hands/testing/fake-tab';
import { type FakeMessagesApi, startFakeMessagesApi, textResponse, toolUseResponse } from '~/server/harness/testing/fake-messages-api';
import { testRuntime } from '~/server/harness/testing/test-runtime';
import { type Runtime, filesFor } from '~/server/runtime';
import { openSqliteStore } from '~/server/session/sqlite-store';

/**
 * A session's mounts in a browser tab, through the tRPC API a tab uses: the tab holding a call
 * gets the manifest and the bytes, sends back outputs and memory changes, and a refused memory
 * change makes the call's result an error, as on every other hand kind.
 */
let dir: string;
let rt: Runtime;
let fake: FakeMessagesApi;
const API = { type: 'api_actor', api_key_id: 'test' } as const;
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-tab-mounts-'));
  const store = await openSqliteStore({ file: path.join(dir, 'db.sqlite') });
  fake = await startFakeMessagesApi();
  const files = filesFor(loadConfig({ PADDOCK_DATA_DIR: dir }), store);
  rt = testRuntime({
    store,
    model: createAnthropicModel({ apiKey: 'k', baseURL: fake.url, model: 'claude-fake-test' }),
    dataDir: dir,
    hands: { browserTimeouts: { heartbeatTimeoutMs: 2_000, claimTimeoutMs: 5_000 }, mounts: sessionMounts({ ...files, maxOutputBytes: 1 << 20, attachments: { store, ...files } }) },
  });
});

afterEach(async () => {
  await rt.harness.close();
  await rt.hands.closeAll();
  await fake.close();
  await rt.store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const api = () => createCaller({ runtime: rt, caller: OWNER });
const failure = (p: Promise<unknown>) => p.then(() => null, (e: unknown) => e as { code?: string; message: string });

/** A session with an upload at x.txt and a memory store `notes` holding /a.md = "A". */
async function session(access: 'read_write' | 'read_only' = 'read_write') {
  const file = await uploadFile(rt, { filename: 'x.txt', mimeType: 'text/plain', source: Readable.from([Buffer.from('upload says hi')]), maxBytes: 1 << 20, fields: Promise.resolve({}) });
  const notes = await rt.memory.createStore({ name: 'notes' });
  await rt.memory.createMemory(notes.id, { path: '/a.md', content: 'A' }, API);
  const s = await api().sessions.create({ resources: [{ type: 'file', file_id: file.id, mount_path: 'x.txt' }, { type: 'memory_store', memory_store_id: notes.id, access }] });
  return { id: s.id, notes: notes.id };
}

/** One bash call run by a fake tab doing `during` with its API while it holds the call; the stored result. */
async function oneCall(sessionId: string, during: (t: FakeTabCall) => Promise<FakeTabAnswer>) {
  fake.enqueue(toolUseResponse('bash', { command: 'cat /mnt/session/uploads/x.txt' }), textResponse('done'));
  let failed: unknown = null;
  const t = fakeTab(() => rt, sessionId, 'tab-aaaaaaaa', async (_e: StoredEvent, tab) => {
    try {
      return await during(tab);
    } catch (e) {
      failed = e;
      return 'test failed';
    }
  });
  await t.ready;
  await api().events.send({ sessionId, event: { type: 'user.message', content: [{ type: 'text', text: 'go' }] } });
  await rt.harness.wake(sessionId);
  await t.close();
  if (failed) throw failed as Error;
  const result = (await rt.store.getEvents(sessionId)).find((e) => e.type === 'user.tool_result');
  if (result?.type !== 'user.tool_result') throw new Error('no result');
  return result;
}

describe("a session's mounts in a browser tab", () => {
  it("gives the tab holding the call the manifest and the bytes, and no other tab or secret anything", async () => {
    const s = await session();
    const other = await api().hands.attachBrowser({ sessionId: s.id, tabId: 'tab-bbbbbbbb', engine: 'offline' });
    let seen: unknown;
    await oneCall(s.id, async ({ api: tabApi, call }) => {
      const { mounts } = await tabApi.hands.mounts(call);
      seen = mounts;
      const upload = await tabApi.hands.mountFile({ ...call, path: '/mnt/session/uploads/x.txt' });
      expect(Buffer.from(upload.base64, 'base64').toString()).toBe('upload says hi');
      expect(upload.version).toBe(sha('upload says hi'));
      // Another tab of the same hand, with its own valid secret, does not hold the call.
      const otherTab = { ...call, tabId: 'tab-bbbbbbbb', tabSecret: other.tabSecret };
      const refused = await failure(tabApi.hands.mounts(otherTab));
      expect(refused?.code).toBe('FORBIDDEN');
      expect(refused?.message).toContain('claimed by another tab');
      expect(await failure(tabApi.hands.mountFile({ ...otherTab, path: '/mnt/session/uploads/x.txt' }))).toMatchObject({ code: 'FORBIDDEN' });
      expect(await failure(tabApi.hands.mounts({ ...call, tabSecret: 'not-the-secret' }))).toMatchObject({ code: 'FORBIDDEN' });
      // Only the session's mounts can be fetched.
      expect(await failure(tabApi.hands.mountFile({ ...call, path: '/etc/passwd' }))).toMatchObject({ code: 'NOT_FOUND' });
      return 'upload says hi\nexit code: 0';
    });
    expect(seen).toEqual(
      expect.arrayContaining([
        { path: '/mnt/session/uploads/x.txt', version: sha('upload says hi'), readOnly: true, size: 14 },
        { path: '/mnt/memory/notes/a.md', version: sha('A'), readOnly: false, size: 1 },
      ]),
    );
    // Once answered, the call's mounts are closed to the tab too.
    const use = (await rt.store.getEvents(s.id)).find((e) => e.type === 'agent.tool_use')!;
    const tabSecret = (await api().hands.attachBrowser({ sessionId: s.id, tabId: 'tab-aaaaaaaa', engine: 'offline' })).tabSecret;
    expect((await failure(api().hands.mounts({ sessionId: s.id, hand: 'browser-1', tabId: 'tab-aaaaaaaa', tabSecret, toolUseId: use.id })))?.code).toBe('CONFLICT');
  });

  it('keeps outputs as files scoped to the session and writes memory changes back as versions by the session', async () => {
    const s = await session();
    const result = await oneCall(s.id, async ({ api: tabApi, call }) => {
      expect(await tabApi.hands.keepOutput({ ...call, path: 'report/y.txt', base64: Buffer.from('the report').toString('base64') })).toEqual({ kept: true });
      const { refused } = await tabApi.hands.saveMemory({
        ...call,
        changes: [
          { mountPath: '/mnt/memory/notes/a.md', content: 'A, then more', readSha256: sha('A') },
          { mountPath: '/mnt/memory/notes/new/b.md', content: 'B', readSha256: null },
        ],
      });
      expect(refused).toEqual([]);
      return 'ok\nexit code: 0';
    });
    expect(result.is_error).toBeFalsy();
    const outputs = (await rt.files.list({ limit: 10, scopeId: s.id })).data;
    expect(outputs.map((f) => f.filename)).toEqual(['report/y.txt']);
    const chunks: Buffer[] = [];
    for await (const c of (await downloadFile(rt, outputs[0]!.id)).body) chunks.push(c as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe('the report');
    expect((await rt.memory.memoryAt(s.notes, '/a.md'))?.content).toBe('A, then more');
    expect((await rt.memory.memoryAt(s.notes, '/new/b.md'))?.content).toBe('B');
    const bySession = (await rt.memory.listVersions(s.notes, { limit: 20, sessionId: s.id, view: 'basic' })).data;
    expect(bySession.map((v) => v.operation).sort()).toEqual(['created', 'modified']);
    expect(bySession.every((v) => v.created_by.type === 'session_actor')).toBe(true);
  });

  it("makes the call's result an error naming each refused memory change, keeping what the command printed", async () => {
    const s = await session('read_only');
    let refused: string[] = [];
    const result = await oneCall(s.id, async ({ api: tabApi, call }) => {
      ({ refused } = await tabApi.hands.saveMemory({ ...call, changes: [{ mountPath: '/mnt/memory/notes/a.md', content: 'changed', readSha256: sha('A') }] }));
      return { text: 'wrote it\nexit code: 0', memoryRefused: refused };
    });
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatch(/^\/mnt\/memory\/notes\/a\.md: /);
    expect(result.is_error).toBe(true);
    const text = result.content?.map((c) => (c.type === 'text' ? c.text : '')).join('') ?? '';
    expect(text).toContain('wrote it\nexit code: 0\n\nThe command ran, but these changes to memory were not saved:\n- /mnt/memory/notes/a.md: ');
    expect((await rt.memory.memoryAt(s.notes, '/a.md'))?.content).toBe('A');
  });

  it('refuses hostile paths and writes nothing for them', async () => {
    const s = await session();
    await oneCall(s.id, async ({ api: tabApi, call }) => {
      const b64 = Buffer.from('x').toString('base64');
      for (const p of ['../escape.txt', '/etc/passwd', 'a//b', 'a/./b', 'a\\b', '', 'nul\0.txt']) {
        expect(await failure(tabApi.hands.keepOutput({ ...call, path: p, base64: b64 })), p).toMatchObject({ code: 'BAD_REQUEST' });
      }
      expect(await failure(tabApi.hands.keepOutput({ ...call, path: 'ok.txt', base64: 'not base64!' }))).toMatchObject({ code: 'BAD_REQUEST' });
      for (const p of ['/mnt/memory/../etc/passwd', '/etc/passwd', '/mnt/memory/notes/../../x', '/mnt/memory/', '/mnt/session/outputs/x']) {
        expect(await failure(tabApi.hands.saveMemory({ ...call, changes: [{ mountPath: p, content: 'x', readSha256: null }] })), p).toMatchObject({ code: 'BAD_REQUEST' });
      }
      // A plain path outside every store of the session is refused by the session's side, not written.
      const { refused } = await tabApi.hands.saveMemory({ ...call, changes: [{ mountPath: '/mnt/memory/other-store/x.md', content: 'x', readSha256: null }] });
      expect(refused).toEqual([expect.stringContaining('not inside a memory store of this session')]);
      expect(await failure(tabApi.hands.saveMemory({ ...call, changes: Array.from({ length: 33 }, (_, i) => ({ mountPath: `/mnt/memory/notes/${i}.md`, content: 'x', readSha256: null })) }))).toMatchObject({ code: 'BAD_REQUEST' });
      return 'ok\nexit code: 0';
    });
    expect((await rt.files.list({ limit: 10, scopeId: s.id })).data).toEqual([]);
    expect((await rt.memory.listVersions(s.notes, { limit: 20, sessionId: s.id, view: 'basic' })).data).toEqual([]);
  });
});
