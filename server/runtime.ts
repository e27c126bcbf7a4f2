import 'server-only';
import path from 'node:path';
import { type Config, loadConfig } from '~/server/config';
import { prepareDataDir } from '~/server/data-dir';
import { DataDirWatch, setDataDirWatch } from '~/server/data-dir-watch';
import { Access } from '~/server/access/access';
import { AgentStore } from '~/server/agents/agent-store';
import { SYSTEM_PROMPT } from '~/server/harness/core/context';
import { KyselyAccessStore } from '~/server/access/access-store';
import { ShareLinks } from '~/server/access/share-links';
import { BudgetWatch } from '~/server/widgets/budget-watch';
import { Widgets } from '~/server/widgets/widgets';
import type { HandKind } from '~/lib/hand';
import type { HandSecret } from '~/server/hands/sandbox/hand-secret';
import { setLiveSources } from '~/server/metrics/metrics';
import { startTracing } from '~/server/metrics/tracing';
import { createMemoryProvisioner } from '~/server/hands/memory-hand';
import type { Provisioner } from '~/server/hands/provisioner';
import { HandRegistry } from '~/server/hands/registry';
import { createRemoteProvisioner } from '~/server/hands/remote-provisioner';
import { createLocalHandProvisioner } from '~/server/hands/sandbox/provisioner';
import { WarmPool } from '~/server/hands/warm-pool';
import { limitStarts } from '~/server/hands/start-limit';
import { Workspaces } from '~/server/hands/workspaces';
import { createAnthropicModel } from '~/server/harness/anthropic-model';
import { createDemoBrain } from '~/server/harness/demo-brain';
import { Harness } from '~/server/harness/harness';
import { LiveBus } from '~/server/session/live-bus';
import type { ModelClient } from '~/server/harness/core/model-client';
import { isDomainError, isStoreUnavailable } from '~/lib/errors';
import { backoffMs, sleep } from '~/lib/sleep';
import { errorFields, logger } from '~/server/log';
import { openPostgresStore } from '~/server/session/postgres-store';
import { openSqliteStore } from '~/server/session/sqlite-store';
import type { SessionStore } from '~/server/session/store';
import { KyselySessionStore } from '~/server/session/kysely-queries';
import { installGracefulStop } from '~/server/shutdown';
import { MASTER_KEY_FILE, loadMasterKey } from '~/server/vault/master-key';
import type { McpSecretSource } from '~/server/vault/mcp-secret';
import { VaultSecrets } from '~/server/vault/secrets';
import { VaultStore } from '~/server/vault/vault-store';
import { credentialRefreshFailed } from '~/server/commands/vault-commands';
import { mcpGatewayFor } from '~/server/proxy/gateway';
import { GitProxy } from '~/server/proxy/git-proxy';
import { RepositoryHands } from '~/server/proxy/repository-hands';
import type { BlobStore } from '~/server/files/blob-store';
import { DbBlobStore } from '~/server/files/db-blob-store';
import { DirBlobStore } from '~/server/files/dir-blob-store';
import { S3BlobStore } from '~/server/files/s3-blob-store';
import { unreachable } from '~/lib/unreachable';
import { FileStore } from '~/server/files/file-store';
import { SessionFileStore } from '~/server/files/session-files';
import { sessionMounts } from '~/server/commands/session-mounts';
import type { SessionMounts } from '~/server/hands/mount-port';
import { MemoryRepo } from '~/server/memory/memory-repo';
import { promptAttachments } from '~/server/commands/session-attachments';
import { SkillStore } from '~/server/skills/skill-store';
import { DeploymentStore } from '~/server/deployments/deployment-store';
import { schedulerTick } from '~/server/commands/deployment-scheduler';
import { startTicker } from '~/server/ticker';
import { WebhookStore } from '~/server/webhooks/webhook-store';
import { WebhookKeys } from '~/server/vault/webhook-keys';
import { webhookTick } from '~/server/webhooks/webhook-delivery';
import { RepositoryStore } from '~/server/proxy/repository-store';
import type { MasterKey } from '~/server/vault/envelope';
import { EnvironmentKeys } from '~/server/access/environment-keys';
import { WorkQueue } from '~/server/commands/work-queue';
import { WorkStore } from '~/server/session/work-store';

const log = logger('runtime');

export interface Runtime {
  config: Config;
  store: SessionStore;
  harness: Harness;
  live: LiveBus;
  hands: HandRegistry;
  access: Access;
  agents: AgentStore;
  /** Vaults and credentials (write-only values). */
  vaults: VaultStore;
  /** The decrypting side, for the MCP proxy only. */
  vaultSecrets: McpSecretSource;
  /** Sessions' resources, repository tokens sealed (write-only), git proxy capabilities. */
  repositories: RepositoryStore;
  /** The git proxy on its own loopback port (null where no hands clone: tests). */
  gitProxy: GitProxy | null;
  /** The Files API's files (metadata) and their bytes. */
  files: FileStore;
  blobs: BlobStore;
  /** Sessions' file resources (beside their repositories, in the same table). */
  sessionFiles: SessionFileStore;
  /** Memory stores: path-addressed memories and their versions. */
  memory: MemoryRepo;
  /** Skills' rows (their archives are in `blobs`). */
  skills: SkillStore;
  /** Deployments and their runs. */
  deployments: DeploymentStore;
  /** Webhook endpoints (signing keys sealed) and their deliveries. */
  webhooks: WebhookStore;
  /** Self-hosted environments' work queue and keys. */
  work: WorkQueue;
  /** Stops this instance's background watches besides the harness's sweeper (the widget budget watch). */
  stopBackground?: () => void;
}

/**
 * Process-wide singletons live on globalThis: Next loads `instrumentation.ts` and route handlers
 * as separate module instances in one process, and a module-level variable would give us two
 * SQLite connections and two sweepers.
 */
const KEY = Symbol.for('paddock.runtime');
type Holder = { [KEY]?: Promise<Runtime> };

/** The runtime if this process started one (without starting it). */
export function peekRuntime(): Promise<Runtime> | null {
  return (globalThis as Holder)[KEY] ?? null;
}

export function getRuntime(): Promise<Runtime> {
  const g = globalThis as Holder;
  g[KEY] ??= startRuntime().catch((e: unknown) => {
    delete g[KEY];
    throw e;
  });
  return g[KEY];
}

/**
 * Starts the runtime when the server starts. If the database cannot be reached then, the server
 * still comes up: pages load (from the browser's copy), API calls answer 503 "the session store is
 * unreachable", and the runtime is started in the background as soon as the database answers, so
 * the sweeper resumes this instance's share of the sessions without waiting for a request.
 */
export async function startRuntimeAtBoot(): Promise<void> {
  installGracefulStop(peekRuntime, loadConfig().PADDOCK_STOP_TIMEOUT_MS);
  try {
    await getRuntime();
    return;
  } catch (e) {
    if (!isStoreUnavailable(e)) throw e;
    log.warn('session store unreachable at start; answering 503 and retrying in the background', errorFields(e));
  }
  void (async () => {
    for (let attempt = 1; ; attempt++) {
      await sleep(backoffMs(attempt, BOOT_RETRY_BASE_MS, BOOT_RETRY_MAX_MS));
      try {
        await getRuntime();
        log.info('session store reachable; runtime started', { attempts: attempt + 1 });
        return;
      } catch (e) {
        if (!isStoreUnavailable(e)) {
          log.error('runtime failed to start', errorFields(e));
          return;
        }
      }
    }
  })();
}

const BOOT_RETRY_BASE_MS = 250;
/** How often the data dir is checked in full (a write probe); every SQLite write stats it besides. */
const DATA_DIR_CHECK_MS = 2_000;
/** How often each instance looks for scheduled deployments due: a fire starts within about this long of its time. */
const DEPLOYMENT_TICK_MS = 5_000;
/** How often each instance sends due webhook deliveries (first attempts and retries). */
const WEBHOOK_TICK_MS = 1_000;
const BOOT_RETRY_MAX_MS = 5_000;

export function modelFromConfig(config: Config): ModelClient {
  if (config.brain === 'demo') return createDemoBrain();
  return createAnthropicModel({
    ...(config.ANTHROPIC_API_KEY ? { apiKey: config.ANTHROPIC_API_KEY } : {}),
    ...(config.ANTHROPIC_AUTH_TOKEN ? { authToken: config.ANTHROPIC_AUTH_TOKEN } : {}),
    ...(config.ANTHROPIC_BASE_URL ? { baseURL: config.ANTHROPIC_BASE_URL } : {}),
    model: config.PADDOCK_MODEL,
  });
}

/** The hand provisioners this server offers, and the default kind a session gets. */
export function createHands(
  config: Config,
  store: SessionStore,
  live: LiveBus,
  agents: AgentStore,
  repositories?: RepositoryHands,
  handSecrets?: (sessionId: string) => Promise<HandSecret[]>,
  mounts?: SessionMounts,
): HandRegistry {
  const local = limitStarts(createLocalHandProvisioner({ dataDir: config.dataDir, workspacesDir: config.workspacesDir, limits: config.handLimits, executor: config.PADDOCK_HAND_EXECUTOR }), config.PADDOCK_HAND_START_CONCURRENCY);
  const provisioners: Partial<Record<HandKind, Provisioner>> = {
    memory: createMemoryProvisioner(),
    sandbox: local,
    remote: createRemoteProvisioner(),
    ...(config.PADDOCK_ALLOW_UNSANDBOXED ? { local } : {}),
  };
  const defaultKind: HandKind = config.PADDOCK_DEFAULT_HAND === 'local' && !config.PADDOCK_ALLOW_UNSANDBOXED ? 'sandbox' : config.PADDOCK_DEFAULT_HAND;
  const pool =
    defaultKind === 'sandbox' && config.PADDOCK_WARM_POOL > 0
      ? new WarmPool(local, { kind: 'sandbox', allowedDomains: config.PADDOCK_HAND_ALLOWED_DOMAINS }, config.PADDOCK_WARM_POOL, config.poolMax).start()
      : null;
  return new HandRegistry({
    store,
    live,
    provisioners,
    defaultKind,
    allowedDomains: config.PADDOCK_HAND_ALLOWED_DOMAINS,
    // A deleted environment leaves its sessions with the server's and their own hosts only.
    environment: (id) =>
      agents.getEnvironment(id).then(
        (e) => e.config,
        (e: unknown) => {
          if (isDomainError(e) && e.code === 'not_found') return null;
          throw e;
        },
      ),
    allowUnrestrictedNetwork: config.PADDOCK_ALLOW_UNRESTRICTED_NETWORK,
    remoteEndpoints: config.PADDOCK_REMOTE_HANDS,
    pool,
    browserTimeouts: { callTimeoutMs: config.PADDOCK_BROWSER_CALL_TIMEOUT_MS },
    workspaces: new Workspaces(config.workspacesDir),
    lifecycle: {
      // Never idle: only the cap suspends.
      idleMs: config.PADDOCK_HAND_IDLE_SECONDS > 0 ? config.PADDOCK_HAND_IDLE_SECONDS * 1000 : Number.POSITIVE_INFINITY,
      maxLive: config.PADDOCK_MAX_LIVE_HANDS,
    },
    ...(repositories ? { repositories } : {}),
    ...(handSecrets ? { handSecrets } : {}),
    ...(mounts ? { mounts } : {}),
  });
}

/** A session's `environment_variable` secrets from its vaults, for its sandbox hands' egress proxies. */
export function sessionHandSecrets(store: SessionStore, vaultSecrets: VaultSecrets): (sessionId: string) => Promise<HandSecret[]> {
  return async (sessionId) => {
    const vaultIds = (await store.getSession(sessionId))?.vault_ids ?? [];
    return vaultIds.length > 0 ? vaultSecrets.handSecrets(vaultIds) : [];
  };
}

/** Identity for a runtime: access rows live in the session database, beside the sessions. */
export function accessFor(config: Config, store: SessionStore): Access {
  if (!(store instanceof KyselySessionStore)) throw new Error('access needs a Kysely-backed session store');
  const work = new WorkStore(store.db);
  return new Access({ store: new KyselyAccessStore(store.db), shares: new ShareLinks(store.db), widgets: new Widgets(store.db), environmentKeys: new EnvironmentKeys(store.db), liveWorkItem: (id) => work.liveItem(id), ownerToken: config.PADDOCK_OWNER_TOKEN, apiKey: config.PADDOCK_API_KEY, sessionDays: config.PADDOCK_SESSION_DAYS, publicUrl: config.PADDOCK_PUBLIC_URL });
}

/** Agents and environments live in the session database too. */
/**
 * What agents read and keep, in the session database: files' metadata (their bytes
 * content-addressed under `<dataDir>/blobs`, or in PostgreSQL), sessions' file resources, memory
 * stores and skills.
 */
export function filesFor(
  config: Config,
  store: SessionStore,
): { files: FileStore; blobs: BlobStore; sessionFiles: SessionFileStore; memory: MemoryRepo; skills: SkillStore; deployments: DeploymentStore } {
  if (!(store instanceof KyselySessionStore)) throw new Error('files need a Kysely-backed session store');
  return {
    files: new FileStore(store.db),
    blobs: blobStoreFor(config, store.db),
    sessionFiles: new SessionFileStore(store.db),
    memory: new MemoryRepo(store.db),
    skills: new SkillStore(store.db),
    deployments: new DeploymentStore(store.db),
  };
}

/** PADDOCK_BLOB_STORE: `auto` keeps bytes where the sessions are (the data dir for SQLite, the database every PostgreSQL instance shares). */
function blobStoreFor(config: Config, db: KyselySessionStore['db']): BlobStore {
  const kind = config.PADDOCK_BLOB_STORE === 'auto' ? (config.DATABASE_URL ? 'database' : 'dir') : config.PADDOCK_BLOB_STORE;
  switch (kind) {
    case 'dir':
      return new DirBlobStore(path.join(config.dataDir, 'blobs'));
    case 'database':
      return new DbBlobStore(db);
    case 's3':
      return new S3BlobStore({
        bucket: config.PADDOCK_S3_BUCKET!,
        endpoint: config.PADDOCK_S3_ENDPOINT,
        region: config.PADDOCK_S3_REGION,
        forcePathStyle: config.PADDOCK_S3_FORCE_PATH_STYLE,
        prefix: config.PADDOCK_S3_PREFIX,
      });
    default:
      return unreachable(kind);
  }
}

/** The self-hosted work queue: rows in the session database; `wake` reaches the harness (made after it). */
export function workFor(config: Config, store: SessionStore, agents: AgentStore, access: Access, wake: (sessionId: string) => void): WorkQueue {
  if (!(store instanceof KyselySessionStore)) throw new Error('the work queue needs a Kysely-backed session store');
  return new WorkQueue({ store, work: new WorkStore(store.db, config.PADDOCK_WORK_LEASE_SECONDS), agents, access, keys: new EnvironmentKeys(store.db), wake });
}

/** Sweeps the work queue for lost workers every PADDOCK_SWEEP_MS; returns the stop. */
export function startWorkSweep(config: Config, work: WorkQueue): () => void {
  return startTicker({ name: 'work sweep', log, intervalMs: config.PADDOCK_SWEEP_MS, tick: () => work.sweepLost().then(() => undefined) });
}

export function agentsFor(config: Config, store: SessionStore): AgentStore {
  if (!(store instanceof KyselySessionStore)) throw new Error('agents need a Kysely-backed session store');
  return new AgentStore(store.db, { model: config.PADDOCK_MODEL, system: SYSTEM_PROMPT });
}

/** Vaults live in the session database; their values are sealed under the master key (PADDOCK_MASTER_KEY or `<dataDir>/master.key`). */
export function vaultsFor(config: Config, store: SessionStore): { vaults: VaultStore; vaultSecrets: VaultSecrets; masterKey: MasterKey } {
  if (!(store instanceof KyselySessionStore)) throw new Error('vaults need a Kysely-backed session store');
  const masterKey = loadMasterKey({ value: config.PADDOCK_MASTER_KEY, dataDir: config.dataDir });
  return { vaults: new VaultStore(store.db, masterKey), vaultSecrets: new VaultSecrets(store.db, masterKey), masterKey };
}

/** Webhook endpoints and deliveries live in the session database; signing keys are sealed under the master key. */
export function webhooksFor(store: SessionStore, master: MasterKey): WebhookStore {
  if (!(store instanceof KyselySessionStore)) throw new Error('webhooks need a Kysely-backed session store');
  return new WebhookStore(store.db, new WebhookKeys(master));
}

/** Resources live in the session database; tokens are sealed under the master key. */
export function repositoriesFor(store: SessionStore, master: MasterKey): RepositoryStore {
  if (!(store instanceof KyselySessionStore)) throw new Error('repositories need a Kysely-backed session store');
  return new RepositoryStore(store.db, master);
}

async function startRuntime(): Promise<Runtime> {
  const config = loadConfig();
  prepareDataDir(config.dataDir);
  // The data dir deleted or unwritable while running: health and the owner's pages say so, and
  // SQLite writes are refused instead of going into a deleted file (data-dir-watch.ts).
  const sqliteFile = path.join(config.dataDir, 'paddock.sqlite');
  const dataDir = new DataDirWatch({ dir: config.dataDir, files: [...(config.DATABASE_URL ? [] : [sqliteFile]), path.join(config.dataDir, MASTER_KEY_FILE)] });
  const store = config.DATABASE_URL
    ? await openPostgresStore({ url: config.DATABASE_URL })
    : await openSqliteStore({ file: sqliteFile, beforeWrite: () => dataDir.assertWritable() });
  const live = new LiveBus(store.liveRelay);
  const agents = agentsFor(config, store);
  const { vaults, vaultSecrets, masterKey } = vaultsFor(config, store);
  const repositories = repositoriesFor(store, masterKey);
  const webhooks = webhooksFor(store, masterKey);
  const gitProxy = await new GitProxy({ repositories, port: config.PADDOCK_GIT_PROXY_PORT }).start();
  const files = filesFor(config, store);
  const mounts = sessionMounts({ ...files, maxOutputBytes: config.PADDOCK_MAX_UPLOAD_BYTES, attachments: { store, ...files } });
  const hands = createHands(config, store, live, agents, new RepositoryHands(repositories, gitProxy), sessionHandSecrets(store, vaultSecrets), mounts);
  const model = modelFromConfig(config);
  const access = accessFor(config, store);
  // The harness wakes through the queue and the queue wakes the harness: bound once both exist.
  let wakeHarness: (id: string) => void = () => undefined;
  const work = workFor(config, store, agents, access, (id) => wakeHarness(id));
  const harness = new Harness({
    selfHosted: work,
    store,
    model,
    hands,
    live,
    // Skills and memory stores a session has attached, named in its system prompt.
    attachments: (id) => promptAttachments({ store, ...files }, id),
    // MCP servers through the proxy (short-lived session tokens); only the proxy opens the vault's credentials.
    mcp: mcpGatewayFor(store.db, store, vaultSecrets, (c) => void credentialRefreshFailed({ webhooks }, c)),
    maxTokens: config.PADDOCK_MAX_TOKENS,
    ...(config.PADDOCK_GRADER_MODEL ? { graderModel: config.PADDOCK_GRADER_MODEL } : {}),
    leaseTtlMs: config.PADDOCK_LEASE_TTL_MS,
    maxRunningThreads: config.PADDOCK_MAX_RUNNING_THREADS,
    maxRetries: config.PADDOCK_MODEL_RETRIES,
    retryBaseMs: config.PADDOCK_RETRY_BASE_MS,
    storeRetryBaseMs: config.PADDOCK_STORE_RETRY_BASE_MS,
    storeRetryMaxMs: config.PADDOCK_STORE_RETRY_MAX_MS,
  });
  wakeHarness = (id) => void harness.wake(id);
  harness.startSweeper(config.PADDOCK_SWEEP_MS);
  const stopWorkSweep = startWorkSweep(config, work);
  log.info('paddock started', { store: config.DATABASE_URL ? 'postgres' : 'sqlite', dataDir: config.dataDir, brain: config.brain, model: model.label });
  // Beside the sweeper, per instance: cuts a widget conversation's running turn once its budget is spent (budget-watch.ts).
  const stopBudgetWatch = new BudgetWatch({ store, widgets: access.widgets.store, wake: (id) => harness.wake(id) }).start();
  await announceSignIn(config, access);
  await agents.ensureDefaults();
  // Traces of model requests and tool calls, when an OTLP endpoint is configured.
  startTracing();
  // The metrics' live gauges read the hands and the running sessions when scraped.
  setLiveSources({ hands: () => hands.liveHandCounts(), sessions: () => harness.runningSessions });
  setDataDirWatch(dataDir);
  const stopDataDirWatch = dataDir.start(DATA_DIR_CHECK_MS);
  // Every instance ticks; the database's claim on (deployment, scheduled time) decides who fires (deployment-scheduler.ts).
  const stopScheduler = startTicker({ name: 'deployment scheduler', log, intervalMs: DEPLOYMENT_TICK_MS, tick: () => schedulerTick({ store, harness, hands, agents, vaults, config, repositories, webhooks, ...files }).then(() => undefined) });
  // Webhook deliveries and their retries: each due delivery is claimed by one instance at a time (webhook-delivery.ts).
  const stopDeliveries = startTicker({ name: 'webhook deliveries', log, intervalMs: WEBHOOK_TICK_MS, tick: () => webhookTick({ webhooks }) });
  const stopBackground = () => {
    stopScheduler();
    stopDeliveries();
    stopBudgetWatch();
    stopDataDirWatch();
    stopWorkSweep();
  };
  return { config, store, harness, live, hands, access, agents, vaults, vaultSecrets, repositories, gitProxy, webhooks, ...files, work, stopBackground };
}

/**
 * Jupyter-style: each start prints a URL with a one-time token that signs the owner in. To stdout,
 * not the JSON log: it is for the person at the terminal (and a log shipper should not keep it).
 */
async function announceSignIn(config: Config, access: Access): Promise<void> {
  const base = (config.PADDOCK_PUBLIC_URL ?? `http://localhost:${process.env.PORT ?? '3000'}`).replace(/\/+$/, '');
  const token = await access.newSigninToken();
  const fixed = config.PADDOCK_OWNER_TOKEN ? ' (or with PADDOCK_OWNER_TOKEN)' : '';
  process.stdout.write(`\npaddock: sign in at ${base}/auth/signin?token=${token}${fixed}\n\n`);
}
