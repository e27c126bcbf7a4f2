import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDeployment, runDeploymentNow } from '~/server/commands/deployment-commands';
import { createSession, updateSession } from '~/server/commands/session-commands';
import { credentialRefreshFailed } from '~/server/commands/vault-commands';
import { createDemoBrain } from '~/server/harness/demo-brain';
import { testRuntime } from '~/server/harness/testing/test-runtime';
import type { Runtime } from '~/server/runtime';
import { type SqliteSessionStore, openSqliteStore } from '~/server/session/sqlite-store';
import { RETRY_DELAYS_MS, deliverDue, webhookTick } from '~/server/webhooks/webhook-delivery';

/**
 * Webhook deliveries to a real local HTTP server, verified by the official SDK's
 * `client.beta.webhooks.unwrap()` with the secret given at creation; retries on an injected
 * clock; a private address not listed is refused.
 */
let dir: string;
let rt: Runtime;
let db: SqliteSessionStore['db'];
let receiver: http.Server;
let port: number;
let received: Array<{ body: string; headers: Record<string, string> }>;
let failNext: number;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-webhooks-'));
  const store = await openSqliteStore({ file: path.join(dir, 'paddock.sqlite') });
  db = store.db;
  rt = testRuntime({ store, model: createDemoBrain({ chunkDelayMs: 0 }), dataDir: dir });
  await rt.agents.ensureDefaults();
  received = [];
  failNext = 0;
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ body: Buffer.concat(chunks).toString('utf8'), headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])) });
      if (failNext > 0) {
        failNext--;
        res.writeHead(500).end('not now');
      } else res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  port = (receiver.address() as AddressInfo).port;
});

afterEach(async () => {
  await new Promise<void>((r) => receiver.close(() => r()));
  await rt.harness.close();
  await rt.hands.closeAll();
  await rt.store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const listed = { allow: ['127.0.0.1'] };
const sdk = new Anthropic({ apiKey: 'unused' });

describe('webhook deliveries', () => {
  it("delivers a deployment's events signed so the official SDK's unwrap() verifies every one", async () => {
    const endpoint = await rt.webhooks.createEndpoint({ url: `http://127.0.0.1:${port}/hooks`, description: null, event_types: [] });
    expect(endpoint.signing_secret).toMatch(/^whsec_/);
    // Never again: neither a read nor a list shows it.
    expect(JSON.stringify(await rt.webhooks.getEndpoint(endpoint.id))).not.toContain(endpoint.signing_secret);
    expect(JSON.stringify(await rt.webhooks.listEndpoints({ limit: 10 }))).not.toContain(endpoint.signing_secret);
    const dep = await createDeployment(rt, { name: 'Hooked', agent: 'agent_default', environment_id: 'env_default', initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'hi' }] }] });
    const run = await runDeploymentNow(rt, dep.id);
    await deliverDue({ webhooks: rt.webhooks, policy: listed });
    const events = received.map((r) => sdk.beta.webhooks.unwrap(r.body, { headers: r.headers, key: endpoint.signing_secret }));
    expect(events.map((e) => [e.data.type, e.data.id])).toEqual(expect.arrayContaining([['deployment.created', dep.id], ['session.created', run.session_id], ['deployment_run.started', run.id], ['deployment_run.succeeded', run.id]]));
    for (const e of events) expect(e).toMatchObject({ type: 'event', id: expect.stringMatching(/^wevt_/) as string });
    // A body changed on the way, or another key, fails verification.
    expect(() => sdk.beta.webhooks.unwrap(received[0]!.body.replace('"event"', '"evil"'), { headers: received[0]!.headers, key: endpoint.signing_secret })).toThrow();
    // The key is stored sealed: its text is nowhere in the database.
    const rows = await db.selectFrom('webhook_endpoints').selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(endpoint.signing_secret.slice(6));
    const deliveries = (await rt.webhooks.listDeliveries({ limit: 50, endpointId: endpoint.id })).data;
    expect(deliveries.every((d) => d.status === 'succeeded' && d.attempts.length === 1 && d.attempts[0]!.status_code === 204)).toBe(true);
  });

  it("delivers a session's run and update from its log (status_run_started, status_idled, updated) on the ticker's pass, each verified by unwrap()", async () => {
    const endpoint = await rt.webhooks.createEndpoint({ url: `http://127.0.0.1:${port}/hooks`, description: null, event_types: ['session.status_run_started', 'session.status_idled', 'session.running', 'session.idled', 'session.updated'] });
    const session = await createSession(rt, { agent: 'agent_default', environment_id: 'env_default', initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'hi' }] }] });
    for (let i = 0; (await rt.store.getEvents(session.id, { order: 'desc', limit: 1 }))[0]?.type !== 'session.status_idle'; i++) {
      if (i > 400) throw new Error('the session did not go idle');
      await new Promise((r) => setTimeout(r, 25));
    }
    await updateSession(rt, session.id, { title: 'Renamed' });
    await webhookTick({ webhooks: rt.webhooks, policy: listed });
    const events = received.map((r) => sdk.beta.webhooks.unwrap(r.body, { headers: r.headers, key: endpoint.signing_secret }));
    expect(events.map((e) => `${e.data.type} ${e.data.id}`).sort()).toEqual([`session.idled ${session.id}`, `session.running ${session.id}`, `session.status_idled ${session.id}`, `session.status_run_started ${session.id}`, `session.updated ${session.id}`]);
    // Each names the time its log event was stored (a status event stands for two).
    const stored = await rt.store.getEvents(session.id, { types: ['session.status_running', 'session.status_idle', 'session.updated'] });
    expect(events.map((e) => e.created_at).sort()).toEqual(stored.flatMap((e) => (e.type === 'session.updated' ? [e.processed_at] : [e.processed_at, e.processed_at])).sort());
  });

  it('reports each deployment run as started, then succeeded (its session made) or failed (refused), each verified by unwrap()', async () => {
    const endpoint = await rt.webhooks.createEndpoint({ url: `http://127.0.0.1:${port}/hooks`, description: null, event_types: ['deployment_run.started', 'deployment_run.succeeded', 'deployment_run.failed'] });
    const env = await rt.agents.createEnvironment({ name: 'short-lived', config: { type: 'self_hosted' } });
    const dep = await createDeployment(rt, { name: 'Runs', agent: 'agent_default', environment_id: env.id, initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'hi' }] }] });
    const ok = await runDeploymentNow(rt, dep.id);
    await rt.agents.archiveEnvironment(env.id);
    const refused = await runDeploymentNow(rt, dep.id);
    expect(refused.error).toMatchObject({ type: 'environment_archived_error' });
    await deliverDue({ webhooks: rt.webhooks, policy: listed });
    const events = received.map((r) => sdk.beta.webhooks.unwrap(r.body, { headers: r.headers, key: endpoint.signing_secret }));
    const of = (id: string) => events.filter((e) => e.data.id === id).map((e) => e.data.type);
    expect(of(ok.id)).toEqual(['deployment_run.started', 'deployment_run.succeeded']);
    expect(of(refused.id)).toEqual(['deployment_run.started', 'deployment_run.failed']);
  });

  it("reports a credential whose OAuth refresh failed, naming it and its vault only, verified by unwrap()", async () => {
    const endpoint = await rt.webhooks.createEndpoint({ url: `http://127.0.0.1:${port}/hooks`, description: null, event_types: ['vault_credential.refresh_failed'] });
    // What the MCP proxy tells the runtime (server/runtime.ts wires it) when a refresh fails.
    await credentialRefreshFailed(rt, { credentialId: 'vcrd_refresh', vaultId: 'vlt_owner' });
    await deliverDue({ webhooks: rt.webhooks, policy: listed });
    const [event] = received.map((r) => sdk.beta.webhooks.unwrap(r.body, { headers: r.headers, key: endpoint.signing_secret }));
    expect(event?.data).toEqual({ type: 'vault_credential.refresh_failed', id: 'vcrd_refresh', vault_id: 'vlt_owner', organization_id: 'paddock', workspace_id: 'default' });
  });

  it('retries a receiver that fails twice and the third attempt is delivered, with each status code in its log; redelivery sends it again', async () => {
    let t = Date.now() + 1000;
    const now = () => new Date(t);
    const endpoint = await rt.webhooks.createEndpoint({ url: `http://127.0.0.1:${port}/hooks`, description: null, event_types: ['deployment.created'] });
    failNext = 2;
    await createDeployment(rt, { name: 'Flaky', agent: 'agent_default', environment_id: 'env_default', initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'hi' }] }] });
    await deliverDue({ webhooks: rt.webhooks, policy: listed, now });
    // Not before its back-off is over.
    await deliverDue({ webhooks: rt.webhooks, policy: listed, now });
    expect(received).toHaveLength(1);
    t += RETRY_DELAYS_MS[0]!;
    await deliverDue({ webhooks: rt.webhooks, policy: listed, now });
    t += RETRY_DELAYS_MS[1]!;
    await deliverDue({ webhooks: rt.webhooks, policy: listed, now });
    expect(received).toHaveLength(3);
    const [d] = (await rt.webhooks.listDeliveries({ limit: 10, endpointId: endpoint.id })).data;
    expect(d).toMatchObject({ status: 'succeeded', event_type: 'deployment.created' });
    expect(d!.attempts.map((a) => a.status_code)).toEqual([500, 500, 204]);
    // Each attempt verifies (the same event id: a receiver dedupes on it).
    const ids = received.map((r) => sdk.beta.webhooks.unwrap(r.body, { headers: r.headers, key: endpoint.signing_secret }).id);
    expect(new Set(ids).size).toBe(1);
    await rt.webhooks.redeliver(d!.id, now().toISOString());
    await deliverDue({ webhooks: rt.webhooks, policy: listed, now });
    expect(received).toHaveLength(4);
    expect((await rt.webhooks.getDelivery(d!.id)).attempts).toHaveLength(4);
  });

  it('refuses a private address that is not listed, and logs the refusal without sending anything', async () => {
    const endpoint = await rt.webhooks.createEndpoint({ url: `http://127.0.0.1:${port}/hooks`, description: null, event_types: [] });
    await createDeployment(rt, { name: 'Unlisted', agent: 'agent_default', environment_id: 'env_default', initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'hi' }] }] });
    await deliverDue({ webhooks: rt.webhooks, policy: { allow: [] } });
    expect(received).toHaveLength(0);
    const [d] = (await rt.webhooks.listDeliveries({ limit: 10, endpointId: endpoint.id })).data;
    expect(d).toMatchObject({ status: 'pending' });
    expect(d!.attempts).toEqual([expect.objectContaining({ status_code: null, error: expect.stringContaining('refused') as string })]);
  });
});
