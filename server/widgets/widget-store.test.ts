import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { WIDGET_DEFAULTS } from '~/lib/widget';
import { AgentStore } from '~/server/agents/agent-store';
import type { KyselySessionStore } from '~/server/session/kysely-queries';
import { openPostgresStore } from '~/server/session/postgres-store';
import { openSqliteStore } from '~/server/session/sqlite-store';
import { type TestDatabase, createTestDatabase } from '~/server/session/testing/pg-test-db';
import { WidgetStore } from '~/server/widgets/widget-store';

let dir: string;
let store: KyselySessionStore;
let widgets: WidgetStore;
let pgDb: TestDatabase | null = null;

beforeAll(async () => {
  pgDb = await createTestDatabase('paddock_widgets');
});
afterAll(async () => {
  await pgDb?.drop();
});

const DOCS = 'https://docs.example.com';

describe.each(['sqlite', 'postgres'] as const)('widget rows on %s', (kind) => {
  beforeEach(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'paddock-widgets-'));
    if (kind === 'sqlite') store = await openSqliteStore({ file: path.join(dir, 'db.sqlite') });
    else {
      store = await openPostgresStore({ url: pgDb!.url });
      await sql`truncate table widget_sessions, widget_settings, sessions cascade`.execute(store.db);
    }
    widgets = new WidgetStore(store.db);
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("keeps an agent's settings (origins once each), refuses an unknown agent or environment", async () => {
    const agents = new AgentStore(store.db, { model: 'claude-sonnet-5-5', system: 'x' });
    await agents.ensureDefaults();
    expect(await widgets.settings('agent_default')).toBeNull();
    const saved = await widgets.save('agent_default', { ...WIDGET_DEFAULTS, enabled: true, allowed_origins: [DOCS, DOCS], environment_id: 'env_default' });
    expect(saved).toMatchObject({ agent_id: 'agent_default', enabled: true, allowed_origins: [DOCS] });
    expect(await widgets.settings('agent_default')).toEqual(saved);
    await expect(widgets.save('agent_nope', { ...WIDGET_DEFAULTS, environment_id: 'env_default' })).rejects.toMatchObject({ code: 'not_found' });
    await expect(widgets.save('agent_default', { ...WIDGET_DEFAULTS, environment_id: 'env_nope' })).rejects.toMatchObject({ code: 'invalid_input' });
  });

  it("binds a session to its visitor, lists a visitor's own, counts an agent's last hour, and goes with the session", async () => {
    const [a, b, c] = [await store.createSession({ title: 'a' }), await store.createSession({ title: 'b' }), await store.createSession({ title: 'owner' })];
    const now = Date.now();
    await widgets.recordSession({ sessionId: a.id, agentId: 'agent_default', origin: DOCS, visitorHash: 'v1' }, now - 2 * 3_600_000);
    await widgets.recordSession({ sessionId: b.id, agentId: 'agent_default', origin: 'http://127.0.0.1:4020', visitorHash: 'v2' }, now);
    expect(await widgets.owns('v1', 'agent_default', a.id)).toBe(true);
    expect(await widgets.owns('v2', 'agent_default', a.id)).toBe(false);
    expect(await widgets.owns('v1', 'agent_other', a.id)).toBe(false);
    expect(await widgets.owns('v1', 'agent_default', c.id)).toBe(false);
    expect((await widgets.visitorSessions('v1', 'agent_default')).map((s) => s.title)).toEqual(['a']);
    expect(await widgets.startedSince('agent_default', now - 3_600_000)).toBe(1);
    expect(await widgets.origins()).toEqual([DOCS, 'http://127.0.0.1:4020'].sort());
    expect((await store.listSessions({ widgetOrigin: DOCS })).data.map((s) => s.id)).toEqual([a.id]);
    expect((await store.listSessions({ widgetOrigin: '*' })).data.map((s) => s.id).sort()).toEqual([a.id, b.id].sort());
    expect([...(await widgets.marks([a.id, c.id])).keys()]).toEqual([a.id]);
    await store.deleteSession(a.id);
    expect(await widgets.owns('v1', 'agent_default', a.id)).toBe(false);
    expect(await widgets.visitorSessions('v1', 'agent_default')).toEqual([]);
  });

  it('lists the idle conversations whose budget cut is stored: not a running, an uncut, an ended or an owner\'s one', async () => {
    const idle = { type: 'session.status_idle', stop_reason: { type: 'end_turn' }, stop_details: null } as const;
    const cutEvents = [{ type: 'user.interrupt' }, { type: 'session.status_running' }] as const;
    const make = async (title: string, widget = true) => {
      const s = await store.createSession({ title });
      if (widget) await widgets.recordSession({ sessionId: s.id, agentId: 'agent_default', origin: DOCS, visitorHash: 'v1' });
      return s.id;
    };
    const [stopped, running, uncut, ended, owners] = [await make('stopped'), await make('running'), await make('uncut'), await make('ended'), await make('owner', false)];
    for (const id of [stopped, running, ended, owners]) await store.emitEvents(id, [...cutEvents], { idempotencyKey: `budget:${id}` });
    for (const id of [stopped, uncut, ended, owners]) await store.emitEvent(id, idle);
    await store.emitEvent(ended, { type: 'session.status_terminated' });
    // Another session's key is not this one's cut.
    await store.emitEvent(uncut, { type: 'user.interrupt' }, { idempotencyKey: `budget:${stopped}` });
    expect(await widgets.cutIdleSessions(10)).toEqual([stopped]);
  });
});
