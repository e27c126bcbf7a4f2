import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { createLocalHandProvisioner } from '~/server/hands/sandbox/provisioner';
import { createAnthropicModel } from '~/server/harness/anthropic-model';
import { type FakeMessagesApi, startFakeMessagesApi } from '~/server/harness/testing/fake-messages-api';
import { type TestRuntimeOptions, testRuntime } from '~/server/harness/testing/test-runtime';
import { handleRest } from '~/server/rest/handler';
import { type FetchServer, serveFetch } from '~/server/rest/testing/serve-fetch';
import type { Runtime } from '~/server/runtime';
import { openSqliteStore } from '~/server/session/sqlite-store';

export const SDK_TEST_KEY = 'pdk_test_key_0123456789abcdef';

export interface SdkServer {
  dir: string;
  rt: Runtime;
  fake: FakeMessagesApi;
  server: FetchServer;
  /** The official SDK, pointed at this /v1 with the test key. */
  client: Anthropic;
  close(): Promise<void>;
}

/**
 * The official SDK against a real /v1 handler on SQLite, the model answered by the fake Messages
 * API over HTTP + SSE: the setup the SDK-level tests share. `sandbox`: a real bubblewrap hand is
 * the session's default.
 */
export async function startSdkServer(o: { name: string; sandbox?: boolean; harness?: TestRuntimeOptions['harness']; maxBodyBytes?: number }): Promise<SdkServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `paddock-${o.name}-`));
  const dataDir = path.join(dir, 'data');
  const store = await openSqliteStore({ file: path.join(dataDir, 'paddock.sqlite') });
  const fake = await startFakeMessagesApi();
  const rt = testRuntime({
    store,
    model: createAnthropicModel({ apiKey: 'test-key', baseURL: fake.url, model: 'claude-fake-test' }),
    dataDir,
    env: { PADDOCK_API_KEY: SDK_TEST_KEY },
    ...(o.sandbox ? { hands: { provisioners: { sandbox: createLocalHandProvisioner({ dataDir, workspacesDir: path.join(dir, 'hands') }) }, defaultKind: 'sandbox' } } : {}),
    harness: { retryBaseMs: 5, ...o.harness },
  });
  await rt.agents.ensureDefaults();
  const maxBodyBytes = o.maxBodyBytes ?? 256 * 1024;
  const server = await serveFetch((req) => handleRest(req, { runtime: () => Promise.resolve(rt), maxBodyBytes }));
  const client = new Anthropic({ apiKey: SDK_TEST_KEY, baseURL: server.url, maxRetries: 0 });
  return {
    dir,
    rt,
    fake,
    server,
    client,
    async close() {
      await server.close();
      await rt.harness.close();
      await rt.hands.closeAll();
      await fake.close();
      await rt.store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
