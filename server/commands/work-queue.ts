import 'server-only';
import { LRUCache } from 'lru-cache';
import { z } from 'zod';
import { InvalidInputError, isDomainError } from '~/lib/errors';
import { describeZodError } from '~/lib/events';
import { SELF_HOSTED_HAND } from '~/lib/hand';
import type { Environment } from '~/lib/agent';
import type { Access } from '~/server/access/access';
import type { EnvironmentKeyInfo, EnvironmentKeys } from '~/server/access/environment-keys';
import type { AgentStore } from '~/server/agents/agent-store';
import { ANSWER_TYPES } from '~/server/agents/answers';
import { foldLog } from '~/server/harness/core/decide';
import { logger, errorFields } from '~/server/log';
import type { ListPage } from '~/server/session/keyset-page';
import type { SessionStore } from '~/server/session/store';
import { type HeartbeatAnswer, type WorkItem, type WorkRow, type WorkStats, type WorkStore, workItemOf } from '~/server/session/work-store';

const log = logger('work-queue');

/** The longest a poll blocks (the SDK asks for 999 ms; a hand-written worker may ask for more). */
export const MAX_BLOCK_MS = 30_000;
/** A polled item not acked for this long goes to the next poll when the poll names no `reclaim_older_than_ms`. */
const DEFAULT_RECLAIM_MS = 60_000;
/** How often a blocked poll looks again, for items another instance queued (this instance's own wake it at once). */
const RECHECK_MS = 200;

const PollQuery = z
  .object({
    block_ms: z.coerce.number().int().min(0).max(MAX_BLOCK_MS).optional(),
    reclaim_older_than_ms: z.coerce.number().int().min(0).max(24 * 3600_000).optional(),
  })
  .strict();
const HeartbeatQuery = z
  .object({
    desired_ttl_seconds: z.coerce.number().int().min(1).max(3600).optional(),
    expected_last_heartbeat: z.string().min(1).max(64).optional(),
  })
  .strict();
const StopBody = z.object({ force: z.boolean().optional() }).strict();
const UpdateBody = z.object({ metadata: z.record(z.string().min(1).max(64), z.string().max(512).nullable()).refine((m) => Object.keys(m).length <= 16, { message: 'at most 16 keys' }) }).strict();
const KeyBody = z.object({ name: z.string().trim().min(1).max(256).optional() }).strict();
const ListQuery = z.object({ limit: z.coerce.number().int().min(1).max(100).default(20), page: z.string().max(500).optional() }).strict();
const WORKER_ID = z.string().trim().min(1).max(200);

function parse<T extends z.ZodType>(schema: T, input: unknown, what: string): z.output<T> {
  const r = schema.safeParse(input ?? {});
  if (!r.success) throw new InvalidInputError(`${what}: ${describeZodError(r.error)}`);
  return r.data;
}

export interface WorkQueueDeps {
  store: SessionStore;
  work: WorkStore;
  agents: AgentStore;
  access: Access;
  keys: EnvironmentKeys;
  /** Wakes a session's harness (a lost worker's calls are to be failed). */
  wake: (sessionId: string) => void;
}


/**
 * The self-hosted work queue's use cases, for both edges and the harness: a session that needs a
 * worker gets one live item; workers poll, ack, heartbeat and stop items; an item whose lease ran
 * out is lost, and the calls its worker had open fail naming it (never re-run).
 */
export class WorkQueue {
  readonly #waiters = new Map<string, Set<() => void>>();
  /**
   * Each session's answer to `environmentOf` ('' for none), for the 10,000 most recent (a few
   * hundred bytes each): a session's environment and an environment's type are fixed at creation,
   * so a wake reads neither again.
   */
  readonly #sessionEnvironments = new LRUCache<string, string>({ max: 10_000 });

  constructor(private readonly d: WorkQueueDeps) {}

  /** The environment, which must be self-hosted for its queue and keys. */
  async selfHostedEnvironment(environmentId: string): Promise<Environment> {
    const env = await this.d.agents.getEnvironment(environmentId);
    if (env.config.type !== 'self_hosted') throw new InvalidInputError(`environment ${environmentId} is ${env.config.type}: only a self_hosted environment has a work queue and keys`);
    return env;
  }

  /**
   * The session's environment when it is self-hosted, else null (the harness's port, asked at every
   * wake and tool-calling turn): read once per session, then remembered.
   */
  async environmentOf(sessionId: string): Promise<string | null> {
    const known = this.#sessionEnvironments.get(sessionId);
    if (known !== undefined) return known || null;
    const session = await this.d.store.getSession(sessionId);
    // No session (yet): nothing is remembered for it.
    if (!session) return null;
    const found = await this.#selfHostedOf(session.environment_id);
    this.#sessionEnvironments.set(sessionId, found ?? '');
    return found;
  }

  async #selfHostedOf(envId: string | null): Promise<string | null> {
    if (envId === null) return null;
    try {
      const env = await this.d.agents.getEnvironment(envId);
      return env.config.type === 'self_hosted' ? env.id : null;
    } catch (e) {
      if (isDomainError(e) && e.code === 'not_found') return null;
      throw e;
    }
  }

  /** The session's live item, made (and pollers woken) if it has none. */
  async needWorker(sessionId: string, environmentId: string): Promise<WorkItem> {
    const { item, created } = await this.d.work.ensureSessionItem(environmentId, sessionId);
    if (created) {
      log.info('work queued', { session: sessionId, work: item.id, environment: environmentId });
      this.notify(environmentId);
    }
    return workItemOf(item);
  }

  /** A deleted session's live item stops, so no worker keeps running or polling for it. */
  async sessionDeleted(sessionId: string): Promise<void> {
    this.#sessionEnvironments.delete(sessionId);
    const stopped = await this.d.work.stopSessionItem(sessionId);
    if (stopped) log.info('work stopped with its session', { session: sessionId, work: stopped.id });
  }

  /**
   * A healthcheck item (the SDK's `{type: 'healthcheck'}`): the next worker to poll claims it and
   * stops it, so its state (stopped, naming the worker) says a worker reached Paddock.
   */
  async healthcheck(environmentId: string): Promise<WorkItem> {
    await this.selfHostedEnvironment(environmentId);
    const row = await this.d.work.enqueueHealthcheck(environmentId);
    log.info('healthcheck queued', { work: row.id, environment: environmentId });
    this.notify(environmentId);
    return workItemOf(row);
  }

  private notify(environmentId: string): void {
    for (const wake of this.#waiters.get(environmentId) ?? []) wake();
  }

  private wait(environmentId: string, ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const set = this.#waiters.get(environmentId) ?? new Set();
      this.#waiters.set(environmentId, set);
      const done = () => {
        clearTimeout(timer);
        set.delete(done);
        if (set.size === 0) this.#waiters.delete(environmentId);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      set.add(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  /** The oldest item no one holds, handed to this worker with its secret; null after `block_ms` with none. */
  async poll(environmentId: string, workerIdHeader: string | null, query: unknown, signal: AbortSignal): Promise<WorkItem | null> {
    const q = parse(PollQuery, query, 'query');
    const workerId = workerIdHeader === null ? null : parse(WORKER_ID, workerIdHeader, 'anthropic-worker-id');
    await this.selfHostedEnvironment(environmentId);
    if (workerId !== null) await this.d.work.recordPoll(environmentId, workerId);
    const until = Date.now() + (q.block_ms ?? 0);
    for (;;) {
      const row = await this.d.work.claim(environmentId, workerId, q.reclaim_older_than_ms ?? DEFAULT_RECLAIM_MS);
      if (row) return workItemOf(row, await this.secretOf(row));
      const left = until - Date.now();
      if (left <= 0 || signal.aborted) return null;
      await this.wait(environmentId, Math.min(left, RECHECK_MS), signal);
    }
  }

  /** base64url JSON the SDK's worker decodes: `sessions_token` authorizes the item's own calls. */
  private async secretOf(row: WorkRow): Promise<string> {
    return Buffer.from(JSON.stringify({ version: 1, sessions_token: await this.d.access.workToken(row.id) })).toString('base64url');
  }

  async ack(environmentId: string, workId: string): Promise<WorkItem> {
    return workItemOf(await this.d.work.ack(environmentId, workId));
  }

  heartbeat(environmentId: string, workId: string, query: unknown): Promise<HeartbeatAnswer> {
    const q = parse(HeartbeatQuery, query, 'query');
    return this.d.work.heartbeat(environmentId, workId, q.expected_last_heartbeat, q.desired_ttl_seconds);
  }

  async stop(environmentId: string, workId: string, body: unknown): Promise<WorkItem> {
    const p = parse(StopBody, body, 'body');
    const { row, stopped } = await this.d.work.stop(environmentId, workId, p.force ?? false);
    if (stopped) await this.afterStop(row);
    return workItemOf(row);
  }

  /**
   * A session's item stopped by its worker (idle, or shutting down): calls the session made since
   * the worker last looked still wait, so they get a new item. (A worker runs every call it sees
   * and posts its result before it stops.)
   */
  private async afterStop(row: WorkRow): Promise<void> {
    if (row.data_type !== 'session') return;
    // A session deleted meanwhile needs no worker (its item stopped with it).
    if (!(await this.d.store.getSession(row.data_id))) return;
    // Only the events that decide whether a call still waits (as checkAnswers reads them).
    const log = await this.d.store.getEvents(row.data_id, { types: [...ANSWER_TYPES] });
    if (foldLog(log).awaitingWorker.length > 0) await this.needWorker(row.data_id, row.environment_id);
  }

  /**
   * Items whose lease ran out (their worker died or was cut off): the session is told first, by a
   * `hand.lost` keyed by the item (stored once, whichever instance gets there), then the item is
   * stopped as lost. A lease past its expiry is never extended again, so nothing the worker sends
   * after this can revive it.
   */
  async sweepLost(): Promise<WorkRow[]> {
    const lost: WorkRow[] = [];
    for (const row of await this.d.work.dueLeases()) {
      if (row.data_type === 'session') {
        const reason = `worker ${row.worker_id ?? '(unnamed)'} was lost mid-call: its lease on work item ${row.id} ran out with no heartbeat for ${row.ttl_seconds}s`;
        await this.d.store.emitEvent(row.data_id, { type: 'hand.lost', hand: SELF_HOSTED_HAND, reason }, { idempotencyKey: `work-lost:${row.id}` });
      }
      const stopped = await this.d.work.markLost(row.id);
      if (stopped) {
        lost.push(stopped);
        log.warn('worker lost', { work: row.id, worker: row.worker_id, environment: row.environment_id });
        if (row.data_type === 'session') this.d.wake(row.data_id);
      }
    }
    return lost;
  }

  /** One sweep, its failure logged (the ticker's job). */
  async tick(): Promise<void> {
    try {
      await this.sweepLost();
    } catch (e) {
      log.warn('work sweep failed', errorFields(e));
      throw e;
    }
  }

  async retrieve(environmentId: string, workId: string): Promise<WorkItem> {
    return workItemOf(await this.d.work.get(environmentId, workId));
  }

  async update(environmentId: string, workId: string, body: unknown): Promise<WorkItem> {
    const p = parse(UpdateBody, body, 'body');
    return workItemOf(await this.d.work.updateMetadata(environmentId, workId, p.metadata));
  }

  async list(environmentId: string, query: unknown): Promise<ListPage<WorkItem>> {
    const q = parse(ListQuery, query, 'query');
    await this.d.agents.getEnvironment(environmentId);
    const page = await this.d.work.list(environmentId, { limit: q.limit, page: q.page });
    return { data: page.data.map((r) => workItemOf(r)), next_page: page.next_page };
  }

  async stats(environmentId: string): Promise<WorkStats> {
    await this.d.agents.getEnvironment(environmentId);
    return this.d.work.stats(environmentId);
  }

  /** A new key for a self-hosted environment: the key itself is in this answer only. */
  async createKey(environmentId: string, body: unknown): Promise<EnvironmentKeyInfo & { key: string }> {
    const p = parse(KeyBody, body, 'body');
    await this.selfHostedEnvironment(environmentId);
    return this.d.keys.create(environmentId, p.name ?? 'worker key');
  }

  async listKeys(environmentId: string): Promise<{ data: EnvironmentKeyInfo[]; next_page: null }> {
    await this.d.agents.getEnvironment(environmentId);
    return { data: await this.d.keys.list(environmentId), next_page: null };
  }

  async revokeKey(environmentId: string, keyId: string): Promise<{ id: string; type: 'environment_key_deleted' }> {
    await this.d.keys.revoke(environmentId, keyId);
    return { id: keyId, type: 'environment_key_deleted' };
  }
}
