import { type Kysely, PostgresAdapter, sql } from 'kysely';
import { type NewEvent, SIDE_EVENT_TYPES } from '~/lib/events';
import { listedMessage, waitingOnFrom } from '~/server/session/list-columns';
import type { Database } from '~/server/session/schema';
import { type Migration, type MigrationResult, Migrator } from 'kysely/migration';

/** The log's status events (what sets a session's status). */
const STATUS_EVENT_TYPES = ['session.status_running', 'session.status_idle', 'session.status_rescheduled', 'session.status_terminated'] as const;

/**
 * Schema migrations, kept in code (nothing to ship or locate on disk) and written with Kysely's
 * schema builder only, so the PostgreSQL store can run the very same list. Append new entries;
 * never edit one that has shipped. Names sort in the order they must run.
 */
export const migrations: Readonly<Record<string, Migration>> = {
  '0001_sessions_events_idempotency': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('sessions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('last_seq', 'integer', (c) => c.notNull())
        .addColumn('last_event_type', 'text')
        .addColumn('metadata', 'text', (c) => c.notNull())
        .addColumn('lease_owner', 'text')
        .addColumn('lease_epoch', 'integer', (c) => c.notNull())
        // Epoch milliseconds overflow a 32-bit PostgreSQL integer.
        .addColumn('lease_expires_at', 'bigint')
        .execute();
      // listSessions pages newest-first by (updated_at, id).
      await db.schema.createIndex('sessions_updated_at_id').on('sessions').columns(['updated_at', 'id']).execute();

      await db.schema
        .createTable('events')
        .addColumn('session_id', 'text', (c) => c.notNull().references('sessions.id').onDelete('cascade'))
        .addColumn('seq', 'integer', (c) => c.notNull())
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('processed_at', 'text', (c) => c.notNull())
        .addColumn('payload', 'text', (c) => c.notNull())
        // The primary key is what makes a duplicate seq impossible, whatever a writer does.
        .addPrimaryKeyConstraint('events_pk', ['session_id', 'seq'])
        .execute();

      await db.schema
        .createTable('idempotency')
        .addColumn('session_id', 'text', (c) => c.notNull().references('sessions.id').onDelete('cascade'))
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('first_seq', 'integer', (c) => c.notNull())
        .addColumn('count', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('idempotency_pk', ['session_id', 'key'])
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('idempotency').execute();
      await db.schema.dropTable('events').execute();
      await db.schema.dropTable('sessions').execute();
    },
  },
  '0002_browser_tabs_and_claims': {
    // A browser hand's tabs and who runs each of its calls, shared by every instance, so the
    // harness on one instance can use a tab whose requests reach another.
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('hand_tabs')
        .addColumn('session_id', 'text', (c) => c.notNull().references('sessions.id').onDelete('cascade'))
        .addColumn('hand', 'text', (c) => c.notNull())
        .addColumn('tab_id', 'text', (c) => c.notNull())
        .addColumn('seen_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('hand_tabs_pk', ['session_id', 'hand', 'tab_id'])
        .execute();
      await db.schema
        .createTable('call_claims')
        .addColumn('session_id', 'text', (c) => c.notNull().references('sessions.id').onDelete('cascade'))
        .addColumn('call_id', 'text', (c) => c.notNull())
        .addColumn('tab_id', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('call_claims_pk', ['session_id', 'call_id'])
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('call_claims').execute();
      await db.schema.dropTable('hand_tabs').execute();
    },
  },
  '0003_session_work_state': {
    // Two ways a session looked as if it needed work when it did not, so that every instance's
    // sweeper woke it on every tick (and the oldest 50 such sessions hid real orphans):
    // - last_event_type followed hand events too (a tab attached to an idle session): recompute
    //   it, for the rows that have it wrong, from the newest event that is not a side event;
    // - a log ending in something that needs nothing (an interrupt to an idle session): the
    //   harness now records the seq up to which it found nothing to do (settled_seq).
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('sessions').addColumn('settled_seq', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      const side = sql.join([...SIDE_EVENT_TYPES].map((t) => sql.lit(t)));
      await sql`update sessions set last_event_type = (
          select e.type from events e where e.session_id = sessions.id and e.type not in (${side}) order by e.seq desc limit 1
        ) where last_event_type in (${side})`.execute(db);
    },
    async down(db: Kysely<unknown>) {
      // last_event_type stays recomputed: the old rule would only make sessions look busy again.
      await db.schema.alterTable('sessions').dropColumn('settled_seq').execute();
    },
  },
  '0004_access': {
    // Who may call: programs' API keys (hashed), signed-in browsers, one-time sign-in tokens, and
    // the cookie signing key every instance shares.
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('api_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('hash', 'text', (c) => c.notNull().unique())
        .addColumn('prefix', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('last_used_at', 'text')
        .addColumn('revoked_at', 'text')
        .execute();
      await db.schema
        .createTable('owner_sessions')
        .addColumn('id_hash', 'text', (c) => c.primaryKey())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('signin_tokens')
        .addColumn('hash', 'text', (c) => c.primaryKey())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('server_secrets')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .execute();
    },
    async down(db: Kysely<unknown>) {
      for (const t of ['server_secrets', 'signin_tokens', 'owner_sessions', 'api_keys']) await db.schema.dropTable(t).execute();
    },
  },
  '0005_agents_environments': {
    // Versioned agents and environments (the Managed Agents API's), and what a session was
    // created with: its agent's snapshot, environment, archive time and stored-for-later fields.
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('agents')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('version', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addColumn('archived_at', 'text')
        .execute();
      await db.schema.createIndex('agents_created_at_id').on('agents').columns(['created_at', 'id']).execute();
      await db.schema
        .createTable('agent_versions')
        .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id').onDelete('cascade'))
        .addColumn('version', 'integer', (c) => c.notNull())
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('agent_versions_pk', ['agent_id', 'version'])
        .execute();
      await db.schema
        .createTable('environments')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addColumn('archived_at', 'text')
        .execute();
      await db.schema.createIndex('environments_created_at_id').on('environments').columns(['created_at', 'id']).execute();
      for (const [name, type] of [
        ['agent', 'text'],
        ['agent_id', 'text'],
        ['agent_version', 'integer'],
        ['environment_id', 'text'],
        ['archived_at', 'text'],
      ] as const) {
        await db.schema.alterTable('sessions').addColumn(name, type).execute();
      }
      await db.schema.alterTable('sessions').addColumn('extra', 'text', (c) => c.notNull().defaultTo('{}')).execute();
      await db.schema.createIndex('sessions_created_at_id').on('sessions').columns(['created_at', 'id']).execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropIndex('sessions_created_at_id').execute();
      for (const c of ['extra', 'archived_at', 'environment_id', 'agent_version', 'agent_id', 'agent']) await db.schema.alterTable('sessions').dropColumn(c).execute();
      for (const t of ['environments', 'agent_versions', 'agents']) await db.schema.dropTable(t).execute();
    },
  },
  '0006_vaults': {
    // Vaults and their credentials. A credential's values are only ever stored sealed
    // (`secrets`: JSON of field → envelope, server/vault/envelope.ts); `auth` holds the rest.
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('vaults')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('display_name', 'text', (c) => c.notNull())
        .addColumn('metadata', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addColumn('archived_at', 'text')
        .execute();
      await db.schema.createIndex('vaults_created_at_id').on('vaults').columns(['created_at', 'id']).execute();
      await db.schema
        .createTable('vault_credentials')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('vault_id', 'text', (c) => c.notNull().references('vaults.id').onDelete('cascade'))
        .addColumn('match_key', 'text', (c) => c.notNull())
        .addColumn('display_name', 'text')
        .addColumn('metadata', 'text', (c) => c.notNull())
        .addColumn('auth', 'text', (c) => c.notNull())
        .addColumn('secrets', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addColumn('archived_at', 'text')
        .execute();
      await db.schema.createIndex('vault_credentials_vault_created').on('vault_credentials').columns(['vault_id', 'created_at', 'id']).execute();
      // One live credential per MCP server URL (or env var name) in a vault, whoever races.
      await db.schema
        .createIndex('vault_credentials_live_key')
        .on('vault_credentials')
        .columns(['vault_id', 'match_key'])
        .unique()
        .where(sql.ref('archived_at'), 'is', null)
        .execute();
    },
    async down(db: Kysely<unknown>) {
      for (const t of ['vault_credentials', 'vaults']) await db.schema.dropTable(t).execute();
    },
  },
  '0007_repository_tokens': {
    // A session's resources (their own rows: the resources API adds and removes them), a
    // repository's token sealed beside it (never in the session row), and the git proxy's
    // capabilities (only their SHA-256), each bound to one session, resource and hand.
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('session_resources')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('session_id', 'text', (c) => c.notNull())
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('session_resources_session').on('session_resources').columns(['session_id', 'id']).execute();
      await db.schema
        .createTable('repository_tokens')
        .addColumn('session_id', 'text', (c) => c.notNull())
        .addColumn('resource_id', 'text', (c) => c.notNull())
        .addColumn('sealed', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('repository_tokens_pk', ['session_id', 'resource_id'])
        .execute();
      await db.schema
        .createTable('git_capabilities')
        .addColumn('hash', 'text', (c) => c.primaryKey())
        .addColumn('session_id', 'text', (c) => c.notNull())
        .addColumn('resource_id', 'text', (c) => c.notNull())
        .addColumn('hand', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('git_capabilities_session').on('git_capabilities').columns(['session_id', 'hand']).execute();
    },
    async down(db: Kysely<unknown>) {
      for (const t of ['git_capabilities', 'repository_tokens', 'session_resources']) await db.schema.dropTable(t).execute();
    },
  },
  '0008_share_links': {
    // Read-only links to one session (`/share/<token>`): the token's SHA-256 only, an optional
    // expiry (epoch ms), revoked rather than deleted so a list can say when. No foreign key (as
    // 0007's tables): deleteSession removes a session's links with its other rows.
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('share_links')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('session_id', 'text', (c) => c.notNull())
        .addColumn('hash', 'text', (c) => c.notNull().unique())
        .addColumn('label', 'text', (c) => c.notNull())
        .addColumn('hide_files', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'bigint')
        .addColumn('revoked_at', 'text')
        .execute();
      await db.schema.createIndex('share_links_session').on('share_links').columns(['session_id', 'created_at']).execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('share_links').execute();
    },
  },
  '0009_widgets': {
    // The docs widget: an agent's settings (operator data beside the versioned agent: on/off,
    // allowed origins as JSON text, the environment, budgets and rate limits), and which sessions
    // a widget started, for whom (the SHA-256 of the visitor's id) and from which origin. No
    // foreign key (as 0007's and 0008's tables): deleteSession removes a session's row.
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('widget_settings')
        .addColumn('agent_id', 'text', (c) => c.primaryKey())
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('widget_sessions')
        .addColumn('session_id', 'text', (c) => c.primaryKey())
        .addColumn('agent_id', 'text', (c) => c.notNull())
        .addColumn('origin', 'text', (c) => c.notNull())
        .addColumn('visitor_hash', 'text', (c) => c.notNull())
        // Epoch milliseconds: the hourly cap counts rows newer than an hour.
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('widget_sessions_visitor').on('widget_sessions').columns(['visitor_hash', 'created_at']).execute();
      await db.schema.createIndex('widget_sessions_agent').on('widget_sessions').columns(['agent_id', 'created_at']).execute();
      await db.schema.createIndex('widget_sessions_origin').on('widget_sessions').columns(['origin', 'session_id']).execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('widget_sessions').execute();
      await db.schema.dropTable('widget_settings').execute();
    },
  },
  '0010_checkpoints': {
    // The harness's fold of a session's log up to a seq (server/harness/core/log-fold.ts), so a wake
    // reads what follows it and the parts a request shows, not the whole log. Derived data: any
    // row may be dropped (the next wake reads the log whole and writes it again). No foreign key
    // (as 0007–0009): deleteSession removes the row.
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('session_checkpoints')
        .addColumn('session_id', 'text', (c) => c.primaryKey())
        .addColumn('seq', 'integer', (c) => c.notNull())
        .addColumn('body', 'text', (c) => c.notNull())
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('session_checkpoints').execute();
    },
  },
  '0011_files': {
    // The Files API (server/files): a file's metadata; its bytes live in a BlobStore under their
    // SHA-256, shared by files with the same content and freed when the last one goes.
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('files')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('filename', 'text', (c) => c.notNull())
        .addColumn('mime_type', 'text', (c) => c.notNull())
        .addColumn('size_bytes', 'bigint', (c) => c.notNull())
        .addColumn('sha256', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text')
        .addColumn('scope_id', 'text')
        .addColumn('downloadable', 'integer', (c) => c.notNull().defaultTo(1))
        .execute();
      await db.schema.createIndex('files_sha256').on('files').column('sha256').execute();
      await db.schema.createIndex('files_scope').on('files').columns(['scope_id', 'created_at']).execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('files').execute();
    },
  },
  '0012_blob_chunks': {
    // Files' bytes in the database itself (server/files/db-blob-store.ts), in chunks so none is
    // read or written whole: what several PostgreSQL instances share with nothing else to run.
    // A blob being uploaded has its chunks under a temporary key until its file is recorded.
    async up(db: Kysely<unknown>) {
      const bytes = db.getExecutor().adapter instanceof PostgresAdapter ? 'bytea' : 'blob';
      await db.schema
        .createTable('blob_chunks')
        .addColumn('blob_key', 'text', (c) => c.notNull())
        .addColumn('n', 'integer', (c) => c.notNull())
        .addColumn('data', sql.raw(bytes), (c) => c.notNull())
        .addPrimaryKeyConstraint('blob_chunks_pk', ['blob_key', 'n'])
        .execute();
      await db.schema
        .createTable('blobs')
        .addColumn('sha256', 'text', (c) => c.primaryKey())
        .addColumn('size', 'bigint', (c) => c.notNull())
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('blob_chunks').execute();
      await db.schema.dropTable('blobs').execute();
    },
  },
  '0013_session_list_columns': {
    // What the home page's list shows and filters on without reading any log: what an idle
    // session waits for (a verdict on a call: "needs approval", or a client's result) and the
    // first line of its newest message. Kept by the append that changes them (append-batch.ts).
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('sessions').addColumn('waiting_on', 'text').execute();
      await db.schema.alterTable('sessions').addColumn('last_message', 'text').execute();
      // Sessions stored before: both read once from their logs (the newest message; the newest
      // status event, if an idle waiting on calls), so the list tells the truth about them too.
      const typed = db as unknown as Kysely<Database>;
      for (const s of await typed.selectFrom('sessions').select(['id', 'status']).execute()) {
        const events = typed.selectFrom('events').select('payload').where('session_id', '=', s.id).orderBy('seq', 'desc').limit(1);
        const message = await events.where('type', 'in', ['user.message', 'agent.message']).executeTakeFirst();
        const status = s.status === 'idle' ? await events.where('type', 'in', [...STATUS_EVENT_TYPES]).executeTakeFirst() : undefined;
        const idle = status ? (JSON.parse(status.payload) as NewEvent) : null;
        const calls = idle?.type === 'session.status_idle' && idle.stop_reason?.type === 'requires_action' ? idle.stop_reason.event_ids : [];
        const payloads = calls.length > 0 ? await typed.selectFrom('events').select(['id', 'payload']).where('id', 'in', calls).execute() : [];
        const last_message = message ? listedMessage(JSON.parse(message.payload) as NewEvent) : null;
        const waiting_on = waitingOnFrom(payloads.map((p) => p.payload));
        if (last_message !== null || waiting_on !== null) await typed.updateTable('sessions').set({ last_message, waiting_on }).where('id', '=', s.id).execute();
      }
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('sessions').dropColumn('last_message').execute();
      await db.schema.alterTable('sessions').dropColumn('waiting_on').execute();
    },
  },
  '0016_memory_stores': {
    // Memory stores (server/memory): path-addressed text memories and every change to one as an
    // immutable version naming who made it. Versions outlive their memory (a delete is a version);
    // the store's delete removes all three. One live memory per (store, path).
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('memory_stores')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull())
        .addColumn('metadata', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addColumn('archived_at', 'text')
        .execute();
      await db.schema
        .createTable('memories')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('store_id', 'text', (c) => c.notNull())
        .addColumn('path', 'text', (c) => c.notNull())
        .addColumn('content', 'text', (c) => c.notNull())
        .addColumn('content_sha256', 'text', (c) => c.notNull())
        .addColumn('size_bytes', 'integer', (c) => c.notNull())
        .addColumn('version_id', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('memories_store_path').on('memories').columns(['store_id', 'path']).unique().execute();
      await db.schema
        .createTable('memory_versions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('store_id', 'text', (c) => c.notNull())
        .addColumn('memory_id', 'text', (c) => c.notNull())
        .addColumn('operation', 'text', (c) => c.notNull())
        .addColumn('path', 'text')
        .addColumn('content', 'text')
        .addColumn('content_sha256', 'text')
        .addColumn('size_bytes', 'integer')
        .addColumn('created_at', 'text', (c) => c.notNull())
        // The actor as the API names it: api_actor, session_actor or user_actor, and its id.
        .addColumn('actor_type', 'text', (c) => c.notNull())
        .addColumn('actor_id', 'text', (c) => c.notNull())
        .addColumn('redacted_at', 'text')
        .addColumn('redacted_by_type', 'text')
        .addColumn('redacted_by_id', 'text')
        .execute();
      await db.schema.createIndex('memory_versions_store').on('memory_versions').columns(['store_id', 'id']).execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('memory_versions').execute();
      await db.schema.dropTable('memories').execute();
      await db.schema.dropTable('memory_stores').execute();
    },
  },
  '0017_skills': {
    // Skills (server/skills): a skill and its immutable versions, each version's files one zip in
    // the BlobStore under its SHA-256 (shared with files of the same bytes, freed with the last).
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('skills')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('display_name', 'text', (c) => c.notNull())
        .addColumn('latest_version', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('skill_versions')
        .addColumn('skill_id', 'text', (c) => c.notNull())
        .addColumn('version', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull())
        .addColumn('sha256', 'text', (c) => c.notNull())
        .addColumn('size_bytes', 'bigint', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('skill_versions_pk', ['skill_id', 'version'])
        .execute();
      await db.schema.createIndex('skill_versions_sha256').on('skill_versions').column('sha256').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('skill_versions').execute();
      await db.schema.dropTable('skills').execute();
    },
  },
  '0018_session_thread_archives': {
    // Session threads (multiagent) live in the log (session.thread_created and their statuses);
    // only an archive is not an event: one row per archived thread.
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('session_thread_archives')
        .addColumn('session_id', 'text', (c) => c.notNull())
        .addColumn('thread_id', 'text', (c) => c.notNull())
        .addColumn('archived_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('session_thread_archives_pk', ['session_id', 'thread_id'])
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('session_thread_archives').execute();
    },
  },
  '0021_environment_keys': {
    // Keys of self-hosted environments: a worker polls its environment's queue with one.
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('environment_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('environment_id', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('hash', 'text', (c) => c.notNull().unique())
        .addColumn('prefix', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('last_used_at', 'text')
        .addColumn('revoked_at', 'text')
        .execute();
      await db.schema.createIndex('environment_keys_environment').on('environment_keys').column('environment_id').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('environment_keys').execute();
    },
  },
  '0022_work_items': {
    // The self-hosted work queue: rows every instance shares, claimed by conditional updates.
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('work_items')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('environment_id', 'text', (c) => c.notNull())
        .addColumn('data_type', 'text', (c) => c.notNull())
        .addColumn('data_id', 'text', (c) => c.notNull())
        // One live item per session: NULL once stopped (NULLs never collide).
        .addColumn('live_session_id', 'text', (c) => c.unique())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('metadata', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('polled_at', 'bigint')
        .addColumn('worker_id', 'text')
        .addColumn('acknowledged_at', 'text')
        .addColumn('started_at', 'text')
        .addColumn('latest_heartbeat_at', 'text')
        .addColumn('ttl_seconds', 'integer', (c) => c.notNull())
        .addColumn('lease_expires_at', 'bigint')
        .addColumn('stop_requested_at', 'text')
        .addColumn('stopped_at', 'text')
        .addColumn('lost_reason', 'text')
        .execute();
      await db.schema.createIndex('work_items_queue').on('work_items').columns(['environment_id', 'state', 'created_at']).execute();
      await db.schema.createIndex('work_items_lease').on('work_items').columns(['state', 'lease_expires_at']).execute();
      await db.schema
        .createTable('work_workers')
        .addColumn('environment_id', 'text', (c) => c.notNull())
        .addColumn('worker_id', 'text', (c) => c.notNull())
        .addColumn('last_poll_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('work_workers_pk', ['environment_id', 'worker_id'])
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('work_workers').execute();
      await db.schema.dropTable('work_items').execute();
    },
  },
  '0023_deployments': {
    // Deployments (server/deployments): an agent version bound to an environment, initial events
    // and an optional cron schedule; each trigger one append-only run. The unique key on
    // (deployment_id, scheduled_at) is what makes a scheduled time fire once across instances
    // (manual runs have no scheduled time: NULLs never collide, in SQLite or PostgreSQL).
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('deployments')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('agent_id', 'text', (c) => c.notNull())
        .addColumn('agent_version', 'integer', (c) => c.notNull())
        .addColumn('environment_id', 'text', (c) => c.notNull())
        .addColumn('config', 'text', (c) => c.notNull())
        .addColumn('metadata', 'text', (c) => c.notNull())
        .addColumn('schedule', 'text')
        .addColumn('paused_reason', 'text')
        // The next scheduled time not yet fired (ISO); null without a schedule.
        .addColumn('next_fire_at', 'text')
        .addColumn('last_run_at', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addColumn('archived_at', 'text')
        .execute();
      await db.schema.createIndex('deployments_due').on('deployments').columns(['next_fire_at']).execute();
      await db.schema
        .createTable('deployment_runs')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('deployment_id', 'text', (c) => c.notNull())
        .addColumn('agent_id', 'text', (c) => c.notNull())
        .addColumn('agent_version', 'integer', (c) => c.notNull())
        .addColumn('trigger_type', 'text', (c) => c.notNull())
        .addColumn('scheduled_at', 'text')
        .addColumn('session_id', 'text')
        .addColumn('error', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('deployment_runs_scheduled').on('deployment_runs').columns(['deployment_id', 'scheduled_at']).unique().execute();
      await db.schema.createIndex('deployment_runs_created').on('deployment_runs').columns(['created_at', 'id']).execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('deployment_runs').execute();
      await db.schema.dropTable('deployments').execute();
    },
  },
  '0024_webhooks': {
    // Webhooks (server/webhooks): endpoints with their signing key sealed (never stored open), and
    // one delivery row per event and endpoint, retried with back-off; its attempts are its log.
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('webhook_endpoints')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('event_types', 'text', (c) => c.notNull())
        .addColumn('sealed_key', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('disabled_at', 'text')
        .execute();
      await db.schema
        .createTable('webhook_deliveries')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('endpoint_id', 'text', (c) => c.notNull())
        .addColumn('event_id', 'text', (c) => c.notNull())
        .addColumn('event_type', 'text', (c) => c.notNull())
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('attempts', 'text', (c) => c.notNull())
        .addColumn('next_attempt_at', 'text')
        .addColumn('claimed_until', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['status', 'next_attempt_at']).execute();
      await db.schema.createIndex('webhook_deliveries_endpoint').on('webhook_deliveries').columns(['endpoint_id', 'created_at', 'id']).execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('webhook_deliveries').execute();
      await db.schema.dropTable('webhook_endpoints').execute();
    },
  },
  '0025_webhook_outbox': {
    // The session log's webhook events (lib/log-webhooks.ts): one outbox row per event written in
    // the append's own transaction, so a crash never keeps an event without its row or the reverse;
    // the webhook ticker turns each row into deliveries and deletes it in one transaction. A
    // delivery names the log event it reports (`source_id`; null for a command's event): the
    // unique key makes a second processing of one row queue nothing more (NULLs never collide).
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('webhook_outbox')
        .addColumn('source_id', 'text', (c) => c.notNull())
        .addColumn('event_type', 'text', (c) => c.notNull())
        .addColumn('session_id', 'text', (c) => c.notNull())
        .addColumn('session_thread_id', 'text')
        .addColumn('seq', 'integer', (c) => c.notNull())
        .addColumn('occurred_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('webhook_outbox_pk', ['source_id', 'event_type'])
        .execute();
      await db.schema.createIndex('webhook_outbox_order').on('webhook_outbox').columns(['occurred_at', 'seq']).execute();
      await db.schema.alterTable('webhook_deliveries').addColumn('source_id', 'text').execute();
      await db.schema.createIndex('webhook_deliveries_source').on('webhook_deliveries').columns(['endpoint_id', 'source_id', 'event_type']).unique().execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropIndex('webhook_deliveries_source').execute();
      await db.schema.alterTable('webhook_deliveries').dropColumn('source_id').execute();
      await db.schema.dropTable('webhook_outbox').execute();
    },
  },
};

/**
 * Brings the database to the latest schema; a no-op when it is already there. Returns the
 * migrations that ran. Throws the first failure (Kysely runs each migration in a transaction).
 */
export async function migrateToLatest<DB>(db: Kysely<DB>): Promise<MigrationResult[]> {
  const migrator = new Migrator({ db, provider: { getMigrations: () => Promise.resolve(migrations) } });
  const { error, results } = await migrator.migrateToLatest();
  if (error !== undefined) throw error instanceof Error ? error : new Error('migration failed', { cause: error });
  return results ?? [];
}
