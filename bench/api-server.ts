import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { type Config, loadConfig } from '~/server/config';
import { createAnthropicModel } from '~/server/harness/anthropic-model';
import { Harness } from '~/server/harness/harness';
import { type RecordedRequest, type ScriptedResponse, startFakeMessagesApi } from '~/server/harness/testing/fake-messages-api';
import { handleRest } from '~/server/rest/handler';
import { serveFetch } from '~/server/rest/testing/serve-fetch';
import { type Runtime, accessFor, agentsFor, createHands, filesFor, repositoriesFor, vaultsFor, webhooksFor, workFor } from '~/server/runtime';
import { LiveBus } from '~/server/session/live-bus';
import { openSqliteStore } from '~/server/session/sqlite-store';
import type { SessionStore } from '~/server/session/store';

const KEY = 'bench-api-key-0123456789abcdef';

export interface ApiServer {
  client: Anthropic;
  config: Config;
  store: SessionStore;
  close: () => Promise<void>;
}

/**
 * Paddock's /v1 as a program meets it, for the benches: SQLite, sandbox hands by default, the
 * harness on a fake Messages API answering by `script`, the official SDK as the client.
 */
export async function startApiServer(name: string, script: (req: RecordedRequest) => ScriptedResponse, clientOptions: { maxRetries?: number; timeout?: number } = {}): Promise<ApiServer> {
  const dir = mkdtempSync(path.join(os.tmpdir(), `paddock-bench-${name}-`));
  const fake = await startFakeMessagesApi({ fallback: script });
  const config = loadConfig({ ...process.env, PADDOCK_DATA_DIR: dir, PADDOCK_API_KEY: KEY });
  const store = await openSqliteStore({ file: path.join(dir, 'paddock.sqlite') });
  const live = new LiveBus();
  const agents = agentsFor(config, store);
  await agents.ensureDefaults();
  const hands = createHands(config, store, live, agents);
  const harness = new Harness({ store, live, hands, model: createAnthropicModel({ apiKey: 'fake', baseURL: fake.url, model: 'claude-sonnet-5-5' }), leaseTtlMs: config.PADDOCK_LEASE_TTL_MS });
  const vaults = vaultsFor(config, store);
  const access = accessFor(config, store);
  const rt: Runtime = { config, store, live, hands, harness, access, agents, work: workFor(config, store, agents, access, (id) => void harness.wake(id)), vaults: vaults.vaults, vaultSecrets: vaults.vaultSecrets, repositories: repositoriesFor(store, vaults.masterKey), webhooks: webhooksFor(store, vaults.masterKey), gitProxy: null, ...filesFor(config, store) };
  const server = await serveFetch((req) => handleRest(req, { runtime: () => Promise.resolve(rt), maxBodyBytes: config.PADDOCK_MAX_BODY_BYTES, maxUploadBytes: config.PADDOCK_MAX_UPLOAD_BYTES }));
  const client = new Anthropic({ apiKey: KEY, baseURL: server.url, maxRetries: clientOptions.maxRetries ?? 0, ...(clientOptions.timeout ? { timeout: clientOptions.timeout } : {}) });
  return {
    client,
    config,
    store,
    close: async () => {
      await server.close();
      await harness.close();
      await hands.closeAll();
      await store.close();
      await fake.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
