import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type DeploymentDeps, createDeployment, pauseDeployment, runDeploymentNow, unpauseDeployment } from '~/server/commands/deployment-commands';
import { schedulerTick } from '~/server/commands/deployment-scheduler';
import { createDemoBrain } from '~/server/harness/demo-brain';
import { testRuntime } from '~/server/harness/testing/test-runtime';
import type { Runtime } from '~/server/runtime';
import { openPostgresStore } from '~/server/session/postgres-store';
import { openSqliteStore } from '~/server/session/sqlite-store';
import { type TestDatabase, createTestDatabase } from '~/server/session/testing/pg-test-db';

/**
 * The scheduler on real databases with an injected clock (minutes pass in a loop, not in real
 * time): one run per scheduled time across two instances on one PostgreSQL and a restart, and the
 * documented rule for times missed while every instance was down (coalesced into one run, for the
 * newest).
 */
let pg: TestDatabase | null = null;
let dir: string;
const open: Runtime[] = [];

beforeAll(async () => {
  pg = await createTestDatabase('paddock_deployments');
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-deployments-'));
});

afterEach(async () => {
  for (const rt of open.splice(0)) await close(rt);
});

afterAll(async () => {
  await pg?.drop();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function close(rt: Runtime) {
  await rt.harness.close();
  await rt.hands.closeAll();
  await rt.store.close();
}

async function instance(kind: 'postgres' | 'sqlite' = 'postgres'): Promise<Runtime> {
  const store = kind === 'postgres' ? await openPostgresStore({ url: pg!.url }) : await openSqliteStore({ file: path.join(dir, `s-${open.length}-${Date.now()}.sqlite`) });
  const rt = testRuntime({ store, model: createDemoBrain({ chunkDelayMs: 0 }), dataDir: dir });
  await rt.agents.ensureDefaults();
  open.push(rt);
  return rt;
}

/** A clock the test moves: a minute passes when the test says so. */
function clock(start: string) {
  let t = new Date(start).getTime();
  return { now: () => new Date(t), set: (iso: string) => (t = new Date(iso).getTime()), advance: (ms: number) => (t += ms) };
}

const with_ = (rt: Runtime, c: { now: () => Date }): DeploymentDeps => ({ ...rt, now: c.now });
const everyMinute = { name: 'Every minute', agent: 'agent_default', environment_id: 'env_default', initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'tick' }] }], schedule: { type: 'cron', expression: '* * * * *', timezone: 'UTC' } };

async function scheduledRuns(rt: Runtime, deploymentId: string) {
  const runs = [];
  let page: string | undefined;
  do {
    const p = await rt.deployments.listRuns({ limit: 100, page, deploymentId, triggerType: 'schedule' });
    runs.push(...p.data);
    page = p.next_page ?? undefined;
  } while (page);
  return runs.map((r) => (r.trigger_context.type === 'schedule' ? r.trigger_context.scheduled_at : '')).sort();
}

describe('the deployment scheduler', () => {
  it('fires one run per minute across two instances on one PostgreSQL and a restart', { timeout: 120_000 }, async () => {
    // Start a little after a real "now" so runs claimed are never taken for unfinished ones.
    const c = clock(new Date(Math.ceil(Date.now() / 60_000) * 60_000 + 10_000).toISOString());
    const a = await instance();
    let b = await instance();
    const dep = await createDeployment(with_(a, c), everyMinute);
    const start = c.now().getTime();
    const expected: string[] = [];
    for (let minute = 1; minute <= 6; minute++) {
      c.set(new Date(start + minute * 60_000).toISOString());
      expected.push(new Date(Math.floor(c.now().getTime() / 60_000) * 60_000).toISOString());
      // Both instances tick at the same moment, twice each: the database decides who fires.
      await Promise.all([schedulerTick(with_(a, c)), schedulerTick(with_(b, c)), schedulerTick(with_(a, c)), schedulerTick(with_(b, c))]);
      if (minute === 3) {
        // A restart: one instance goes, a new one (same database) takes its place.
        open.splice(open.indexOf(b), 1);
        await close(b);
        b = await instance();
      }
    }
    expect(await scheduledRuns(a, dep.id)).toEqual(expected);
    const runs = (await a.deployments.listRuns({ limit: 100, deploymentId: dep.id })).data;
    // Each with its session, which got the deployment's initial event.
    for (const r of runs) {
      expect(r.error).toBeNull();
      const events = await a.store.getEvents(r.session_id!, { types: ['user.message'] });
      expect(events).toHaveLength(1);
    }
    expect((await a.deployments.get(dep.id)).last_run_at).toBe(c.now().toISOString());
  });

  it('coalesces times missed while every instance was down into one run, for the newest', { timeout: 60_000 }, async () => {
    const c = clock(new Date(Math.ceil(Date.now() / 60_000) * 60_000 + 5_000).toISOString());
    const a = await instance();
    const dep = await createDeployment(with_(a, c), everyMinute);
    const start = c.now().getTime();
    c.set(new Date(start + 60_000).toISOString());
    await schedulerTick(with_(a, c));
    // Down for seven minutes: the next tick is the first since.
    c.set(new Date(start + 8 * 60_000 + 20_000).toISOString());
    await schedulerTick(with_(a, c));
    await schedulerTick(with_(a, c));
    const minute = (n: number) => new Date(Math.floor((start + n * 60_000) / 60_000) * 60_000).toISOString();
    expect(await scheduledRuns(a, dep.id)).toEqual([minute(1), minute(8)]);
    // And the schedule goes on from there.
    c.set(new Date(start + 9 * 60_000).toISOString());
    await schedulerTick(with_(a, c));
    expect(await scheduledRuns(a, dep.id)).toEqual([minute(1), minute(8), minute(9)]);
  });

  it('fires nothing while paused, resumes from the unpause, and runs by hand while paused', { timeout: 60_000 }, async () => {
    const c = clock(new Date(Math.ceil(Date.now() / 60_000) * 60_000 + 5_000).toISOString());
    const a = await instance('sqlite');
    const dep = await createDeployment(with_(a, c), everyMinute);
    const start = c.now().getTime();
    await pauseDeployment(with_(a, c), dep.id);
    c.set(new Date(start + 3 * 60_000).toISOString());
    await schedulerTick(with_(a, c));
    expect(await scheduledRuns(a, dep.id)).toEqual([]);
    const manual = await runDeploymentNow(with_(a, c), dep.id);
    expect(manual).toMatchObject({ trigger_context: { type: 'manual' }, error: null });
    expect(manual.session_id).toMatch(/^sesn_/);
    await unpauseDeployment(with_(a, c), dep.id);
    await schedulerTick(with_(a, c));
    expect(await scheduledRuns(a, dep.id)).toEqual([]);
    c.set(new Date(start + 4 * 60_000).toISOString());
    await schedulerTick(with_(a, c));
    expect(await scheduledRuns(a, dep.id)).toEqual([new Date(Math.floor((start + 4 * 60_000) / 60_000) * 60_000).toISOString()]);
  });

  it('records a failed fire as a run with its error and pauses a schedule that would fail again', { timeout: 60_000 }, async () => {
    const c = clock(new Date(Math.ceil(Date.now() / 60_000) * 60_000 + 5_000).toISOString());
    const a = await instance('sqlite');
    const env = await a.agents.createEnvironment({ name: `doomed-${Date.now()}`, config: { type: 'cloud', networking: { type: 'limited', allowed_hosts: [] } } });
    const dep = await createDeployment(with_(a, c), { ...everyMinute, environment_id: env.id });
    await a.agents.archiveEnvironment(env.id);
    c.advance(60_000);
    await schedulerTick(with_(a, c));
    const [run] = (await a.deployments.listRuns({ limit: 10, deploymentId: dep.id })).data;
    expect(run).toMatchObject({ session_id: null, error: { type: 'environment_archived_error' } });
    expect((await a.deployments.get(dep.id)).paused_reason).toEqual({ type: 'error', error: { type: 'environment_archived_error' } });
  });
});
