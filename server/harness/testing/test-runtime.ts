import { loadConfig } from '~/server/config';
import { promptAttachments } from '~/server/commands/session-attachments';
import { createMemoryProvisioner } from '~/server/hands/memory-hand';
import { HandRegistry, type HandRegistryOptions } from '~/server/hands/registry';
import { Harness, type HarnessOptions } from '~/server/harness/harness';
import { LiveBus } from '~/server/session/live-bus';
import type { ModelClient } from '~/server/harness/core/model-client';
import { type Runtime, accessFor, agentsFor, filesFor, repositoriesFor, vaultsFor, webhooksFor, workFor } from '~/server/runtime';
import type { SessionStore } from '~/server/session/store';

export interface TestRuntimeOptions {
  store: SessionStore;
  model: ModelClient;
  dataDir: string;
  /** Overrides for the registry (default: memory hands only, memory by default). */
  hands?: Partial<Omit<HandRegistryOptions, 'store' | 'live'>>;
  harness?: Partial<Omit<HarnessOptions, 'store' | 'live' | 'hands' | 'model'>>;
  /** Environment settings for the runtime's config (limits, tokens). */
  env?: Record<string, string>;
}

/** One server instance's runtime, as `getRuntime()` builds it, from parts a test picks. */
export function testRuntime(o: TestRuntimeOptions): Runtime {
  const live = new LiveBus(o.store.liveRelay);
  const hands = new HandRegistry({ store: o.store, live, provisioners: { memory: createMemoryProvisioner() }, defaultKind: 'memory', ...o.hands });
  const config = loadConfig({ PADDOCK_DATA_DIR: o.dataDir, ...o.env });
  const kept = filesFor(config, o.store);
  const access = accessFor(config, o.store);
  const agents = agentsFor(config, o.store);
  let wake: (id: string) => void = () => undefined;
  const work = workFor(config, o.store, agents, access, (id) => wake(id));
  const harness = new Harness({ store: o.store, live, hands, model: o.model, attachments: (id) => promptAttachments({ store: o.store, ...kept }, id), selfHosted: work, ...o.harness });
  wake = (id) => void harness.wake(id);
  const vaults = vaultsFor(config, o.store);
  return { config, store: o.store, live, hands, harness, access, agents, work, vaults: vaults.vaults, vaultSecrets: vaults.vaultSecrets, repositories: repositoriesFor(o.store, vaults.masterKey), webhooks: webhooksFor(o.store, vaults.masterKey), gitProxy: null, ...kept };
}
