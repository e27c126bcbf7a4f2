import type { Insertable, Selectable, Transaction } from 'kysely';
import type { SessionStatus, SessionWaitingOn } from '~/server/session/store';

/**
 * The session store's tables, typed once for both SQLite and PostgreSQL. Only portable column
 * types are used: text, integer, bigint. Timestamps shown to users are ISO-8601 UTC text (they
 * sort as text); lease expiry is epoch milliseconds, compared numerically.
 *
 * Note for the PostgreSQL store: node-postgres returns `bigint` as a string by default, so it
 * must install a parser for int8 (OID 20) before `lease_expires_at` can be read as a number.
 */
export interface Database {
  sessions: SessionsTable;
  events: EventsTable;
  idempotency: IdempotencyTable;
  hand_tabs: HandTabsTable;
  call_claims: CallClaimsTable;
  api_keys: ApiKeysTable;
  owner_sessions: OwnerSessionsTable;
  signin_tokens: SigninTokensTable;
  server_secrets: ServerSecretsTable;
  agents: AgentsTable;
  agent_versions: AgentVersionsTable;
  environments: EnvironmentsTable;
  vaults: VaultsTable;
  vault_credentials: VaultCredentialsTable;
  session_resources: SessionResourcesTable;
  repository_tokens: RepositoryTokensTable;
  git_capabilities: GitCapabilitiesTable;
  share_links: ShareLinksTable;
  widget_settings: WidgetSettingsTable;
  widget_sessions: WidgetSessionsTable;
  session_checkpoints: SessionCheckpointsTable;
  files: FilesTable;
  blob_chunks: BlobChunksTable;
  blobs: BlobsTable;
  memory_stores: MemoryStoresTable;
  memories: MemoriesTable;
  memory_versions: MemoryVersionsTable;
  skills: SkillsTable;
  skill_versions: SkillVersionsTable;
  deployments: DeploymentsTable;
  deployment_runs: DeploymentRunsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_outbox: WebhookOutboxTable;
  session_thread_archives: SessionThreadArchivesTable;
  environment_keys: EnvironmentKeysTable;
  work_items: WorkItemsTable;
  work_workers: WorkWorkersTable;
}

/** An archived session thread (multiagent); the threads themselves are in the log. */
export interface SessionThreadArchivesTable {
  session_id: string;
  thread_id: string;
  archived_at: string;
}

export interface SessionsTable {
  id: string;
  title: string;
  created_at: string;
  updated_at: string;
  /** Derived from the last status event; the store only ever writes a SessionStatus. */
  status: SessionStatus;
  /** Seq of the newest event, 0 for an empty log. The next append uses last_seq + 1. */
  last_seq: number;
  /**
   * Type of the newest event that is not a side event (SIDE_EVENT_TYPES): what
   * sessionsNeedingWork() looks at, without reading the log.
   */
  last_event_type: string | null;
  /** A harness found nothing to do in the log up to this seq: the sweeper leaves it alone until more arrives. */
  settled_seq: number;
  /** JSON text of a Record<string, string>. */
  metadata: string;
  lease_owner: string | null;
  /** Bumped on every acquire and never lowered: a fence older than this is stale. */
  lease_epoch: number;
  /** Epoch milliseconds; null when nobody holds the lease. */
  lease_expires_at: number | null;
  /** JSON text of the SessionAgent the session runs (its agent's version at creation, with overrides); null: the built-in default. */
  agent: string | null;
  agent_id: string | null;
  agent_version: number | null;
  environment_id: string | null;
  archived_at: string | null;
  /** JSON text of what is stored for later use: `{vault_ids, resources}`. */
  extra: string;
  /** What an idle session waits for, as its newest status event left it (migration 0013); null: nothing. */
  waiting_on: SessionWaitingOn | null;
  /** The first line of the newest user or agent message (clipped); null before any. */
  last_message: string | null;
}

export interface EventsTable {
  session_id: string;
  seq: number;
  id: string;
  type: string;
  processed_at: string;
  /** JSON text of the validated NewEvent (including `type`). */
  payload: string;
}

/** One row per idempotency key: the batch it stored is seqs first_seq … first_seq + count - 1. */
export interface IdempotencyTable {
  session_id: string;
  key: string;
  first_seq: number;
  count: number;
}

/** A browser tab serving a session's browser hand, and when it last said so (lease clock, ms). */
export interface HandTabsTable {
  session_id: string;
  hand: string;
  tab_id: string;
  seen_at: number;
}

/** The tab that runs a browser hand's call: the first to claim it. */
export interface CallClaimsTable {
  session_id: string;
  call_id: string;
  tab_id: string;
}

/** A program's key; only its SHA-256 is kept (the key itself is shown once, when made). */
export interface ApiKeysTable {
  id: string;
  name: string;
  hash: string;
  /** The key's first characters, to tell keys apart in the settings page. */
  prefix: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

/** A signed-in browser (the owner): the SHA-256 of the id its cookie carries; deleted on sign-out. */
export interface OwnerSessionsTable {
  id_hash: string;
  created_at: string;
  /** Epoch milliseconds. */
  expires_at: number;
}

/** A one-time sign-in token printed at start (its SHA-256), deleted when used. */
export interface SigninTokensTable {
  hash: string;
  expires_at: number;
}

/** Keys every instance must share (the cookie signing key), made once by whichever starts first. */
export interface ServerSecretsTable {
  name: string;
  value: string;
}

/** An agent: its current version; each version's body is in agent_versions. */
export interface AgentsTable {
  id: string;
  version: number;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
}

/** One version of an agent: JSON text of the Agent at that version (never changed once written). */
export interface AgentVersionsTable {
  agent_id: string;
  version: number;
  body: string;
  created_at: string;
}

/** An environment: JSON text of its Environment (name, description, metadata, config). */
export interface EnvironmentsTable {
  id: string;
  body: string;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
}

/** A vault: a named set of credentials a session may use (`vault_ids`). */
export interface VaultsTable {
  id: string;
  display_name: string;
  /** JSON text of a Record<string, string>. */
  metadata: string;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
}

/** A credential: `auth` is JSON of its non-secret fields; `secrets` JSON of field → sealed value, never plaintext. */
export interface VaultCredentialsTable {
  id: string;
  vault_id: string;
  /** `mcp:<url>` or `env:<name>`: unique among a vault's live credentials. */
  match_key: string;
  display_name: string | null;
  metadata: string;
  auth: string;
  secrets: string;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
}

/** A session's resource: JSON text of it as the API shows it, minus id and times (never a token). */
export interface SessionResourcesTable {
  id: string;
  session_id: string;
  body: string;
  created_at: string;
  updated_at: string;
}

/** A repository resource's token: JSON text of its envelope (`server/vault/envelope.ts`) `Sealed`. */
export interface RepositoryTokensTable {
  session_id: string;
  resource_id: string;
  sealed: string;
}

/** A git proxy capability (its SHA-256 only), bound to one session, resource and hand. */
export interface GitCapabilitiesTable {
  hash: string;
  session_id: string;
  resource_id: string;
  hand: string;
  created_at: string;
}

/** A read-only link to one session: only the SHA-256 of its token is kept. */
export interface ShareLinksTable {
  id: string;
  session_id: string;
  hash: string;
  label: string;
  /** 1: the viewer does not see the hands' files. */
  hide_files: number;
  created_at: string;
  /** Epoch milliseconds; null: never expires. */
  expires_at: number | null;
  revoked_at: string | null;
}

/** An agent's docs widget settings: JSON text of WidgetSettingsInput (lib/widget.ts). */
export interface WidgetSettingsTable {
  agent_id: string;
  body: string;
  updated_at: string;
}

/** A session a docs widget started: for which visitor (the SHA-256 of its id) and from which origin. */
export interface WidgetSessionsTable {
  session_id: string;
  agent_id: string;
  origin: string;
  visitor_hash: string;
  /** Epoch milliseconds. */
  created_at: number;
}

export type SessionRow = Selectable<SessionsTable>;
export type EventRow = Selectable<EventsTable>;
export type NewEventRow = Insertable<EventsTable>;

/** The harness's fold of a session's log up to `seq` (JSON text, server/harness/core/log-fold.ts). */
export interface SessionCheckpointsTable {
  session_id: string;
  seq: number;
  body: string;
}

/** The Files API's files: metadata here, the bytes in a BlobStore under their SHA-256. */
export interface FilesTable {
  id: string;
  filename: string;
  mime_type: string;
  size_bytes: number;
  sha256: string;
  created_at: string;
  /** ISO-8601; null: kept until deleted. */
  expires_at: string | null;
  /** The session a file belongs to (an output), or null for an upload. */
  scope_id: string | null;
  /** 1 when its content may be downloaded. */
  downloadable: number;
}

/** A blob's bytes in order (`n` from 0), under its SHA-256 once committed or a `tmp:` key while uploading. */
export interface BlobChunksTable {
  blob_key: string;
  n: number;
  data: Uint8Array;
}

/** A committed blob in the database: its chunks are under its SHA-256. */
export interface BlobsTable {
  sha256: string;
  size: number;
}

/** A memory store (server/memory): `metadata` is a JSON object of strings. */
export interface MemoryStoresTable {
  id: string;
  name: string;
  description: string;
  metadata: string;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
}

/** A live memory: its current path and content, and the version that wrote them. */
export interface MemoriesTable {
  id: string;
  store_id: string;
  path: string;
  content: string;
  content_sha256: string;
  size_bytes: number;
  version_id: string;
  created_at: string;
  updated_at: string;
}

/** One change to a memory; only a redaction changes it afterwards (nulling what it held). */
export interface MemoryVersionsTable {
  id: string;
  store_id: string;
  memory_id: string;
  operation: 'created' | 'modified' | 'deleted';
  path: string | null;
  content: string | null;
  content_sha256: string | null;
  size_bytes: number | null;
  created_at: string;
  actor_type: 'api_actor' | 'session_actor' | 'user_actor';
  actor_id: string;
  redacted_at: string | null;
  redacted_by_type: 'api_actor' | 'session_actor' | 'user_actor' | null;
  redacted_by_id: string | null;
}

/** A skill (server/skills): `name` is its slug, fixed by its first version. */
export interface SkillsTable {
  id: string;
  name: string;
  display_name: string;
  latest_version: string;
  created_at: string;
  updated_at: string;
}

/** One immutable version of a skill: its files are one zip in the BlobStore under `sha256`. */
export interface SkillVersionsTable {
  skill_id: string;
  /** Epoch microseconds as digits, increasing per skill (the hosted API's form). */
  version: string;
  name: string;
  description: string;
  sha256: string;
  size_bytes: number;
  created_at: string;
}

/** A deployment (server/deployments): `config` is JSON (initial events, resources, vault ids, budget). */
export interface DeploymentsTable {
  id: string;
  name: string;
  description: string | null;
  agent_id: string;
  agent_version: number;
  environment_id: string;
  config: string;
  metadata: string;
  schedule: string | null;
  paused_reason: string | null;
  next_fire_at: string | null;
  last_run_at: string | null;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
}

/** One trigger of a deployment: its session or its error, written once after the claim. */
export interface DeploymentRunsTable {
  id: string;
  deployment_id: string;
  agent_id: string;
  agent_version: number;
  trigger_type: 'manual' | 'schedule';
  scheduled_at: string | null;
  session_id: string | null;
  error: string | null;
  created_at: string;
}

/** A webhook endpoint: `sealed_key` is its signing secret sealed (server/vault/webhook-keys.ts). */
export interface WebhookEndpointsTable {
  id: string;
  url: string;
  description: string | null;
  event_types: string;
  sealed_key: string;
  created_at: string;
  disabled_at: string | null;
}

/** One event for one endpoint: `attempts` is its log as JSON ({at, status_code, error}[]). */
export interface WebhookDeliveriesTable {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  payload: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: string;
  next_attempt_at: string | null;
  claimed_until: string | null;
  created_at: string;
  updated_at: string;
  /** The log event it reports (`sevt_…`), unique per endpoint and type; null for a command's event. */
  source_id: string | null;
}

/** A log event's webhook event not yet turned into deliveries (written in the append's transaction). */
export interface WebhookOutboxTable {
  source_id: string;
  event_type: string;
  session_id: string;
  session_thread_id: string | null;
  /** The event's seq: the order within its session (`occurred_at` is its batch's time). */
  seq: number;
  occurred_at: string;
}

/** A self-hosted environment's key (its workers poll with it): only its hash is kept. */
export interface EnvironmentKeysTable {
  id: string;
  environment_id: string;
  name: string;
  hash: string;
  /** The key's first characters, never the key. */
  prefix: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

/** One item of a self-hosted environment's work queue (server/session/work-store.ts). */
export interface WorkItemsTable {
  id: string;
  environment_id: string;
  /** `session` or `healthcheck`. */
  data_type: string;
  /** The session's id (a healthcheck's own id). */
  data_id: string;
  /** The session's id while the item is not stopped, else null: a unique index keeps one live item per session. */
  live_session_id: string | null;
  state: 'queued' | 'starting' | 'active' | 'stopping' | 'stopped';
  metadata: string;
  created_at: string;
  /** When a poll last handed the item out (epoch ms) and to which worker; an unacked item is handed out again after `reclaim_older_than_ms`. */
  polled_at: number | null;
  worker_id: string | null;
  acknowledged_at: string | null;
  started_at: string | null;
  latest_heartbeat_at: string | null;
  ttl_seconds: number;
  /** Epoch ms; the item is lost when it passes without a heartbeat. */
  lease_expires_at: number | null;
  stop_requested_at: string | null;
  stopped_at: string | null;
  /** Why it stopped when no one stopped it (its lease expired), else null. */
  lost_reason: string | null;
}

/** The last poll of each worker (the stats' `workers_polling`). */
export interface WorkWorkersTable {
  environment_id: string;
  worker_id: string;
  last_poll_at: number;
}

/** A transaction over the store's tables. */
export type Tx = Transaction<Database>;
