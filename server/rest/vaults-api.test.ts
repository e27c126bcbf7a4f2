import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createDemoBrain } from '~/server/harness/demo-brain';
import { testRuntime } from '~/server/harness/testing/test-runtime';
import { handleRest } from '~/server/rest/handler';
import { type FetchServer, serveFetch } from '~/server/rest/testing/serve-fetch';
import type { Credential, Vault } from '~/lib/vault';
import type { Runtime } from '~/server/runtime';
import { openSqliteStore } from '~/server/session/sqlite-store';

const KEY = 'test-api-key-0123456789';
const CANARY = 'CANARY-5b1e-vault-value';
const canary = (n: string) => `${CANARY}-${n}`;

let dir: string;
let rt: Runtime;
let server: FetchServer;
let client: Anthropic;
/** Every response body the SDK read, as sent on the wire. */
let wire: string[];
/** Everything the server wrote to stdout and stderr (its log at debug level). */
let logged: string[];
let prevLevel: string | undefined;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-vault-api-'));
  wire = [];
  logged = [];
  prevLevel = process.env.PADDOCK_LOG_LEVEL;
  process.env.PADDOCK_LOG_LEVEL = 'debug';
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream);
    vi.spyOn(stream, 'write').mockImplementation(((chunk: string | Uint8Array, ...rest: unknown[]) => {
      logged.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
    }));
  }
  const store = await openSqliteStore({ file: path.join(dir, 'db.sqlite') });
  rt = testRuntime({ store, model: createDemoBrain(), dataDir: dir, env: { PADDOCK_API_KEY: KEY } });
  await rt.agents.ensureDefaults();
  server = await serveFetch((req) => handleRest(req, { runtime: () => Promise.resolve(rt), maxBodyBytes: 256 * 1024 }));
  client = new Anthropic({
    apiKey: KEY,
    baseURL: server.url,
    maxRetries: 0,
    fetch: async (url: string | URL | Request, init?: RequestInit) => {
      const res = await fetch(url, init);
      wire.push(await res.clone().text());
      return res;
    },
  });
});

afterEach(async () => {
  vi.restoreAllMocks();
  if (prevLevel === undefined) delete process.env.PADDOCK_LOG_LEVEL;
  else process.env.PADDOCK_LOG_LEVEL = prevLevel;
  await server.close();
  await rt.harness.close();
  await rt.store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

// What the store answers is what the SDK declares (tsc fails here when either drifts).
const sdkVault = (v: Vault): Anthropic.Beta.Vaults.BetaManagedAgentsVault => v;
const sdkCredential = (c: Credential): Anthropic.Beta.Vaults.Credentials.BetaManagedAgentsCredential => c;

async function apiError(p: Promise<unknown>): Promise<{ status: number; type: string; message: string }> {
  try {
    await p;
  } catch (e) {
    if (e instanceof Anthropic.APIError) {
      const body = e.error as { error?: { type?: string; message?: string } } | undefined;
      const status = Number(e.status);
      return { status, type: body?.error?.type ?? '', message: body?.error?.message ?? '' };
    }
    throw e;
  }
  throw new Error('expected an API error');
}

describe('/v1/vaults through the official SDK', () => {
  it('creates, retrieves, updates, pages, archives and deletes vaults', async () => {
    const a = await client.beta.vaults.create({ display_name: 'Team A', metadata: { team: 'a' } });
    expect(a).toMatchObject({ type: 'vault', display_name: 'Team A', metadata: { team: 'a' }, archived_at: null });
    expect(a.id).toMatch(/^vlt_/);
    const b = await client.beta.vaults.create({ display_name: 'Team B' });
    expect(await client.beta.vaults.retrieve(a.id)).toEqual(a);
    expect(sdkVault(await rt.vaults.getVault(a.id))).toEqual(a);
    expect(Object.keys(a).sort()).toEqual(['archived_at', 'created_at', 'display_name', 'id', 'metadata', 'type', 'updated_at']);
    expect(await client.beta.vaults.update(a.id, { display_name: 'Team A2', metadata: { team: null, x: 'y' } })).toMatchObject({ display_name: 'Team A2', metadata: { x: 'y' } });
    const seen: string[] = [];
    for await (const v of client.beta.vaults.list({ limit: 1 })) seen.push(v.id);
    expect(seen).toEqual([b.id, a.id]);
    expect((await client.beta.vaults.archive(b.id)).archived_at).not.toBeNull();
    expect((await client.beta.vaults.list()).data.map((v) => v.id)).toEqual([a.id]);
    expect((await client.beta.vaults.list({ include_archived: true })).data).toHaveLength(2);
    expect(await client.beta.vaults.delete(b.id)).toEqual({ id: b.id, type: 'vault_deleted' });
    expect(await apiError(client.beta.vaults.retrieve(b.id))).toMatchObject({ status: 404, type: 'not_found_error' });
  });

  it('never answers a credential value: not in responses, pages, errors or the server log', async () => {
    const v = await client.beta.vaults.create({ display_name: 'secrets' });
    const bearer = await client.beta.vaults.credentials.create(v.id, { display_name: 'gh', auth: { type: 'static_bearer', mcp_server_url: 'https://mcp.example.com/mcp', token: canary('bearer') } });
    expect(bearer).toMatchObject({ type: 'vault_credential', vault_id: v.id, display_name: 'gh', auth: { type: 'static_bearer', mcp_server_url: 'https://mcp.example.com/mcp' } });
    expect(bearer.id).toMatch(/^vcrd_/);
    const oauth = await client.beta.vaults.credentials.create(v.id, {
      auth: {
        type: 'mcp_oauth',
        mcp_server_url: 'https://linear.example.com/mcp',
        access_token: canary('access'),
        expires_at: '2030-01-01T00:00:00Z',
        refresh: { client_id: 'c1', refresh_token: canary('refresh'), token_endpoint: 'https://auth.example.com/token', token_endpoint_auth: { type: 'client_secret_basic', client_secret: canary('client') } },
      },
    });
    expect(oauth.auth).toEqual({ type: 'mcp_oauth', mcp_server_url: 'https://linear.example.com/mcp', expires_at: '2030-01-01T00:00:00Z', refresh: { client_id: 'c1', token_endpoint: 'https://auth.example.com/token', token_endpoint_auth: { type: 'client_secret_basic' }, resource: null, scope: null } });
    const env = await client.beta.vaults.credentials.create(v.id, { auth: { type: 'environment_variable', secret_name: 'STRIPE_KEY', secret_value: canary('env'), networking: { type: 'limited', allowed_hosts: ['api.stripe.com'] }, injection_location: { header: true } } });
    expect(env.auth).toEqual({ type: 'environment_variable', secret_name: 'STRIPE_KEY', networking: { type: 'limited', allowed_hosts: ['api.stripe.com'] }, injection_location: { header: true, body: false } });

    expect(await client.beta.vaults.credentials.retrieve(bearer.id, { vault_id: v.id })).toEqual(bearer);
    expect(sdkCredential(await rt.vaults.getCredential(v.id, bearer.id))).toEqual(bearer);
    expect(Object.keys(bearer).sort()).toEqual(['archived_at', 'auth', 'created_at', 'display_name', 'id', 'metadata', 'type', 'updated_at', 'vault_id']);
    const updated = await client.beta.vaults.credentials.update(bearer.id, { vault_id: v.id, auth: { type: 'static_bearer', token: canary('bearer2') }, metadata: { k: 'v' } });
    expect(updated).toMatchObject({ metadata: { k: 'v' }, auth: { type: 'static_bearer', mcp_server_url: 'https://mcp.example.com/mcp' } });
    const ids: string[] = [];
    for await (const c of client.beta.vaults.credentials.list(v.id, { limit: 2 })) ids.push(c.id);
    expect(ids).toEqual([env.id, oauth.id, bearer.id]);

    // Errors, each carrying a canary in what was sent.
    expect(await apiError(client.beta.vaults.credentials.create(v.id, { auth: { type: 'static_bearer', mcp_server_url: 'https://mcp.example.com/mcp', token: canary('dup') } }))).toMatchObject({
      status: 409,
      type: 'conflict_error',
      message: expect.stringContaining('mcp_server_url https://mcp.example.com/mcp') as unknown,
    });
    expect(await apiError(client.beta.vaults.credentials.create(v.id, { auth: { type: 'static_bearer', mcp_server_url: 'ftp://mcp.example.com', token: canary('badurl') } }))).toMatchObject({ status: 400, type: 'invalid_request_error', message: expect.stringContaining('mcp_server_url') as unknown });
    expect(await apiError(client.beta.vaults.credentials.create(v.id, { auth: { type: 'static_bearer', mcp_server_url: `https://u:${canary('inurl')}@mcp.example.com`, token: 't' } }))).toMatchObject({ status: 400 });
    expect(await apiError(client.beta.vaults.credentials.update(bearer.id, { vault_id: v.id, auth: { type: 'environment_variable', secret_value: canary('wrongtype') } }))).toMatchObject({ status: 400, message: expect.stringContaining('type cannot change') as unknown });
    expect(await apiError(client.beta.vaults.credentials.create(v.id, { auth: { type: 'static_bearer', mcp_server_url: 'https://x.example.com', token: canary('long').repeat(2_000) } }))).toMatchObject({ status: 400 });
    expect(await apiError(client.beta.vaults.credentials.create('vlt_nope', { auth: { type: 'static_bearer', mcp_server_url: 'https://x.example.com', token: canary('novault') } }))).toMatchObject({ status: 404, type: 'not_found_error' });
    expect(await apiError(client.beta.vaults.credentials.retrieve('vcrd_nope', { vault_id: v.id }))).toMatchObject({ status: 404 });
    expect(await apiError(client.beta.vaults.credentials.retrieve(bearer.id, { vault_id: 'vlt_other' }))).toMatchObject({ status: 404 });
    expect(await apiError(client.beta.vaults.credentials.mcpOAuthValidate(bearer.id, { vault_id: v.id }))).toMatchObject({ status: 400, type: 'invalid_request_error', message: expect.stringContaining('only mcp_oauth credentials are validated') as unknown });
    expect(await apiError(client.beta.vaults.credentials.mcpOAuthValidate('vcrd_nope', { vault_id: v.id }))).toMatchObject({ status: 404 });

    expect((await client.beta.vaults.credentials.archive(oauth.id, { vault_id: v.id })).archived_at).not.toBeNull();
    expect(await client.beta.vaults.credentials.delete(env.id, { vault_id: v.id })).toEqual({ id: env.id, type: 'vault_credential_deleted' });
    expect((await client.beta.vaults.credentials.list(v.id, { include_archived: true })).data.map((c) => c.id)).toEqual([oauth.id, bearer.id]);

    expect(wire.length).toBeGreaterThan(15);
    expect(wire.join('\n')).toContain('STRIPE_KEY'); // the capture sees the bodies
    expect(wire.join('\n')).not.toContain(CANARY);
    expect(logged.join('')).toContain(bearer.id); // the capture sees the log
    expect(logged.join('')).not.toContain(CANARY);
    // The values are there, sealed, for the MCP proxy.
    expect(await rt.vaultSecrets.mcpSecret([v.id], 'https://mcp.example.com/mcp')).toMatchObject({ token: canary('bearer2') });
  });

  it('creates a session only with vaults that exist and are not archived, writing nothing otherwise', async () => {
    const v = await client.beta.vaults.create({ display_name: 'ok' });
    const gone = await client.beta.vaults.create({ display_name: 'gone' });
    await client.beta.vaults.archive(gone.id);
    const before = (await client.beta.sessions.list()).data.length;
    expect(await apiError(client.beta.sessions.create({ agent: 'agent_default', environment_id: 'env_default', vault_ids: [v.id, 'vlt_missing'] }))).toMatchObject({ status: 400, message: expect.stringContaining('vlt_missing') as unknown });
    expect(await apiError(client.beta.sessions.create({ agent: 'agent_default', environment_id: 'env_default', vault_ids: [gone.id] }))).toMatchObject({ status: 400, message: expect.stringContaining(`${gone.id} is archived`) as unknown });
    expect((await client.beta.sessions.list()).data.length).toBe(before);
    const s = await client.beta.sessions.create({ agent: 'agent_default', environment_id: 'env_default', vault_ids: [v.id] });
    expect(s.vault_ids).toEqual([v.id]);
  });
});
