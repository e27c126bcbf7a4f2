import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConflictError, InvalidInputError, NotFoundError, SeqConflictError, StaleFenceError } from '~/lib/errors';
import type { NewEvent, StoredEvent } from '~/lib/events';
import type { SessionStore } from '~/server/session/store';

/**
 * The behaviour every SessionStore must have, as one vitest suite. Each backend's test file calls
 * this with a factory for a fresh, empty store; the suite closes it after each test.
 */

const msg = (text: string): NewEvent => ({ type: 'user.message', content: [{ type: 'text', text }] });
const reply = (text: string): NewEvent => ({ type: 'agent.message', content: [{ type: 'text', text }] });
const running: NewEvent = { type: 'session.status_running' };
const idle: NewEvent = { type: 'session.status_idle', stop_reason: { type: 'end_turn' }, stop_details: null };
const rescheduled: NewEvent = { type: 'session.status_rescheduled', attempt: 1, retry_in_ms: 10 };
const terminated: NewEvent = { type: 'session.status_terminated' };
/** A user.message whose content is a string: the kind of thing a buggy client sends. */
const malformed = { type: 'user.message', content: 'hello' } as unknown as NewEvent;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const seqs = (events: readonly StoredEvent[]) => events.map((e) => e.seq);
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

export function runStoreContract(name: string, makeStore: () => Promise<SessionStore>): void {
  describe(`session store contract: ${name}`, () => {
    let store: SessionStore;

    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(async () => {
      await store.close();
    });

    describe('sessions', () => {
      it('creates a session with defaults and gets it back', async () => {
        const s = await store.createSession({});
        expect(s.id).toMatch(/^sesn_/);
        expect(s).toMatchObject({ title: 'New session', status: 'idle', last_seq: 0, metadata: {} });
        expect(await store.getSession(s.id)).toEqual(s);

        const named = await store.createSession({ title: 'Refactor', metadata: { repo: 'paddock' } });
        expect(await store.getSession(named.id)).toMatchObject({ title: 'Refactor', metadata: { repo: 'paddock' } });
      });

      it('keeps what the list shows: the first line of the newest message, and what an idle session waits for', async () => {
        const s = await store.createSession({});
        expect(s).toMatchObject({ waiting_on: null, last_message: null });
        await store.emitEvents(s.id, [msg('\n  Fix the build  \nplease'), running]);
        expect(await store.getSession(s.id)).toMatchObject({ last_message: 'Fix the build', waiting_on: null });
        const [asking] = await store.emitEvents(s.id, [
          { type: 'agent.tool_use', name: 'bash', input: {}, model_tool_use_id: 'toolu_1', evaluated_permission: 'ask' },
          { type: 'span.model_request_end', model_request_start_id: 'sevt_x', is_error: false, model_usage: { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } },
        ]);
        await store.emitEvent(s.id, { type: 'session.status_idle', stop_reason: { type: 'requires_action', event_ids: [asking!.id] }, stop_details: null });
        // Several sessions in one statement take the same path as one.
        const other = await store.createSession({});
        await Promise.all([store.emitEvent(other.id, reply('x'.repeat(500))), store.emitEvent(s.id, { type: 'hand.provisioned', hand: 'sandbox-1', kind: 'sandbox' })]);
        expect(await store.getSession(s.id)).toMatchObject({ waiting_on: 'approval', last_message: 'Fix the build' });
        expect((await store.getSession(other.id))?.last_message).toHaveLength(160);
        await store.emitEvents(s.id, [{ type: 'user.tool_confirmation', tool_use_id: asking!.id, result: 'allow' }, running, reply('Done.'), idle]);
        expect(await store.getSession(s.id)).toMatchObject({ waiting_on: null, last_message: 'Done.' });
        const [custom] = await store.emitEvents(s.id, [{ type: 'agent.custom_tool_use', name: 'lookup', input: {}, model_tool_use_id: 'toolu_2' }]);
        await store.emitEvent(s.id, { type: 'session.status_idle', stop_reason: { type: 'requires_action', event_ids: [custom!.id] }, stop_details: null });
        expect(await store.getSession(s.id)).toMatchObject({ waiting_on: 'client' });
      });

      it('lists by a title fragment in any case (% and _ plain), and by needing approval', async () => {
        const a = await store.createSession({ title: 'Fix the BUILD' });
        const b = await store.createSession({ title: '100% done_now' });
        const c = await store.createSession({ title: 'Other' });
        const [call] = await store.emitEvents(c.id, [{ type: 'agent.tool_use', name: 'bash', input: {}, model_tool_use_id: 'toolu_1', evaluated_permission: 'ask' }]);
        await store.emitEvent(c.id, { type: 'session.status_idle', stop_reason: { type: 'requires_action', event_ids: [call!.id] }, stop_details: null });
        const ids = async (q: Parameters<SessionStore['listSessions']>[0]) => (await store.listSessions(q)).data.map((x) => x.id).sort();
        expect(await ids({ titleContains: 'build' })).toEqual([a.id]);
        expect(await ids({ titleContains: '0%' })).toEqual([b.id]);
        expect(await ids({ titleContains: '%' })).toEqual([b.id]);
        expect(await ids({ titleContains: 'e_n' })).toEqual([b.id]);
        expect(await ids({ titleContains: 'x_y' })).toEqual([]);
        expect(await ids({ needsApproval: true })).toEqual([c.id]);
        expect(await ids({ needsApproval: false })).toEqual([a.id, b.id].sort());
      });

      it('renames a session without touching its log, and refuses an unknown id or an empty title', async () => {
        const s = await store.createSession({});
        await store.emitEvent(s.id, { type: 'user.interrupt' });
        const renamed = await store.updateSession(s.id, { title: '  Fix the build  ' });
        expect(renamed).toMatchObject({ id: s.id, title: 'Fix the build', last_seq: 1 });
        expect(await store.getEvents(s.id)).toHaveLength(1);
        await expect(store.updateSession('sesn_01J00000000000000000000000', { title: 'x' })).rejects.toMatchObject({ code: 'not_found' });
        await expect(store.updateSession(s.id, { title: ' ' })).rejects.toMatchObject({ code: 'invalid_input' });
      });

      it('commits a session patch with the events it goes with: a refused append changes nothing, a repeated key does not apply it again', async () => {
        const s = await store.createSession({ title: 'A', vault_ids: ['vlt_1'] });
        const said: NewEvent = { type: 'session.updated', title: 'B' };
        await expect(store.emitEvents(s.id, [said], { sessionPatch: { title: 'B' }, expectLastSeq: 5 })).rejects.toBeInstanceOf(SeqConflictError);
        expect(await store.getSession(s.id)).toMatchObject({ title: 'A', last_seq: 0 });
        await store.emitEvents(s.id, [said], { sessionPatch: { title: 'B', vault_ids: ['vlt_2'] }, idempotencyKey: 'u1' });
        expect(await store.getSession(s.id)).toMatchObject({ title: 'B', vault_ids: ['vlt_2'], last_seq: 1 });
        await store.updateSession(s.id, { title: 'C' });
        await store.emitEvents(s.id, [said], { sessionPatch: { title: 'B' }, idempotencyKey: 'u1' });
        expect(await store.getSession(s.id)).toMatchObject({ title: 'C', last_seq: 1 });
        await expect(store.emitEvents(s.id, [said], { sessionPatch: { title: ' ' } })).rejects.toMatchObject({ code: 'invalid_input' });
        expect(await store.getEvents(s.id)).toHaveLength(1);
      });

      it('updates a session\'s agent and vault ids, keeping its resources', async () => {
        const agent = { id: 'agent_x', type: 'agent', version: 1, name: 'x', description: null, model: { id: 'm' }, system: 's', tools: [], mcp_servers: [], skills: [], execution_identity: null, multiagent: null } as const;
        const s = await store.createSession({ agent: { ...agent, tools: [], mcp_servers: [], skills: [] }, vault_ids: ['vlt_1'], resources: [{ type: 'file', file_id: 'f' }] });
        const next = { ...agent, tools: [], skills: [], mcp_servers: [{ type: 'url' as const, name: 'docs', url: 'https://mcp.example.com/mcp' }] };
        const updated = await store.updateSession(s.id, { agent: next, vault_ids: ['vlt_2', 'vlt_3'] });
        expect(updated).toMatchObject({ vault_ids: ['vlt_2', 'vlt_3'], resources: [{ type: 'file', file_id: 'f' }], agent: { mcp_servers: [{ name: 'docs' }] } });
        expect(await store.getSession(s.id)).toMatchObject({ vault_ids: ['vlt_2', 'vlt_3'], resources: [{ type: 'file', file_id: 'f' }], agent: { mcp_servers: [{ name: 'docs' }] } });
        await expect(store.updateSession('sesn_01J00000000000000000000000', { vault_ids: [] })).rejects.toMatchObject({ code: 'not_found' });
      });

      it('deletes a session with its log, keys, tabs and claims, and no other session’s', async () => {
        const gone = await store.createSession({});
        const kept = await store.createSession({});
        for (const s of [gone, kept]) {
          await store.emitEvent(s.id, { type: 'user.interrupt' }, { idempotencyKey: 'k1' });
          await store.touchTab(s.id, 'browser-1', 'tab-a');
          await store.claimCall(s.id, 'sevt_1', 'tab-a');
        }
        await store.deleteSession(gone.id);
        expect(await store.getSession(gone.id)).toBeNull();
        expect(await store.getEvents(gone.id).catch(() => [])).toEqual([]);
        expect(await store.liveTabs(gone.id, 'browser-1', 60_000)).toEqual([]);
        expect(await store.callClaim(gone.id, 'sevt_1')).toBeNull();
        expect(await store.getEvents(kept.id)).toHaveLength(1);
        expect(await store.liveTabs(kept.id, 'browser-1', 60_000)).toEqual(['tab-a']);
        expect(await store.callClaim(kept.id, 'sevt_1')).toBe('tab-a');
        expect((await store.listSessions({})).data.map((s) => s.id)).not.toContain(gone.id);
        await expect(store.deleteSession(gone.id)).rejects.toBeInstanceOf(NotFoundError);
      });

      it('returns null for an unknown session', async () => {
        expect(await store.getSession('sesn_01J00000000000000000000000')).toBeNull();
      });

      it('lists sessions newest updated first and pages through them with a cursor', async () => {
        const created = [];
        for (let i = 0; i < 5; i++) created.push(await store.createSession({ title: `s${i}` }));
        const oldest = created[0]!;
        await sleep(5);
        // Activity makes the oldest session the most recently updated one.
        await store.emitEvent(oldest.id, msg('bump'));
        const expected = [oldest.id, ...created.slice(1).reverse().map((s) => s.id)];

        const seen: string[] = [];
        let cursor: string | null = null;
        let pages = 0;
        do {
          const page = await store.listSessions({ limit: 2, cursor });
          seen.push(...page.data.map((s) => s.id));
          cursor = page.next_cursor;
          pages++;
        } while (cursor !== null && pages < 10);
        expect(seen).toEqual(expected);
        expect(pages).toBe(3);

        const all = await store.listSessions({});
        expect(all.data.map((s) => s.id)).toEqual(expected);
        expect(all.next_cursor).toBeNull();
      });

      it('rejects a cursor it did not issue', async () => {
        await expect(store.listSessions({ cursor: 'not-a-cursor' })).rejects.toBeInstanceOf(InvalidInputError);
      });

      it('pages both ways by creation time, in either order, and back again with prev cursors', async () => {
        const ids: string[] = [];
        for (let i = 0; i < 5; i++) ids.push((await store.createSession({ title: `p${i}` })).id);
        for (const order of ['asc', 'desc'] as const) {
          const want = order === 'asc' ? ids : [...ids].reverse();
          const p1 = await store.listSessions({ by: 'created_at', order, limit: 2 });
          const p2 = await store.listSessions({ by: 'created_at', order, limit: 2, cursor: p1.next_cursor });
          const p3 = await store.listSessions({ by: 'created_at', order, limit: 2, cursor: p2.next_cursor });
          expect([...p1.data, ...p2.data, ...p3.data].map((s) => s.id)).toEqual(want);
          expect(p1.prev_cursor).toBeNull();
          expect(p3.next_cursor).toBeNull();
          const back = await store.listSessions({ by: 'created_at', order, limit: 2, cursor: p3.prev_cursor });
          expect(back.data.map((s) => s.id)).toEqual(p2.data.map((s) => s.id));
          const front = await store.listSessions({ by: 'created_at', order, limit: 2, cursor: back.prev_cursor });
          expect(front.data.map((s) => s.id)).toEqual(p1.data.map((s) => s.id));
          expect(front.prev_cursor).toBeNull();
        }
        // A cursor of one ordering is not one of another.
        const p = await store.listSessions({ by: 'created_at', limit: 2 });
        await expect(store.listSessions({ cursor: p.next_cursor })).rejects.toBeInstanceOf(InvalidInputError);
      });

      it('keeps the agent a session was created with, filters by it, by status and by archive', async () => {
        const agent = { id: 'agent_x', type: 'agent', version: 3, name: 'x', description: null, model: { id: 'm' }, system: 's', tools: [], mcp_servers: [], skills: [], execution_identity: null, multiagent: null } as const;
        const a = await store.createSession({ agent: { ...agent, tools: [], mcp_servers: [], skills: [] }, environment_id: 'env_1', vault_ids: ['vlt_1'], resources: [{ type: 'file', file_id: 'f' }] });
        const b = await store.createSession({});
        expect(await store.getSession(a.id)).toMatchObject({ agent: { id: 'agent_x', version: 3, system: 's' }, environment_id: 'env_1', vault_ids: ['vlt_1'], resources: [{ type: 'file', file_id: 'f' }], archived_at: null });
        expect((await store.getSession(b.id))?.agent).toBeNull();
        expect((await store.listSessions({ agentId: 'agent_x' })).data.map((s) => s.id)).toEqual([a.id]);
        expect((await store.listSessions({ agentId: 'agent_x', agentVersion: 2 })).data).toEqual([]);
        expect((await store.listSessions({ statuses: ['running'] })).data).toEqual([]);
        const archived = await store.updateSession(a.id, { archived: true, metadata: { k: 'v' } });
        expect(archived.archived_at).not.toBeNull();
        expect(archived.metadata).toEqual({ k: 'v' });
        expect((await store.updateSession(a.id, { archived: true })).archived_at).toBe(archived.archived_at);
        expect((await store.listSessions({ includeArchived: false })).data.map((s) => s.id)).not.toContain(a.id);
        expect((await store.listSessions({})).data.map((s) => s.id)).toContain(a.id);
      });

      it('keeps status, last_seq and updated_at of the session row in step with the log', async () => {
        const s = await store.createSession({});
        await store.emitEvent(s.id, msg('go'));
        expect(await store.getSession(s.id)).toMatchObject({ status: 'idle', last_seq: 1 });
        await store.emitEvent(s.id, running);
        expect(await store.getSession(s.id)).toMatchObject({ status: 'running', last_seq: 2 });
        await store.emitEvent(s.id, reply('working'));
        expect(await store.getSession(s.id)).toMatchObject({ status: 'running', last_seq: 3 });
        await store.emitEvent(s.id, rescheduled);
        expect(await store.getSession(s.id)).toMatchObject({ status: 'rescheduling', last_seq: 4 });
        await store.emitEvents(s.id, [running, reply('done'), idle]);
        expect(await store.getSession(s.id)).toMatchObject({ status: 'idle', last_seq: 7 });
        const last = await store.emitEvent(s.id, terminated);
        const after = await store.getSession(s.id);
        expect(after).toMatchObject({ status: 'terminated', last_seq: 8, updated_at: last.processed_at });
      });

      it('refuses any input to a terminated session in the append itself, stores nothing, and keeps it terminated', async () => {
        const s = await store.createSession({});
        await store.emitEvents(s.id, [msg('q'), running, reply('a'), idle, terminated]);
        for (const input of [msg('more?'), { type: 'user.interrupt' } as NewEvent, { type: 'user.file_edit', hand: 'browser-1', path: 'a.txt', content: 'x' } as NewEvent]) {
          await expect(store.emitEvent(s.id, input)).rejects.toThrow(ConflictError);
          await expect(store.emitEvent(s.id, input)).rejects.toThrow(`session ${s.id} is terminated and takes no more events`);
        }
        // A batch that ends a session cannot carry input after its end either: none of it is stored.
        const other = await store.createSession({});
        await expect(store.emitEvents(other.id, [terminated, msg('late')])).rejects.toThrow(ConflictError);
        expect(await store.getEvents(other.id)).toEqual([]);
        // Whatever the harness stores about itself afterwards leaves the session terminated.
        await store.emitEvent(s.id, running);
        expect(await store.getSession(s.id)).toMatchObject({ status: 'terminated', last_seq: 6 });
        expect((await store.getEvents(s.id)).map((e) => e.type).slice(4)).toEqual(['session.status_terminated', 'session.status_running']);
      });
    });

    describe('appending', () => {
      it('stores an event with id, seq, session_id and processed_at, and reads it back equal', async () => {
        const s = await store.createSession({});
        const e = await store.emitEvent(s.id, msg('hi'));
        expect(e).toMatchObject({ type: 'user.message', seq: 1, session_id: s.id, content: [{ type: 'text', text: 'hi' }] });
        expect(e.id).toMatch(/^sevt_/);
        expect(new Date(e.processed_at).toISOString()).toBe(e.processed_at);
        expect(await store.getEvents(s.id)).toEqual([e]);
      });

      it('assigns contiguous seqs 1..50 to 50 concurrent emitters, without duplicates', async () => {
        const s = await store.createSession({});
        const stored = await Promise.all(range(1, 50).map((i) => store.emitEvent(s.id, msg(`m${i}`))));
        expect(seqs(stored).sort((a, b) => a - b)).toEqual(range(1, 50));
        expect(new Set(stored.map((e) => e.id)).size).toBe(50);
        expect(seqs(await store.getEvents(s.id))).toEqual(range(1, 50));
        expect((await store.getSession(s.id))?.last_seq).toBe(50);
      });

      it('gives a batch contiguous seqs even when single emits race with it', async () => {
        const s = await store.createSession({});
        const [a, batch, b] = await Promise.all([
          store.emitEvent(s.id, msg('a')),
          store.emitEvents(s.id, [running, reply('x'), reply('y'), idle]),
          store.emitEvent(s.id, msg('b')),
        ]);
        const batchSeqs = seqs(batch);
        expect(batchSeqs).toEqual(range(batchSeqs[0]!, batchSeqs[0]! + 3));
        expect([a.seq, b.seq, ...batchSeqs].sort((x, y) => x - y)).toEqual(range(1, 6));
        expect(batch.map((e) => e.type)).toEqual(['session.status_running', 'agent.message', 'agent.message', 'session.status_idle']);
      });

      it('writes nothing from a batch that holds one invalid event', async () => {
        const s = await store.createSession({});
        await expect(store.emitEvents(s.id, [msg('ok'), malformed, msg('ok too')])).rejects.toBeInstanceOf(InvalidInputError);
        expect(await store.getEvents(s.id)).toEqual([]);
        expect(await store.getSession(s.id)).toMatchObject({ last_seq: 0, status: 'idle' });
      });

      it('rejects a malformed event with an InvalidInputError naming the field, and writes nothing', async () => {
        const s = await store.createSession({});
        const err: unknown = await store.emitEvent(s.id, malformed).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(InvalidInputError);
        expect((err as Error).message).toMatch(/content/);
        const unknownType = { type: 'user.shout', text: 'HI' } as unknown as NewEvent;
        await expect(store.emitEvent(s.id, unknownType)).rejects.toBeInstanceOf(InvalidInputError);
        expect(await store.getEvents(s.id)).toEqual([]);
      });

      it('rejects an append to an unknown session with NotFoundError', async () => {
        await expect(store.emitEvent('sesn_01J00000000000000000000000', msg('x'))).rejects.toBeInstanceOf(NotFoundError);
      });

      it('returns the first event for a repeated idempotency key, appending nothing', async () => {
        const s = await store.createSession({});
        const first = await store.emitEvent(s.id, msg('once'), { idempotencyKey: 'k1' });
        await store.emitEvent(s.id, msg('other'));
        const again = await store.emitEvent(s.id, msg('once'), { idempotencyKey: 'k1' });
        expect(again).toEqual(first);
        expect(seqs(await store.getEvents(s.id))).toEqual([1, 2]);
        // Keys are per session.
        const t = await store.createSession({});
        expect((await store.emitEvent(t.id, msg('once'), { idempotencyKey: 'k1' })).seq).toBe(1);
      });

      it('returns the whole first batch for a repeated idempotency key, appending nothing', async () => {
        const s = await store.createSession({});
        const first = await store.emitEvents(s.id, [msg('a'), msg('b'), msg('c')], { idempotencyKey: 'batch' });
        const [a, b] = await Promise.all([
          store.emitEvents(s.id, [msg('a'), msg('b'), msg('c')], { idempotencyKey: 'batch' }),
          store.emitEvents(s.id, [msg('a'), msg('b'), msg('c')], { idempotencyKey: 'batch' }),
        ]);
        expect(a).toEqual(first);
        expect(b).toEqual(first);
        expect(seqs(await store.getEvents(s.id))).toEqual([1, 2, 3]);
        // A single emit with the batch's key answers with the batch's first event.
        expect(await store.emitEvent(s.id, msg('a'), { idempotencyKey: 'batch' })).toEqual(first[0]);
      });

      it('accepts an append whose expectLastSeq matches and rejects a stale one with SeqConflictError', async () => {
        const s = await store.createSession({});
        await store.emitEvent(s.id, msg('1'), { expectLastSeq: 0 });
        await store.emitEvent(s.id, msg('2'), { expectLastSeq: 1 });
        const err: unknown = await store.emitEvent(s.id, msg('late'), { expectLastSeq: 1 }).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(SeqConflictError);
        expect(err).toMatchObject({ expected: 1, actual: 2 });
        expect(seqs(await store.getEvents(s.id))).toEqual([1, 2]);
      });
    });

    describe('fencing', () => {
      it('accepts appends fenced by the current lease holder', async () => {
        const s = await store.createSession({});
        const fence = await store.acquireLease(s.id, 'harness-a', 10_000);
        expect(fence).not.toBeNull();
        const e = await store.emitEvent(s.id, running, { fence: fence! });
        expect(e.seq).toBe(1);
      });

      it('rejects a stale fence with StaleFenceError once another owner acquired, writing nothing', async () => {
        const s = await store.createSession({});
        const a = (await store.acquireLease(s.id, 'harness-a', 10_000))!;
        await store.emitEvent(s.id, running, { fence: a });
        await store.releaseLease(a);
        const b = (await store.acquireLease(s.id, 'harness-b', 10_000))!;
        expect(b.epoch).toBeGreaterThan(a.epoch);

        const err: unknown = await store.emitEvent(s.id, reply('zombie'), { fence: a }).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(StaleFenceError);
        await expect(store.emitEvents(s.id, [reply('x'), idle], { fence: a })).rejects.toBeInstanceOf(StaleFenceError);
        expect(seqs(await store.getEvents(s.id))).toEqual([1]);

        expect((await store.emitEvent(s.id, reply('live'), { fence: b })).seq).toBe(2);
      });

      it('accepts the fence of an expired lease nobody took over, and rejects it after a takeover', async () => {
        const s = await store.createSession({});
        const a = (await store.acquireLease(s.id, 'harness-a', 30))!;
        await sleep(60);
        expect((await store.emitEvent(s.id, running, { fence: a })).seq).toBe(1);
        const b = (await store.acquireLease(s.id, 'harness-b', 10_000))!;
        await expect(store.emitEvent(s.id, reply('zombie'), { fence: a })).rejects.toBeInstanceOf(StaleFenceError);
        expect((await store.emitEvent(s.id, reply('ok'), { fence: b })).seq).toBe(2);
      });
    });

    describe('reading slices', () => {
      let id: string;
      beforeEach(async () => {
        id = (await store.createSession({})).id;
        // seq:  1 user.message, 2 running, 3 agent.message, 4 agent.message, 5 idle, 6 user.message
        await store.emitEvents(id, [msg('q'), running, reply('a'), reply('b'), idle, msg('q2')]);
      });

      it('returns the whole log in seq order by default', async () => {
        expect(seqs(await store.getEvents(id))).toEqual(range(1, 6));
      });

      it('slices by from/to, inclusive', async () => {
        expect(seqs(await store.getEvents(id, { from: 2, to: 4 }))).toEqual([2, 3, 4]);
        expect(seqs(await store.getEvents(id, { from: 5 }))).toEqual([5, 6]);
        expect(seqs(await store.getEvents(id, { to: 2 }))).toEqual([1, 2]);
        expect(await store.getEvents(id, { from: 7 })).toEqual([]);
      });

      it('counts a negative from back from the end of the log', async () => {
        expect(seqs(await store.getEvents(id, { from: -1 }))).toEqual([6]);
        expect(seqs(await store.getEvents(id, { from: -3 }))).toEqual([4, 5, 6]);
        expect(seqs(await store.getEvents(id, { from: -100 }))).toEqual(range(1, 6));
      });

      it('filters by type and limits the count', async () => {
        const messages = await store.getEvents(id, { types: ['agent.message'] });
        expect(seqs(messages)).toEqual([3, 4]);
        expect(messages.every((e) => e.type === 'agent.message')).toBe(true);
        expect(seqs(await store.getEvents(id, { types: ['user.message', 'session.status_idle'] }))).toEqual([1, 5, 6]);
        expect(seqs(await store.getEvents(id, { limit: 2 }))).toEqual([1, 2]);
        expect(seqs(await store.getEvents(id, { from: -4, types: ['agent.message', 'user.message'], limit: 2 }))).toEqual([3, 4]);
      });

      it('reads newest first with order desc: with a limit, the last events of the range', async () => {
        expect(seqs(await store.getEvents(id, { order: 'desc' }))).toEqual([6, 5, 4, 3, 2, 1]);
        expect(seqs(await store.getEvents(id, { order: 'desc', to: 4, limit: 2 }))).toEqual([4, 3]);
        expect(seqs(await store.getEvents(id, { order: 'desc', types: ['user.message'] }))).toEqual([6, 1]);
      });

      it('bounds by processed_at, and names a bound that is not a time', async () => {
        await new Promise((r) => setTimeout(r, 5)); // a later millisecond than the batch
        const later = await store.emitEvent(id, msg('q3'));
        const all = await store.getEvents(id);
        const first = all[0]!.processed_at;
        expect(seqs(await store.getEvents(id, { processedAt: { gte: later.processed_at } }))).toEqual([7]);
        expect(seqs(await store.getEvents(id, { processedAt: { lt: first } }))).toEqual([]);
        expect(seqs(await store.getEvents(id, { processedAt: { lte: first } }))).toEqual(range(1, 6));
        await expect(store.getEvents(id, { processedAt: { gt: 'yesterday' } })).rejects.toThrow(/processedAt.gt: not a time/);
      });

      it('rejects a slice of an unknown session with NotFoundError', async () => {
        await expect(store.getEvents('sesn_01J00000000000000000000000')).rejects.toBeInstanceOf(NotFoundError);
        await expect(store.getEvents('sesn_01J00000000000000000000000', { from: -1 })).rejects.toBeInstanceOf(NotFoundError);
      });
    });

    describe('following', () => {
      it('catches up, then follows live across a concurrent burst of 200 events with no gap or duplicate', async () => {
        const s = await store.createSession({});
        await store.emitEvents(s.id, range(1, 20).map((i) => msg(`before ${i}`)));
        const total = 220;
        const ac = new AbortController();
        const seen: number[] = [];
        const following = (async () => {
          for await (const e of store.follow(s.id, 0, ac.signal)) {
            seen.push(e.seq);
            if (seen.length >= total) ac.abort();
          }
        })();
        // Four waves of 50 concurrent emitters (one wave as batches), with pauses so the follower
        // is caught both mid-read and asleep.
        for (let wave = 0; wave < 4; wave++) {
          if (wave === 2) {
            await Promise.all(range(1, 10).map((i) => store.emitEvents(s.id, range(1, 5).map((j) => reply(`w${wave} ${i}.${j}`)))));
          } else {
            await Promise.all(range(1, 50).map((i) => store.emitEvent(s.id, reply(`w${wave} ${i}`))));
          }
          await sleep(wave * 5);
        }
        await following;
        expect(seen).toEqual(range(1, total));
      });

      it('starts after the given seq', async () => {
        const s = await store.createSession({});
        await store.emitEvents(s.id, [msg('1'), msg('2'), msg('3')]);
        const ac = new AbortController();
        const seen: number[] = [];
        for await (const e of store.follow(s.id, 2, ac.signal)) {
          seen.push(e.seq);
          ac.abort();
        }
        expect(seen).toEqual([3]);
      });

      it('ends cleanly, without throwing, when its signal aborts', async () => {
        const s = await store.createSession({});
        await store.emitEvent(s.id, msg('hi'));
        const ac = new AbortController();
        const seen: number[] = [];
        const following = (async () => {
          for await (const e of store.follow(s.id, 0, ac.signal)) seen.push(e.seq);
        })();
        await sleep(30);
        ac.abort();
        await expect(following).resolves.toBeUndefined();
        expect(seen).toEqual([1]);

        // An already-aborted signal yields nothing.
        const none: StoredEvent[] = [];
        for await (const e of store.follow(s.id, 0, AbortSignal.abort())) none.push(e);
        expect(none).toEqual([]);
      });
    });

    describe('leases', () => {
      it('gives a second owner null while the lease is held', async () => {
        const s = await store.createSession({});
        const a = await store.acquireLease(s.id, 'harness-a', 10_000);
        expect(a).toMatchObject({ sessionId: s.id, owner: 'harness-a' });
        expect(await store.acquireLease(s.id, 'harness-b', 10_000)).toBeNull();
      });

      it('lets another owner take an expired lease with a higher epoch, after which renew fails', async () => {
        const s = await store.createSession({});
        const a = (await store.acquireLease(s.id, 'harness-a', 50))!;
        expect(await store.renewLease(a, 50)).toBe(true);
        await sleep(80);
        const b = (await store.acquireLease(s.id, 'harness-b', 10_000))!;
        expect(b).toMatchObject({ owner: 'harness-b' });
        expect(b.epoch).toBeGreaterThan(a.epoch);
        expect(await store.renewLease(a, 10_000)).toBe(false);
        expect(await store.renewLease(b, 10_000)).toBe(true);
      });

      it('lets another owner acquire after a release, and ignores a release by a stale fence', async () => {
        const s = await store.createSession({});
        const a = (await store.acquireLease(s.id, 'harness-a', 10_000))!;
        await store.releaseLease(a);
        const b = (await store.acquireLease(s.id, 'harness-b', 10_000))!;
        expect(b.epoch).toBe(a.epoch + 1);
        await store.releaseLease(a);
        expect(await store.acquireLease(s.id, 'harness-c', 10_000)).toBeNull();
      });

      it('lists sessions needing work: log ends in something to act on and the lease is free', async () => {
        const waiting = await store.createSession({ title: 'waiting' });
        await store.emitEvent(waiting.id, msg('please'));
        const ended = await store.createSession({ title: 'ended idle' });
        await store.emitEvents(ended.id, [msg('q'), running, reply('a'), idle]);
        const leased = await store.createSession({ title: 'leased' });
        await store.emitEvent(leased.id, msg('please'));
        await store.acquireLease(leased.id, 'harness-a', 10_000);
        await store.createSession({ title: 'empty' });
        const dead = await store.createSession({ title: 'terminated' });
        await store.emitEvents(dead.id, [msg('q'), terminated]);
        const interrupted = await store.createSession({ title: 'mid-turn' });
        await sleep(5);
        await store.emitEvents(interrupted.id, [msg('q'), running, reply('partial')]);

        expect(await store.sessionsNeedingWork(10)).toEqual([
          { id: waiting.id, leaseExpired: false },
          { id: interrupted.id, leaseExpired: false },
        ]);
        expect(await store.sessionsNeedingWork(1)).toEqual([{ id: waiting.id, leaseExpired: false }]);
      });

      it('lets no side event (a hand attached, lost or released; a file edit) make a session need work, nor settle one that does', async () => {
        const idleOne = await store.createSession({ title: 'idle, then a tab attaches' });
        await store.emitEvents(idleOne.id, [msg('q'), running, reply('a'), idle]);
        await store.emitEvent(idleOne.id, { type: 'hand.provisioned', hand: 'browser-1', kind: 'browser' });
        await store.emitEvent(idleOne.id, { type: 'hand.lost', hand: 'browser-1', reason: 'tab closed' });
        const fresh = await store.createSession({ title: 'a tab before any message' });
        await store.emitEvent(fresh.id, { type: 'hand.provisioned', hand: 'browser-1', kind: 'browser' });
        await store.emitEvent(fresh.id, { type: 'user.file_edit', hand: 'browser-1', path: 'a.txt', content: 'x' });
        expect(await store.sessionsNeedingWork(10)).toEqual([]);

        const asking = await store.createSession({ title: 'asked, then a hand is released' });
        await store.emitEvent(asking.id, msg('please'));
        await store.emitEvent(asking.id, { type: 'hand.released', hand: 'sandbox-1' });
        expect(await store.sessionsNeedingWork(10)).toEqual([{ id: asking.id, leaseExpired: false }]);
      });

      it('takes a session off the list once a harness released it having found nothing to do, until more is appended', async () => {
        const s = await store.createSession({});
        await store.emitEvents(s.id, [msg('q'), running, reply('a'), idle, { type: 'user.interrupt' }]);
        expect((await store.sessionsNeedingWork(10)).map((w) => w.id)).toEqual([s.id]);
        // A harness read the log up to seq 5, but a message landed before it released: still listed.
        let fence = (await store.acquireLease(s.id, 'harness-a', 10_000))!;
        await store.emitEvent(s.id, { type: 'user.interrupt' });
        await store.releaseLease(fence, 5);
        expect((await store.sessionsNeedingWork(10)).map((w) => w.id)).toEqual([s.id]);
        fence = (await store.acquireLease(s.id, 'harness-a', 10_000))!;
        await store.releaseLease(fence, 6);
        expect(await store.sessionsNeedingWork(10)).toEqual([]);
        await store.emitEvent(s.id, msg('more'));
        expect((await store.sessionsNeedingWork(10)).map((w) => w.id)).toEqual([s.id]);
        await expect(store.releaseLease(fence, -1)).rejects.toThrow(/settledSeq/);
      });

      it('lists a session again once its lease expires', async () => {
        const s = await store.createSession({});
        await store.emitEvent(s.id, msg('please'));
        await store.acquireLease(s.id, 'harness-a', 30);
        expect(await store.sessionsNeedingWork(10)).toEqual([]);
        await sleep(60);
        expect(await store.sessionsNeedingWork(10)).toEqual([{ id: s.id, leaseExpired: true }]);
        const fence = (await store.acquireLease(s.id, 'harness-b', 10_000))!;
        await store.releaseLease(fence);
        expect(await store.sessionsNeedingWork(10)).toEqual([{ id: s.id, leaseExpired: false }]);
      });
    });

    describe('checkpoints', () => {
      it('keeps the newest checkpoint of a session: an older one never replaces it', async () => {
        const s = await store.createSession({});
        expect(await store.readCheckpoint(s.id)).toBeNull();
        await store.writeCheckpoint(s.id, { seq: 10, body: '{"at":10}' });
        expect(await store.readCheckpoint(s.id)).toEqual({ seq: 10, body: '{"at":10}' });
        // A slower writer of an older fold (a fenced-off harness) changes nothing.
        await store.writeCheckpoint(s.id, { seq: 4, body: '{"at":4}' });
        expect(await store.readCheckpoint(s.id)).toEqual({ seq: 10, body: '{"at":10}' });
        await store.writeCheckpoint(s.id, { seq: 25, body: '{"at":25}' });
        expect(await store.readCheckpoint(s.id)).toEqual({ seq: 25, body: '{"at":25}' });
        await expect(store.writeCheckpoint(s.id, { seq: -1, body: '{}' })).rejects.toThrow(/seq/);
      });

      it('stores no checkpoint for a session that does not exist, and drops it with its session', async () => {
        await store.writeCheckpoint('sesn_01NOSUCHSESSION000000000000', { seq: 3, body: '{}' });
        expect(await store.readCheckpoint('sesn_01NOSUCHSESSION000000000000')).toBeNull();
        const s = await store.createSession({});
        await store.writeCheckpoint(s.id, { seq: 1, body: '{}' });
        await store.deleteSession(s.id);
        expect(await store.readCheckpoint(s.id)).toBeNull();
      });
    });

    describe('browser tabs and claims', () => {
      it('lists the tabs of a hand seen recently, and forgets one that stops', async () => {
        const s = await store.createSession({});
        await store.touchTab(s.id, 'browser-1', 'tab-a');
        await store.touchTab(s.id, 'browser-1', 'tab-b');
        await store.touchTab(s.id, 'browser-2', 'tab-c');
        expect(await store.liveTabs(s.id, 'browser-1', 10_000)).toEqual(['tab-a', 'tab-b']);
        await sleep(80);
        await store.touchTab(s.id, 'browser-1', 'tab-b');
        expect(await store.liveTabs(s.id, 'browser-1', 50)).toEqual(['tab-b']);
        expect(await store.liveTabs(s.id, 'browser-3', 10_000)).toEqual([]);
      });

      it('grants each call to the first tab that claims it, also under a race', async () => {
        const s = await store.createSession({});
        expect(await store.callClaim(s.id, 'sevt_1')).toBeNull();
        const holders = await Promise.all(range(1, 8).map((i) => store.claimCall(s.id, 'sevt_1', `tab-${i}`)));
        expect(new Set(holders).size).toBe(1);
        expect(await store.callClaim(s.id, 'sevt_1')).toBe(holders[0]);
        expect(await store.claimCall(s.id, 'sevt_1', 'tab-late')).toBe(holders[0]);
        expect(await store.claimCall(s.id, 'sevt_2', 'tab-late')).toBe('tab-late');
      });

      it('prunes the tabs of ended browser hands and the claims of answered calls, and nothing else', async () => {
        const s = await store.createSession({});
        await store.touchTab(s.id, 'browser-1', 'tab-a');
        await store.touchTab(s.id, 'browser-2', 'tab-b');
        await store.emitEvent(s.id, { type: 'hand.provisioned', hand: 'browser-1', kind: 'browser' }, { idempotencyKey: 'hand:browser-1:provisioned' });
        await store.emitEvent(s.id, { type: 'hand.lost', hand: 'browser-1', reason: 'no tab' }, { idempotencyKey: 'hand:browser-1:lost' });
        const answered = await store.emitEvent(s.id, { type: 'agent.tool_use', name: 'bash', input: { command: 'ls' }, model_tool_use_id: 'toolu_1' });
        const open = await store.emitEvent(s.id, { type: 'agent.tool_use', name: 'bash', input: { command: 'ls' }, model_tool_use_id: 'toolu_2' });
        await store.claimCall(s.id, answered.id, 'tab-a');
        await store.claimCall(s.id, open.id, 'tab-b');
        await store.emitEvent(s.id, { type: 'user.tool_result', tool_use_id: answered.id, content: [{ type: 'text', text: 'ok' }] }, { idempotencyKey: answered.id });

        expect(await store.pruneHandRows()).toEqual({ tabs: 1, claims: 1 });
        expect(await store.liveTabs(s.id, 'browser-1', 60_000)).toEqual([]);
        expect(await store.liveTabs(s.id, 'browser-2', 60_000)).toEqual(['tab-b']);
        expect(await store.callClaim(s.id, answered.id)).toBeNull();
        expect(await store.callClaim(s.id, open.id)).toBe('tab-b');
        expect(await store.pruneHandRows()).toEqual({ tabs: 0, claims: 0 });
      });

      it('rejects tabs and claims of an unknown session with NotFoundError', async () => {
        await expect(store.touchTab('sesn_missing', 'browser-1', 'tab-a')).rejects.toBeInstanceOf(NotFoundError);
        await expect(store.claimCall('sesn_missing', 'sevt_1', 'tab-a')).rejects.toBeInstanceOf(NotFoundError);
      });
    });
  });
}
