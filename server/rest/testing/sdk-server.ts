import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { sessionMounts } from '~/server/commands/session-mounts';
import { loadConfig } from '~/server/config';
import { createLocalHandProvisioner } from '~/server/hands/sandbox/provisioner';
import { createAnthropicModel } from '~/server/harness/anthropic-model';
import { type FakeMessagesApi, startFakeMessagesApi } from '~/server/harness/testing/fake-messages-api';
import { type TestRuntimeOptions, testRuntime } from '~/server/harness/testing/test-runtime';
import { handleRest } from '~/server/rest/handler';
import { type FetchServer, serveFetch } from '~/server/rest/testing/serve-fetch';
import { type Runtime, filesFor } from '~/server/runtime';
import { openSqliteStore } from '~/server/session/sqlite-store';

export const SDK_TEST_KEY = 'pdk_test_key_0123456789abcdef';

export interface SdkServer {
  dir: string;
  /** The runtime serving /v1 now (a new one after `restart`). */
  readonly rt: Runtime;
  fake: FakeMessagesApi;
  server: FetchServer;
  /** The official SDK, pointed at this /v1 with the test key. */
  client: Anthropic;
  /** A crash of the server's harness, as another instance sees it: the harness goes (its lease released, nothing more written) and a new runtime on the same database serves /v1. */
  restart(): Promise<Runtime>;
  close(): Promise<void>;
}

export interface SdkServerOptions {
  name: string;
  /** A real bubblewrap hand is the session's default. */
  sandbox?: boolean;
  /** With `sandbox`: the session's files, memory stores and skills mounted in its hands, its outputs kept. */
  mounts?: boolean;
  harness?: TestRuntimeOptions['harness'];
  maxBodyBytes?: number;
}

/**
 * The official SDK against a real /v1 handler on SQLite, the model answered by the fake Messages
 * API over HTTP + SSE: the setup the SDK-level tests share.
 */
export async function startSdkServer(o: SdkServerOptions): Promise<SdkServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `paddock-${o.name}-`));
  const dataDir = path.join(dir, 'data');
  const store = await openSqliteStore({ file: path.join(dataDir, 'paddock.sqlite') });
  const fake = await startFakeMessagesApi();
  // The mounts read the same Files, memory and skills tables as the runtime's own stores.
  const files = o.mounts ? filesFor(loadConfig({ PADDOCK_DATA_DIR: dataDir }), store) : null;
  const hands = (): TestRuntimeOptions['hands'] =>
    o.sandbox
      ? {
          provisioners: { sandbox: createLocalHandProvisioner({ dataDir, workspacesDir: path.join(dir, 'hands') }) },
          defaultKind: 'sandbox',
          ...(files ? { mounts: sessionMounts({ ...files, maxOutputBytes: 1 << 20, attachments: { store, ...files } }) } : {}),
        }
      : undefined;
  const runtime = (): Runtime =>
    testRuntime({
      store,
      model: createAnthropicModel({ apiKey: 'test-key', baseURL: fake.url, model: 'claude-fake-test' }),
      dataDir,
      env: { PADDOCK_API_KEY: SDK_TEST_KEY },
      ...(o.sandbox ? { hands: hands() } : {}),
      harness: { retryBaseMs: 5, ...o.harness },
    });
  let rt = runtime();
  await rt.agents.ensureDefaults();
  const maxBodyBytes = o.maxBodyBytes ?? 256 * 1024;
  const server = await serveFetch((req) => handleRest(req, { runtime: () => Promise.resolve(rt), maxBodyBytes }));
  const client = new Anthropic({ apiKey: SDK_TEST_KEY, baseURL: server.url, maxRetries: 0 });
  return {
    dir,
    get rt() {
      return rt;
    },
    fake,
    server,
    client,
    async restart() {
      const old = rt;
      await old.harness.close();
      rt = runtime();
      await old.hands.closeAll();
      return rt;
    },
    async close() {
      await server.close();
      await rt.harness.close();
      await rt.hands.closeAll();
      await fake.close();
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
