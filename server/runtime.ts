import 'server-only';
import fs from 'node:fs';
import path from 'node:path';
import { type Config, loadConfig } from '~/server/config';
import { HandRegistry } from '~/server/hands/registry';
import { createAnthropicModel } from '~/server/harness/anthropic-model';
import { createDemoBrain } from '~/server/harness/demo-brain';
import { Harness } from '~/server/harness/harness';
import { LiveBus } from '~/server/harness/live-bus';
import type { ModelClient } from '~/server/harness/model-client';
import { logger } from '~/server/log';
import { openSqliteStore } from '~/server/session/sqlite-store';
import type { SessionStore } from '~/server/session/store';

const log = logger('runtime');

export interface Runtime {
  config: Config;
  store: SessionStore;
  harness: Harness;
  live: LiveBus;
  hands: HandRegistry;
}

/**
 * Process-wide singletons live on globalThis: Next loads `instrumentation.ts` and route handlers
 * as separate module instances in one process, and a module-level variable would give us two
 * SQLite connections and two sweepers.
 */
const KEY = Symbol.for('paddock.runtime');
type Holder = { [KEY]?: Promise<Runtime> };

export function getRuntime(): Promise<Runtime> {
  const g = globalThis as Holder;
  g[KEY] ??= startRuntime().catch((e: unknown) => {
    delete g[KEY];
    throw e;
  });
  return g[KEY];
}

export function modelFromConfig(config: Config): ModelClient {
  if (config.brain === 'demo') return createDemoBrain();
  return createAnthropicModel({
    ...(config.ANTHROPIC_API_KEY ? { apiKey: config.ANTHROPIC_API_KEY } : {}),
    ...(config.ANTHROPIC_AUTH_TOKEN ? { authToken: config.ANTHROPIC_AUTH_TOKEN } : {}),
    ...(config.ANTHROPIC_BASE_URL ? { baseURL: config.ANTHROPIC_BASE_URL } : {}),
    model: config.PADDOCK_MODEL,
  });
}

async function startRuntime(): Promise<Runtime> {
  const config = loadConfig();
  fs.mkdirSync(config.dataDir, { recursive: true });
  const store = await openSqliteStore({ file: path.join(config.dataDir, 'paddock.sqlite') });
  const live = new LiveBus();
  const hands = new HandRegistry();
  const model = modelFromConfig(config);
  const harness = new Harness({
    store,
    model,
    hands,
    live,
    maxTokens: config.PADDOCK_MAX_TOKENS,
    leaseTtlMs: config.PADDOCK_LEASE_TTL_MS,
    maxRetries: config.PADDOCK_MODEL_RETRIES,
    retryBaseMs: config.PADDOCK_RETRY_BASE_MS,
  });
  harness.startSweeper(config.PADDOCK_SWEEP_MS);
  log.info('paddock started', { dataDir: config.dataDir, brain: config.brain, model: model.label });
  return { config, store, harness, live, hands };
}
