import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDemoBrain } from '~/server/harness/demo-brain';
import { testRuntime } from '~/server/harness/testing/test-runtime';
import { handleRest } from '~/server/rest/handler';
import { type FetchServer, serveFetch } from '~/server/rest/testing/serve-fetch';
import type { Runtime } from '~/server/runtime';
import { openSqliteStore } from '~/server/session/sqlite-store';

/** Deployments and their runs through the official SDK against a real /v1 server. */
const KEY = 'pdk_test_key_0123456789abcdef';
let dir: string;
let rt: Runtime;
let server: FetchServer;
let client: Anthropic;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-deployments-sdk-'));
  const store = await openSqliteStore({ file: path.join(dir, 'paddock.sqlite') });
  rt = testRuntime({ store, model: createDemoBrain({ chunkDelayMs: 0 }), dataDir: dir, env: { PADDOCK_API_KEY: KEY } });
  await rt.agents.ensureDefaults();
  server = await serveFetch((req) => handleRest(req, { runtime: () => Promise.resolve(rt), maxBodyBytes: 256 * 1024 }));
  client = new Anthropic({ apiKey: KEY, baseURL: server.url, maxRetries: 0 });
});

afterEach(async () => {
  await server.close();
  await rt.harness.close();
  await rt.hands.closeAll();
  await rt.store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const message = (text: string) => ({ type: 'user.message' as const, content: [{ type: 'text' as const, text }] });

describe('deployments through the official SDK', () => {
  it('creates, retrieves, updates, lists, pauses, runs while paused, unpauses and archives', { timeout: 60_000 }, async () => {
    const budget = { type: 'limit' as const, max_list_cost: { amount: '2500', currency: 'USD' as const } };
    const created = await client.beta.deployments.create({
      name: 'Daily order report',
      agent: 'agent_default',
      environment_id: 'env_default',
      initial_events: [message("Compile yesterday's orders into report.md.")],
      schedule: { type: 'cron', expression: '0 9 * * 1-5', timezone: 'America/Los_Angeles' },
      metadata: { team: 'ops' },
      budget,
    });
    expect(created).toMatchObject({ type: 'deployment', name: 'Daily order report', status: 'active', paused_reason: null, archived_at: null, budget, metadata: { team: 'ops' }, vault_ids: [], resources: [] });
    expect(created.id).toMatch(/^depl_/);
    // Pinned: the agent's version now, not "latest".
    expect(created.agent).toMatchObject({ id: 'agent_default', type: 'agent' });
    expect(typeof created.agent.version).toBe('number');
    expect(created.schedule?.upcoming_runs_at).toHaveLength(5);
    for (const t of created.schedule!.upcoming_runs_at!) expect([16, 17]).toContain(new Date(t).getUTCHours());

    expect(await client.beta.deployments.retrieve(created.id)).toEqual(created);
    const updated = await client.beta.deployments.update(created.id, { name: 'Nightly report', schedule: null, metadata: { team: null, owner: 'me' } });
    expect(updated).toMatchObject({ name: 'Nightly report', schedule: null, metadata: { owner: 'me' } });

    const listed = [];
    for await (const d of client.beta.deployments.list()) listed.push(d.id);
    expect(listed).toEqual([created.id]);

    const paused = await client.beta.deployments.pause(created.id);
    expect(paused).toMatchObject({ status: 'paused', paused_reason: { type: 'manual' } });
    expect((await client.beta.deployments.list({ status: 'active' })).data).toHaveLength(0);

    const run = await client.beta.deployments.run(created.id);
    expect(run).toMatchObject({ type: 'deployment_run', deployment_id: created.id, trigger_context: { type: 'manual' }, error: null, agent: created.agent });
    const session = await client.beta.sessions.retrieve(run.session_id!);
    expect(session).toMatchObject({ budget, metadata: { deployment_id: created.id, deployment_run_id: run.id } });
    expect(await client.beta.deploymentRuns.retrieve(run.id)).toEqual(run);
    expect((await client.beta.deploymentRuns.list({ deployment_id: created.id })).data.map((r) => r.id)).toEqual([run.id]);
    expect((await client.beta.deploymentRuns.list({ deployment_id: created.id, has_error: true })).data).toHaveLength(0);

    expect(await client.beta.deployments.unpause(created.id)).toMatchObject({ status: 'active', paused_reason: null });
    const archived = await client.beta.deployments.archive(created.id);
    expect(archived.archived_at).not.toBeNull();
    expect((await client.beta.deployments.list()).data).toHaveLength(0);
    expect((await client.beta.deployments.list({ include_archived: true })).data).toHaveLength(1);
    await expect(client.beta.deployments.run(created.id)).rejects.toMatchObject({ status: 409 });
  });

  it('refuses a bad schedule, a missing agent and an empty first turn by name, writing nothing', async () => {
    const base = { name: 'x', agent: 'agent_default', environment_id: 'env_default', initial_events: [message('hi')] };
    for (const [body, what] of [
      [{ ...base, schedule: { type: 'cron', expression: '0 0 L * *', timezone: 'UTC' } }, 'schedule.expression'],
      [{ ...base, schedule: { type: 'cron', expression: '* * * * * *', timezone: 'UTC' } }, 'schedule.expression'],
      [{ ...base, schedule: { type: 'cron', expression: '* * * * *', timezone: 'Mars/Olympus' } }, 'schedule.timezone'],
      [{ ...base, initial_events: [] }, 'initial_events'],
    ] as const) {
      const err = await client.beta.deployments.create(body as never).catch((e: unknown) => e);
      expect(err).toMatchObject({ status: 400 });
      expect(String((err as Error).message)).toContain(what);
    }
    await expect(client.beta.deployments.create({ ...base, agent: 'agent_nope' })).rejects.toMatchObject({ status: 404 });
    await expect(client.beta.deployments.retrieve('depl_nope')).rejects.toMatchObject({ status: 400 });
    expect((await client.beta.deployments.list({ include_archived: true })).data).toHaveLength(0);
  });
});
