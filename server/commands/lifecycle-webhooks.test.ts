import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OWNER } from '~/server/access/testing/callers';
import { createCaller } from '~/server/api/root';
import { createDemoBrain } from '~/server/harness/demo-brain';
import { testRuntime } from '~/server/harness/testing/test-runtime';
import { handleRest } from '~/server/rest/handler';
import { type FetchServer, serveFetch } from '~/server/rest/testing/serve-fetch';
import type { Runtime } from '~/server/runtime';
import { type SqliteSessionStore, openSqliteStore } from '~/server/session/sqlite-store';

/**
 * Agents', environments', vaults', credentials' and memory stores' lifecycle webhooks: each
 * change through `/v1` and through tRPC queues exactly one delivery per subscribed endpoint (the
 * one command both edges call sends it), naming the subject (and a credential's vault); an
 * endpoint subscribed to other types gets none, and no payload carries a credential's value.
 */
const KEY = 'lifecycle-webhooks-api-key-0123456789';
const TOKEN = 'canary-bearer-token-9f8e7d6c5b4a';
let dir: string;
let rt: Runtime;
let server: FetchServer;
let db: SqliteSessionStore['db'];

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-lifecycle-hooks-'));
  const store = await openSqliteStore({ file: path.join(dir, 'db.sqlite') });
  db = store.db;
  rt = testRuntime({ store, model: createDemoBrain({ chunkDelayMs: 0 }), dataDir: dir, env: { PADDOCK_API_KEY: KEY } });
  await rt.agents.ensureDefaults();
  server = await serveFetch((req) => handleRest(req, { runtime: () => Promise.resolve(rt), maxBodyBytes: 256 * 1024 }));
});

afterEach(async () => {
  await server.close();
  await rt.harness.close();
  await rt.store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

interface Ided {
  id: string;
}

/** The writes a lifecycle needs, through one edge. */
interface Edge {
  createAgent(): Promise<Ided>;
  updateAgent(id: string): Promise<unknown>;
  archiveAgent(id: string): Promise<unknown>;
  createEnvironment(): Promise<Ided>;
  updateEnvironment(id: string): Promise<unknown>;
  archiveEnvironment(id: string): Promise<unknown>;
  deleteEnvironment(id: string): Promise<unknown>;
  createVault(): Promise<Ided>;
  archiveVault(id: string): Promise<unknown>;
  deleteVault(id: string): Promise<unknown>;
  createCredential(vault: string): Promise<Ided>;
  archiveCredential(vault: string, id: string): Promise<unknown>;
  deleteCredential(vault: string, id: string): Promise<unknown>;
  createStore(): Promise<Ided>;
  archiveStore(id: string): Promise<unknown>;
  deleteStore(id: string): Promise<unknown>;
}

const credentialAuth = { type: 'static_bearer' as const, mcp_server_url: 'https://mcp.example.com/mcp', token: TOKEN };
const environmentConfig = { type: 'cloud' as const, networking: { type: 'limited' as const, allowed_hosts: [] } };

async function call<T>(method: 'POST' | 'DELETE', p: string, body?: object): Promise<T> {
  const res = await fetch(`${server.url}/v1/${p}`, { method, headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined });
  if (res.status !== 200) throw new Error(`${method} ${p}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

const rest: Edge = {
  createAgent: () => call('POST', 'agents', { name: 'hooked', model: 'claude-sonnet-5-5' }),
  updateAgent: (id) => call('POST', `agents/${id}`, { system: 'be brief' }),
  archiveAgent: (id) => call('POST', `agents/${id}/archive`),
  createEnvironment: () => call('POST', 'environments', { name: 'hooked', config: environmentConfig }),
  updateEnvironment: (id) => call('POST', `environments/${id}`, { description: 'changed' }),
  archiveEnvironment: (id) => call('POST', `environments/${id}/archive`),
  deleteEnvironment: (id) => call('DELETE', `environments/${id}`),
  createVault: () => call('POST', 'vaults', { display_name: 'hooked' }),
  archiveVault: (id) => call('POST', `vaults/${id}/archive`),
  deleteVault: (id) => call('DELETE', `vaults/${id}`),
  createCredential: (vault) => call('POST', `vaults/${vault}/credentials`, { auth: credentialAuth }),
  archiveCredential: (vault, id) => call('POST', `vaults/${vault}/credentials/${id}/archive`),
  deleteCredential: (vault, id) => call('DELETE', `vaults/${vault}/credentials/${id}`),
  createStore: () => call('POST', 'memory_stores', { name: 'hooked' }),
  archiveStore: (id) => call('POST', `memory_stores/${id}/archive`),
  deleteStore: (id) => call('DELETE', `memory_stores/${id}`),
};

const trpc = (): Edge => {
  const api = createCaller({ runtime: rt, caller: OWNER });
  return {
    createAgent: () => api.agents.create({ name: 'hooked', model: 'claude-sonnet-5-5' }),
    updateAgent: (id) => api.agents.update({ id, system: 'be brief' }),
    archiveAgent: (id) => api.agents.archive({ id }),
    createEnvironment: () => api.environments.create({ name: 'hooked', config: environmentConfig }),
    updateEnvironment: (id) => api.environments.update({ id, description: 'changed' }),
    archiveEnvironment: (id) => api.environments.archive({ id }),
    deleteEnvironment: (id) => api.environments.delete({ id }),
    createVault: () => api.vaults.create({ display_name: 'hooked' }),
    archiveVault: (id) => api.vaults.archive({ id }),
    deleteVault: (id) => api.vaults.delete({ id }),
    createCredential: (vaultId) => api.vaults.addCredential({ vaultId, auth: credentialAuth }),
    archiveCredential: (vaultId, id) => api.vaults.archiveCredential({ vaultId, id }),
    deleteCredential: (vaultId, id) => api.vaults.deleteCredential({ vaultId, id }),
    createStore: () => api.memoryStores.create({ name: 'hooked' }),
    archiveStore: (id) => api.memoryStores.archive({ id }),
    deleteStore: (id) => api.memoryStores.delete({ id }),
  };
};

/** Every lifecycle change once (archives twice: the second changes nothing), and what each should send. */
async function lifecycle(edge: Edge): Promise<string[]> {
  const agent = await edge.createAgent();
  await edge.updateAgent(agent.id);
  await edge.archiveAgent(agent.id);
  await edge.archiveAgent(agent.id);
  const env = await edge.createEnvironment();
  await edge.updateEnvironment(env.id);
  await edge.archiveEnvironment(env.id);
  await edge.archiveEnvironment(env.id);
  await edge.deleteEnvironment(env.id);
  const vault = await edge.createVault();
  const cred = await edge.createCredential(vault.id);
  await edge.archiveCredential(vault.id, cred.id);
  await edge.archiveCredential(vault.id, cred.id);
  const cred2 = await edge.createCredential(vault.id);
  await edge.deleteCredential(vault.id, cred2.id);
  await edge.archiveVault(vault.id);
  await edge.archiveVault(vault.id);
  await edge.deleteVault(vault.id);
  const store = await edge.createStore();
  await edge.archiveStore(store.id);
  await edge.archiveStore(store.id);
  await edge.deleteStore(store.id);
  const inVault = (id: string) => `${id} in ${vault.id}`;
  return [
    `agent.created ${agent.id}`,
    `agent.updated ${agent.id}`,
    `agent.archived ${agent.id}`,
    `environment.created ${env.id}`,
    `environment.updated ${env.id}`,
    `environment.archived ${env.id}`,
    `environment.deleted ${env.id}`,
    `vault.created ${vault.id}`,
    `vault_credential.created ${inVault(cred.id)}`,
    `vault_credential.archived ${inVault(cred.id)}`,
    `vault_credential.created ${inVault(cred2.id)}`,
    `vault_credential.deleted ${inVault(cred2.id)}`,
    `vault.archived ${vault.id}`,
    `vault.deleted ${vault.id}`,
    `memory_store.created ${store.id}`,
    `memory_store.archived ${store.id}`,
    `memory_store.deleted ${store.id}`,
  ];
}

interface Payload {
  id: string;
  type: string;
  data: { id: string; type: string; vault_id?: string };
}

/** An endpoint's queued event types, oldest first, as the API lists them. */
async function queued(endpointId: string): Promise<string[]> {
  const rows = await rt.webhooks.listDeliveries({ limit: 100, endpointId });
  return rows.data.reverse().map((d) => {
    expect(d.status).toBe('pending');
    return d.event_type;
  });
}

/** An endpoint's queued payloads, oldest first (delivery ids are monotonic). */
async function payloads(endpointId: string): Promise<Payload[]> {
  const rows = await db.selectFrom('webhook_deliveries').select(['payload', 'event_type']).where('endpoint_id', '=', endpointId).orderBy('id').execute();
  return rows.map((r) => {
    const p = JSON.parse(r.payload) as Payload;
    expect(p.data.type).toBe(r.event_type);
    return p;
  });
}

const described = (p: Payload) => `${p.data.type} ${p.data.id}${p.data.vault_id ? ` in ${p.data.vault_id}` : ''}`;

describe('lifecycle webhooks for agents, environments, vaults, credentials and memory stores', () => {
  it.each([
    ['/v1', () => rest],
    ['tRPC', trpc],
  ] as const)('through %s, each change queues one event naming its subject, and an archive of an archived one queues none', async (_edge, edge) => {
    const all = await rt.webhooks.createEndpoint({ url: 'https://hooks.example.com/all', description: null, event_types: [] });
    const expected = await lifecycle(edge());
    const sent = await payloads(all.id);
    expect(sent.map(described)).toEqual(expected);
    expect(await queued(all.id)).toEqual(expected.map((e) => e.split(' ')[0]));
    expect(sent.every((p) => p.type === 'event' && /^wevt_/.test(p.id))).toBe(true);
    // Ids only: a credential's value is in no payload.
    expect(JSON.stringify(sent)).not.toContain(TOKEN);
  });

  it('sends an endpoint only the types it subscribed to, and one subscribed to other types none', async () => {
    const vaults = await rt.webhooks.createEndpoint({ url: 'https://hooks.example.com/vaults', description: null, event_types: ['vault.created', 'vault_credential.archived'] });
    const others = await rt.webhooks.createEndpoint({ url: 'https://hooks.example.com/others', description: null, event_types: ['deployment.created', 'session.created'] });
    await lifecycle(rest);
    expect(await queued(vaults.id)).toEqual(['vault.created', 'vault_credential.archived']);
    expect(await queued(others.id)).toEqual([]);
  });

  it('queues nothing for a change that is refused', async () => {
    const all = await rt.webhooks.createEndpoint({ url: 'https://hooks.example.com/all', description: null, event_types: [] });
    await expect(rest.archiveAgent('agent_default')).rejects.toThrow(/409/);
    await expect(rest.deleteEnvironment('env_00000000000000000000000000')).rejects.toThrow(/404/);
    await expect(rest.createCredential('vlt_00000000000000000000000000')).rejects.toThrow(/404/);
    await expect(rest.archiveStore('memstore_00000000000000000000000000')).rejects.toThrow(/404/);
    expect(await queued(all.id)).toEqual([]);
  });
});
