import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDemoBrain } from '~/server/harness/demo-brain';
import { testRuntime } from '~/server/harness/testing/test-runtime';
import type { CredentialValidation } from '~/server/proxy/mcp-validate';
import { type BearerGate, startBearerGate } from '~/server/proxy/testing/bearer-gate';
import { type EverythingServer, startEverythingServer } from '~/server/proxy/testing/everything-server';
import { handleRest } from '~/server/rest/handler';
import { type FetchServer, serveFetch } from '~/server/rest/testing/serve-fetch';
import type { Runtime } from '~/server/runtime';
import { openSqliteStore } from '~/server/session/sqlite-store';

/**
 * `mcp_oauth_validate` through the official SDK, against server-everything behind a bearer check
 * with an OAuth token endpoint: a good token, a refused one that a refresh recovers (the new token
 * stored), one nothing recovers, a token endpoint that refuses, a server that is not there.
 */

const KEY = 'validate-test-api-key-0123456789';
let dir: string;
let everything: EverythingServer;
let gate: BearerGate;
let rt: Runtime;
let server: FetchServer;
let client: Anthropic;
let wire: string[] = [];
let vaultId: string;

// What the route answers is what the SDK declares (tsc fails here when either drifts).
const sdkShape = (v: CredentialValidation): Anthropic.Beta.Vaults.Credentials.BetaManagedAgentsCredentialValidation => v;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-validate-'));
  everything = await startEverythingServer();
  gate = await startBearerGate({ upstream: everything.base, token: 'good-access-token', refreshToken: 'good-refresh-token' });
  const store = await openSqliteStore({ file: path.join(dir, 'db.sqlite') });
  rt = testRuntime({ store, model: createDemoBrain(), dataDir: dir, env: { PADDOCK_API_KEY: KEY } });
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
  vaultId = (await client.beta.vaults.create({ display_name: 'validate' })).id;
}, 30_000);

afterAll(async () => {
  await server?.close();
  await rt?.harness.close();
  await rt?.store.close();
  await Promise.all([gate?.close(), everything?.close()]);
  fs.rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => {
  wire = [];
});

/** A fresh vault credential for `url` (one live credential per URL in a vault: each case archives its own). */
async function credential(accessToken: string, refreshToken?: string, url = gate.url) {
  const c = await client.beta.vaults.credentials.create(vaultId, {
    auth: {
      type: 'mcp_oauth',
      mcp_server_url: url,
      access_token: accessToken,
      ...(refreshToken ? { refresh: { client_id: 'paddock', refresh_token: refreshToken, token_endpoint: gate.tokenEndpoint, token_endpoint_auth: { type: 'none' } } } : {}),
    },
  });
  return {
    id: c.id,
    validate: async () => sdkShape((await client.beta.vaults.credentials.mcpOAuthValidate(c.id, { vault_id: vaultId }))),
    done: () => client.beta.vaults.credentials.archive(c.id, { vault_id: vaultId }),
  };
}

describe('mcp_oauth_validate', () => {
  it('answers valid for a token the server takes, without refreshing', async () => {
    gate.token = 'good-access-token';
    const c = await credential('good-access-token', gate.refreshToken);
    const before = gate.tokenRequests.length;
    expect(await c.validate()).toMatchObject({ type: 'vault_credential_validation', credential_id: c.id, vault_id: vaultId, status: 'valid', has_refresh_token: true, mcp_probe: null, refresh: null });
    expect(gate.tokenRequests.length).toBe(before);
    await c.done();
  });

  it('refreshes a refused token once, stores the new one sealed, and answers valid', async () => {
    gate.token = 'rotated-away';
    const c = await credential('stale-access-token', gate.refreshToken);
    const v = await c.validate();
    expect(v).toMatchObject({ status: 'valid', mcp_probe: null, refresh: { status: 'succeeded', http_response: null } });
    // The new token was stored: the next validation needs no refresh.
    const before = gate.tokenRequests.length;
    expect(await c.validate()).toMatchObject({ status: 'valid', refresh: null });
    expect(gate.tokenRequests.length).toBe(before);
    expect(wire.join('\n')).not.toContain(gate.token);
    expect(wire.join('\n')).not.toContain(gate.refreshToken);
    await c.done();
  });

  it('answers invalid when the server refuses and there is no refresh token', async () => {
    const c = await credential('refused-token');
    expect(await c.validate()).toMatchObject({ status: 'invalid', has_refresh_token: false, mcp_probe: { method: 'initialize', http_response: null }, refresh: { status: 'no_refresh_token', http_response: null } });
    await c.done();
  });

  it('answers invalid with the token endpoint answer (scrubbed) when the refresh is refused', async () => {
    const c = await credential('refused-token', 'refresh-the-endpoint-does-not-know');
    const v = await c.validate();
    expect(v).toMatchObject({ status: 'invalid', mcp_probe: null, refresh: { status: 'failed', http_response: { status_code: 400, content_type: 'application/json', body_truncated: false } } });
    expect(v.refresh?.http_response?.body).toContain('invalid_grant');
    expect(JSON.stringify(v)).not.toContain('refresh-the-endpoint-does-not-know');
    expect(JSON.stringify(v)).not.toContain('refused-token');
    await c.done();
  });

  it('answers unknown when the server cannot be reached', async () => {
    // Port 9 (discard): nobody listens here.
    const c = await credential('any-token', undefined, 'http://127.0.0.1:9/mcp');
    expect(await c.validate()).toMatchObject({ status: 'unknown', mcp_probe: { method: 'initialize', http_response: null }, refresh: null });
    await c.done();
  });
});
