import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { FollowItem } from '~/server/api/follow';
import { createCaller } from '~/server/api/root';
import { OWNER } from '~/server/access/testing/callers';
import { demoRuntimePerTest, rejection } from '~/server/api/testing/demo-runtime';
import { uploadFile } from '~/server/commands/file-commands';

const runtime = demoRuntimePerTest('paddock-api-');

const api = () => createCaller({ runtime: runtime(), caller: OWNER });

describe('tRPC API', () => {
  it('creates, gets and lists sessions', async () => {
    const s = await api().sessions.create({ title: 'first' });
    expect(await api().sessions.get({ id: s.id })).toMatchObject({ id: s.id, title: 'first', status: 'idle' });
    const list = await api().sessions.list({ limit: 10 });
    expect(list.data.map((x) => x.id)).toEqual([s.id]);
  });

  it('lists sessions by a title fragment and by the status the list shows (needs approval apart from idle), naming a bad status', async () => {
    const store = runtime().store;
    const plain = await api().sessions.create({ title: 'Release notes' });
    const asking = await api().sessions.create({ title: 'Deploy the release' });
    const [call] = await store.emitEvents(asking.id, [{ type: 'agent.tool_use', name: 'bash', input: {}, model_tool_use_id: 'toolu_1', evaluated_permission: 'ask' }]);
    await store.emitEvent(asking.id, { type: 'session.status_idle', stop_reason: { type: 'requires_action', event_ids: [call!.id] }, stop_details: null });
    const ids = async (input: Parameters<ReturnType<typeof api>['sessions']['list']>[0]) => (await api().sessions.list(input)).data.map((x) => x.id);
    expect(await ids({ limit: 10, q: 'RELEASE' })).toEqual([asking.id, plain.id]);
    expect(await ids({ limit: 10, q: 'deploy' })).toEqual([asking.id]);
    expect(await ids({ limit: 10, status: 'needs_approval' })).toEqual([asking.id]);
    expect(await ids({ limit: 10, status: 'idle' })).toEqual([plain.id]);
    expect(await ids({ limit: 10, status: 'running' })).toEqual([]);
    expect((await api().sessions.list({ limit: 10 })).data.find((x) => x.id === asking.id)).toMatchObject({ waiting_on: 'approval' });
    const e = await rejection(api().sessions.list({ limit: 10, status: 'waiting' } as never));
    expect(e.code).toBe('BAD_REQUEST');
    expect(e.message).toContain('status');
  });

  it('rejects a malformed message with BAD_REQUEST naming the field, and writes nothing', async () => {
    const s = await api().sessions.create({});
    const bad = { sessionId: s.id, event: { type: 'user.message', content: [{ type: 'text', text: 42 }] } };
    const e = await rejection(api().events.send(bad as never));
    expect(e.code).toBe('BAD_REQUEST');
    expect(e.message).toContain('content');
    expect(await runtime().store.getEvents(s.id)).toHaveLength(0);
  });

  it('stores a send retried with the same idempotency key once, and names a malformed key', async () => {
    const s = await api().sessions.create({});
    const send = (text: string, idempotencyKey: string) => api().events.send({ sessionId: s.id, event: { type: 'user.message', content: [{ type: 'text', text }] }, idempotencyKey });
    const first = await send('hello', 'k-0123456789');
    expect(await send('hello', 'k-0123456789')).toEqual(first);
    expect((await send('hello', 'k-abcdefghij')).id).not.toBe(first.id);
    const e = await rejection(send('x', 'bad key!'));
    expect(e.code).toBe('BAD_REQUEST');
    expect(e.message).toContain('idempotencyKey');
    expect(await runtime().store.getEvents(s.id, { types: ['user.message'] })).toHaveLength(2);
  });

  it('defines an outcome on a session through the send path (max_iterations 3 unless given), naming a bad field and writing nothing for it', async () => {
    const s = await api().sessions.create({});
    const stored = await api().outcomes.define({ sessionId: s.id, description: 'A haiku about tides', rubric: 'Three lines, 5-7-5.' });
    expect(stored).toMatchObject({ type: 'user.define_outcome', description: 'A haiku about tides', rubric: { type: 'text', content: 'Three lines, 5-7-5.' }, max_iterations: 3, outcome_id: expect.stringMatching(/^outc_/) as unknown });
    for (const [bad, field] of [[{ max_iterations: 21 }, 'max_iterations'], [{ max_iterations: 0 }, 'max_iterations'], [{ rubric: '  ' }, 'rubric'], [{ description: '' }, 'description']] as const) {
      const e = await rejection(api().outcomes.define({ sessionId: s.id, description: 'd', rubric: 'r', ...bad }));
      expect(e.code).toBe('BAD_REQUEST');
      expect(e.message).toContain(field);
    }
    expect(await runtime().store.getEvents(s.id, { types: ['user.define_outcome'] })).toHaveLength(1);
    await runtime().store.updateSession(s.id, { archived: true });
    expect((await rejection(api().outcomes.define({ sessionId: s.id, description: 'd', rubric: 'r', max_iterations: 20 }))).code).toBe('BAD_REQUEST');
  });

  it("defines an outcome whose rubric is a file's text, read when it is defined; refuses both or neither, and a missing file, naming them", async () => {
    const s = await api().sessions.create({});
    const file = await uploadFile(runtime(), { filename: 'rubric.md', mimeType: 'text/markdown', source: Readable.from([Buffer.from('Cites two sources.')]), maxBytes: 1 << 20, fields: Promise.resolve({}) });
    const stored = await api().outcomes.define({ sessionId: s.id, description: 'A summary', rubricFileId: file.id });
    expect(stored).toMatchObject({ type: 'user.define_outcome', rubric: { type: 'text', content: 'Cites two sources.' }, rubric_file_id: file.id });
    for (const bad of [{ rubric: 'r', rubricFileId: file.id }, {}]) {
      const e = await rejection(api().outcomes.define({ sessionId: s.id, description: 'd', ...bad }));
      expect(e.code).toBe('BAD_REQUEST');
      expect(e.message).toContain('exactly one of rubric');
    }
    const missing = await rejection(api().outcomes.define({ sessionId: s.id, description: 'd', rubricFileId: 'file_nope0123' }));
    expect(missing.code).toBe('BAD_REQUEST');
    expect(missing.message).toContain('rubric.file_id');
    expect(await runtime().store.getEvents(s.id, { types: ['user.define_outcome'] })).toHaveLength(1);
  });

  it('renames a session with a session.updated saying so, naming an empty title', async () => {
    const s = await api().sessions.create({ title: 'first' });
    expect(await api().sessions.update({ id: s.id, title: '  second ' })).toMatchObject({ id: s.id, title: 'second' });
    expect(await runtime().store.getEvents(s.id, { types: ['session.updated'] })).toMatchObject([{ title: 'second' }]);
    const e = await rejection(api().sessions.update({ id: s.id, title: ' ' }));
    expect(e.code).toBe('BAD_REQUEST');
    expect(e.message).toContain('title');
  });

  it('deletes a session with its log, and then answers NOT_FOUND for it', async () => {
    const s = await api().sessions.create({});
    await api().events.send({ sessionId: s.id, event: { type: 'user.interrupt' } });
    expect(await api().sessions.delete({ id: s.id })).toEqual({ id: s.id, deleted: true });
    expect((await rejection(api().sessions.get({ id: s.id }))).code).toBe('NOT_FOUND');
    expect(await runtime().store.getEvents(s.id).catch(() => [])).toEqual([]);
    expect((await rejection(api().sessions.delete({ id: s.id }))).code).toBe('NOT_FOUND');
  });

  it('refuses events a user may not send (agent.message) as BAD_REQUEST', async () => {
    const s = await api().sessions.create({});
    const e = await rejection(api().events.send({ sessionId: s.id, event: { type: 'agent.message', content: [] } } as never));
    expect(e.code).toBe('BAD_REQUEST');
    expect(await runtime().store.getEvents(s.id)).toHaveLength(0);
  });

  it('answers NOT_FOUND for a well-formed unknown session and BAD_REQUEST for a malformed id', async () => {
    const unknown = 'sesn_00000000000000000000000000';
    expect((await rejection(api().sessions.get({ id: unknown }))).code).toBe('NOT_FOUND');
    expect((await rejection(api().events.send({ sessionId: unknown, event: { type: 'user.interrupt' } }))).code).toBe('NOT_FOUND');
    expect((await rejection(api().events.list({ sessionId: unknown }))).code).toBe('NOT_FOUND');
    const bad = await rejection(api().sessions.get({ id: 'nope' }));
    expect(bad.code).toBe('BAD_REQUEST');
    expect(bad.message).toContain('id');
  });

  it('sends a message, wakes the harness and lists the answer in slices', async () => {
    const s = await api().sessions.create({});
    await api().events.send({ sessionId: s.id, event: { type: 'user.message', content: [{ type: 'text', text: 'hello' }] } });
    await runtime().harness.wake(s.id);
    const all = await api().events.list({ sessionId: s.id });
    expect(all.at(-1)?.type).toBe('session.status_idle');
    expect(all.find((e) => e.type === 'span.model_request_start')).toMatchObject({ model: expect.stringContaining('not Claude') as unknown });
    const tail = await api().events.list({ sessionId: s.id, from: -2 });
    expect(tail.map((e) => e.seq)).toEqual([all.length - 1, all.length]);
    const onlyUser = await api().events.list({ sessionId: s.id, types: ['user.message'] });
    expect(onlyUser).toHaveLength(1);
    expect((await api().sessions.get({ id: s.id })).title).toBe('hello'); // named after the first message
  });

  it('names a session after its first message even when other events came first, and only after the first', async () => {
    const s = await api().sessions.create({});
    await runtime().store.emitEvent(s.id, { type: 'user.interrupt' });
    await api().events.send({ sessionId: s.id, event: { type: 'user.message', content: [{ type: 'text', text: 'first words' }] } });
    await api().events.send({ sessionId: s.id, event: { type: 'user.message', content: [{ type: 'text', text: 'second words' }] } });
    expect((await api().sessions.get({ id: s.id })).title).toBe('first words');
  });

  it('follow resumes after the last seen seq (lastEventId): no gap, no duplicate', async () => {
    const s = await api().sessions.create({});
    for (let i = 0; i < 5; i++) await runtime().store.emitEvent(s.id, { type: 'user.interrupt' });
    const ac = new AbortController();
    const stream = await createCaller({ runtime: runtime(), caller: OWNER }, { signal: ac.signal }).events.follow({ sessionId: s.id, lastEventId: '3' });
    const seqs: number[] = [];
    const reading = (async () => {
      for await (const item of stream) {
        // Server-side, a tracked item is an [id, data] envelope; SSE sends it as `id:` + data.
        const value = (Array.isArray(item) ? item[1] : item) as FollowItem;
        if (value.kind === 'event') seqs.push(value.event.seq);
        if (seqs.length === 4) break;
      }
    })();
    await runtime().store.emitEvent(s.id, { type: 'user.interrupt' });
    await runtime().store.emitEvent(s.id, { type: 'user.interrupt' });
    await reading;
    ac.abort();
    expect(seqs).toEqual([4, 5, 6, 7]);
  });

  it('transfers a hand to another session, whose brain continues in the same workspace', async () => {
    const a = await api().sessions.create({});
    const b = await api().sessions.create({});
    await api().events.send({ sessionId: a.id, event: { type: 'user.message', content: [{ type: 'text', text: 'write plan.md: step 1 done' }] } });
    await runtime().harness.wake(a.id);
    expect(await api().hands.transfer({ from: a.id, hand: 'memory-1', to: b.id })).toEqual({ hand: 'memory-1', kind: 'memory' });

    await api().events.send({ sessionId: b.id, event: { type: 'user.message', content: [{ type: 'text', text: 'read plan.md' }] } });
    await runtime().harness.wake(b.id);
    const results = await api().events.list({ sessionId: b.id, types: ['agent.tool_result'] });
    expect(results).toMatchObject([{ hand: 'memory-1', content: [{ text: 'step 1 done' }] }]);
    expect(await api().events.list({ sessionId: a.id, types: ['hand.released'] })).toMatchObject([{ transferred_to: { session_id: b.id } }]);
    expect(await api().events.list({ sessionId: b.id, types: ['hand.provisioned'] })).toMatchObject([{ transferred_from: { session_id: a.id } }]);

    const again = await rejection(api().hands.transfer({ from: a.id, hand: 'memory-1', to: b.id }));
    expect(again.code).toBe('BAD_REQUEST');
  });

  it('lets the IDE list, read and edit files on a server hand, recording the edit for the brain', async () => {
    const s = await api().sessions.create({});
    await api().events.send({ sessionId: s.id, event: { type: 'user.message', content: [{ type: 'text', text: 'write src/a.js: let x = 1;' }] } });
    await runtime().harness.wake(s.id);
    expect(await api().hands.listFiles({ sessionId: s.id, hand: 'memory-1' })).toEqual({ files: ['src/a.js'] });
    const edit = await api().hands.writeFile({ sessionId: s.id, hand: 'memory-1', path: 'src/a.js', content: 'let x = 2;' });
    expect(edit).toMatchObject({ type: 'user.file_edit', hand: 'memory-1', path: 'src/a.js' });
    expect(await api().hands.readFile({ sessionId: s.id, hand: 'memory-1', path: 'src/a.js' })).toEqual({ content: 'let x = 2;' });
    const bad = await rejection(api().hands.readFile({ sessionId: s.id, hand: 'memory-1', path: 'nope.js' }));
    expect(bad.code).toBe('BAD_REQUEST');
    expect(bad.message).toContain('no such file');
    expect((await rejection(api().hands.listFiles({ sessionId: s.id, hand: 'sandbox-7' }))).code).toBe('BAD_REQUEST');
  });

  it('refuses an IDE edit to a terminated session before writing it: the file on the hand stays as it was', async () => {
    const s = await api().sessions.create({});
    await api().events.send({ sessionId: s.id, event: { type: 'user.message', content: [{ type: 'text', text: 'write src/a.js: let x = 1;' }] } });
    await runtime().harness.wake(s.id);
    await runtime().store.emitEvent(s.id, { type: 'session.status_terminated' });
    const e = await rejection(api().hands.writeFile({ sessionId: s.id, hand: 'memory-1', path: 'src/a.js', content: 'let x = 2;' }));
    expect(e.code).toBe('CONFLICT');
    expect(e.message).toBe(`session ${s.id} is terminated and takes no more events`);
    expect(await api().hands.readFile({ sessionId: s.id, hand: 'memory-1', path: 'src/a.js' })).toEqual({ content: 'let x = 1;' });
    expect(await api().events.list({ sessionId: s.id, types: ['user.file_edit'] })).toEqual([]);
  });

  it('refuses an IDE edit to an archived session, as a send is refused, before writing it', async () => {
    const s = await api().sessions.create({});
    await api().events.send({ sessionId: s.id, event: { type: 'user.message', content: [{ type: 'text', text: 'write src/a.js: let x = 1;' }] } });
    await runtime().harness.wake(s.id);
    await runtime().store.updateSession(s.id, { archived: true });
    const e = await rejection(api().hands.writeFile({ sessionId: s.id, hand: 'memory-1', path: 'src/a.js', content: 'let x = 2;' }));
    expect(e.code).toBe('BAD_REQUEST');
    expect(e.message).toBe(`session ${s.id} is archived and takes no more events`);
    expect(await api().hands.readFile({ sessionId: s.id, hand: 'memory-1', path: 'src/a.js' })).toEqual({ content: 'let x = 1;' });
  });
});
