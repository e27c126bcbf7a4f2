import 'server-only';
import type { EnvironmentConfig } from '~/lib/agent';
import { type Hand, type HandKind, ToolError, lostHandText } from '~/lib/hand';
import type { NetworkPolicy } from '~/lib/network-policy';
import { type HandEntry, type HandScope, newEntry, usable } from '~/server/hands/hand-entry';
import { type ReconcileDeps, reconcileWithLog } from '~/server/hands/log-reconcile';
import { type SessionHands, SessionHandsTable } from '~/server/hands/session-hands';
import { type ProvisionRequest, networkPolicyOf, provisionSpec } from '~/server/hands/provision-spec';
import { type ProvisionSpec, type Provisioner, isSuspendable } from '~/server/hands/provisioner';
import { IdleReaper, type LiveHand, type ReaperLimits, type SuspendReason } from '~/server/hands/idle-reaper';
import { type SuspendDeps, resumeEntry, suspendEntry } from '~/server/hands/suspend';
import type { Workspaces } from '~/server/hands/workspaces';
import type { HandSecret } from '~/server/hands/sandbox/hand-secret';
import type { WarmPool } from '~/server/hands/warm-pool';
import { BrowserHand } from '~/server/hands/browser-hand';
import { attachTab, type BrowserTimeouts, browserHandFor } from '~/server/hands/browser-attach';
import type { LiveBus } from '~/server/session/live-bus';
import { errorFields, logger } from '~/server/log';
import { metrics } from '~/server/metrics/metrics';
import type { SessionStore } from '~/server/session/store';
import type { HandRepositories } from '~/server/hands/repository-port';
import { withMounts } from '~/server/hands/hand-mounts';
import type { SessionMounts } from '~/server/hands/mount-port';

const log = logger('hands');

export type { HandEntry, HandScope } from '~/server/hands/hand-entry';

export type { ProvisionRequest } from '~/server/hands/provision-spec';

export interface HandRegistryOptions {
  store: SessionStore;
  live: LiveBus;
  provisioners: Partial<Record<HandKind, Provisioner>>;
  /** The kind a session gets when a call needs a hand and it has none. */
  defaultKind: HandKind;
  /** Extra hosts sandbox hands (and web_fetch) may reach, on top of a session's own `allowed_domains`. */
  allowedDomains?: string[];
  /** A session's environment's config (null when it is gone): its networking is part of the session's network policy. */
  environment?: (environmentId: string) => Promise<EnvironmentConfig | null>;
  /** `PADDOCK_ALLOW_UNRESTRICTED_NETWORK`: an environment with unrestricted networking gets it. */
  allowUnrestrictedNetwork?: boolean;
  /** Operator-configured remote endpoints the brain may attach by name (tokens stay here). */
  remoteEndpoints?: Record<string, { url: string; token?: string }>;
  pool?: WarmPool | null;
  browserTimeouts?: BrowserTimeouts;
  /** Where local hands' folders are, by session (resume after a restart, delete with the session). */
  workspaces?: Workspaces;
  /** Suspend idle hands and cap live ones (absent: hands run until released or lost). */
  lifecycle?: ReaperLimits;
  /** A session's repositories: the git proxy on its hands' allowlist, cloned into each new hand, capabilities revoked with the hand. */
  repositories?: Pick<HandRepositories, 'hosts' | 'cloneInto' | 'revoke'>;
  /** A session's `environment_variable` secrets (decrypted by the vault, never here): for its sandbox hands' egress proxies. */
  handSecrets?: (sessionId: string) => Promise<HandSecret[]>;
  /** A session's mounts (its files; outputs kept as files): placed before each call, collected after (hand-mounts.ts). */
  mounts?: SessionMounts;
}

/**
 * The hands each session holds on this process. Hands are provisioned lazily (no hand exists
 * until a call needs one), are cattle (a lost hand is recorded and replaced on demand), and their
 * lifecycle is written to the session log as `hand.*` events.
 */
export class HandRegistry {
  private readonly table: SessionHandsTable;
  private readonly reaper: IdleReaper | null;

  constructor(private readonly o: HandRegistryOptions) {
    const reconcile: ReconcileDeps = {
      ...o,
      browserHand: (sessionId, id, engine) => this.browserHandObject(sessionId, id, engine),
      watch: (sessionId, id, hand) => this.watch(sessionId, id, hand),
      specFor: (sessionId, request) => this.specFor(sessionId, request),
    };
    this.table = new SessionHandsTable((scope, s) => reconcileWithLog(reconcile, scope, s));
    this.reaper = o.lifecycle ? new IdleReaper(this, o.lifecycle).start() : null;
  }

  /** Hands with a live process or connection on this process, by kind (the metrics' gauge). */
  liveHandCounts(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const s of this.table.settledSessions()) {
      for (const e of s.entries.values()) if (e.hand !== null && e.status === 'ready') counts[e.kind] = (counts[e.kind] ?? 0) + 1;
    }
    return counts;
  }

  /** The session side of mounts (absent: hands get none); a browser tab's mounts go through it too (server/api/tab-mounts.ts). */
  get mounts(): SessionMounts | undefined {
    return this.o.mounts;
  }

  get defaultKind(): HandKind {
    return this.o.defaultKind;
  }

  /** The hand a call runs on: the one it names, else the current one, else a fresh default. */
  async resolve(scope: HandScope, requested: string | undefined): Promise<HandEntry> {
    if (requested) {
      const { s, e } = await this.table.entry(scope, requested);
      if (!e) throw new ToolError(`no hand named ${requested} in this session (hands: ${describe(s) || 'none yet'})`);
      if (e.status === 'lost') throw new ToolError(lostHandText(e.id, e.reason ?? 'it is gone'));
      if (e.status === 'suspended') return this.resume(scope, e);
      if (e.status !== 'ready' || !e.hand) {
        throw new ToolError(`hand ${requested} is ${e.status}${e.reason ? ` (${e.reason})` : ''}; call provision for a new one, or omit "hand" to get one`);
      }
      return e;
    }
    const s = await this.table.state(scope);
    const current = [...s.entries.values()].reverse().find(usable);
    if (current) return current.status === 'suspended' ? this.resume(scope, current) : current;
    s.provisioningDefault ??= this.provision(scope, { kind: this.o.defaultKind }).finally(() => {
      s.provisioningDefault = null;
    });
    return s.provisioningDefault;
  }

  /** Starts a new hand of the given kind and makes it the session's current one. */
  async provision(scope: HandScope, request: ProvisionRequest): Promise<HandEntry> {
    const s = await this.table.state(scope);
    const spec = await this.specFor(scope.sessionId, request);
    const provisioner = this.o.provisioners[spec.kind];
    if (!provisioner) throw new ToolError(`hands of kind ${spec.kind} are not available on this server (available: ${Object.keys(this.o.provisioners).join(', ')})`);
    s.counter += 1;
    const endpoint = spec.kind === 'remote' ? request.endpoint : undefined;
    const entry: HandEntry = { ...newEntry(`${spec.kind}-${s.counter}`, spec.kind, 'starting'), spec, ...(endpoint ? { endpoint } : {}) };
    s.entries.set(entry.id, entry);
    const progress = (phase: 'starting' | 'ready' | 'failed', detail?: string) =>
      this.o.live.publish({ kind: 'hand', session_id: scope.sessionId, hand: entry.id, hand_kind: spec.kind, phase, ...(detail ? { detail } : {}) });
    progress('starting', 'provisioning');
    const t0 = performance.now();
    try {
      const pooled = (await this.o.pool?.take(spec, scope.signal)) ?? null;
      const source = pooled ? 'pool' : 'cold';
      // A pooled hand was started unnamed: from now on its errors say the session's name for it.
      if (isSuspendable(pooled)) pooled.rename(entry.id);
      entry.hand = pooled ?? (await provisioner.provision(entry.id, spec, { signal: scope.signal, onProgress: (p, d) => progress(p, d) }));
      if (isSuspendable(entry.hand)) await this.o.workspaces?.adopt(scope.sessionId, entry.id, entry.hand.workspace);
      metrics().provisions.inc({ kind: spec.kind, source });
      metrics().provisionDuration.observe({ kind: spec.kind, source }, (performance.now() - t0) / 1000);
    } catch (e) {
      entry.status = 'lost';
      entry.reason = e instanceof Error ? e.message : String(e);
      progress('failed', entry.reason);
      throw new ToolError(`could not provision a ${spec.kind} hand: ${entry.reason}`);
    }
    entry.status = 'ready';
    progress('ready');
    const hand = entry.hand;
    this.watch(scope.sessionId, entry.id, hand);
    const resources = 'resources' in spec && spec.resources ? { resources: spec.resources } : {};
    const stored = await scope.emit(
      { type: 'hand.provisioned', hand: entry.id, kind: spec.kind, provision_ms: Math.round(performance.now() - t0), ...resources, ...(endpoint ? { endpoint } : {}) },
      `hand:${entry.id}:provisioned`,
    );
    entry.provisionedSeq = stored.seq;
    log.info('hand provisioned', { session: scope.sessionId, hand: entry.id, ms: Math.round(performance.now() - t0) });
    if (this.o.repositories) {
      // Busy while cloning, so the reaper does not suspend it under the clone.
      entry.inFlight += 1;
      try {
        await this.o.repositories.cloneInto(scope, entry.id, hand);
      } finally {
        entry.inFlight -= 1;
      }
    }
    await this.reaper?.enforce({ sessionId: scope.sessionId, hand: entry.id });
    return entry;
  }

  /** A browser tab offers itself as a hand (`browser-attach.ts`): it joins the session's, or a new one is made. */
  async attachBrowser(scope: HandScope, tabId: string, engine: string): Promise<HandEntry> {
    const s = await this.table.state(scope, { fresh: true });
    return attachTab(
      s,
      scope,
      tabId,
      (id) => this.browserHandObject(scope.sessionId, id, engine),
      (hand, id) => this.watch(scope.sessionId, id, hand),
    );
  }

  private browserHandObject(sessionId: string, id: string, engine: string): BrowserHand {
    return browserHandFor(this.o.store, this.o.browserTimeouts, sessionId, id, engine);
  }

  /** The live browser hand of a session by id, for heartbeats and claims from its tabs. */
  async browserHand(scope: HandScope, id: string): Promise<BrowserHand | null> {
    const { e } = await this.table.entry(scope, id);
    return e?.status === 'ready' && e.hand instanceof BrowserHand ? e.hand : null;
  }

  /** Whether the named hand can take a call now, or after a resume (without provisioning anything). */
  async isReady(scope: HandScope, id: string): Promise<boolean> {
    const { e } = await this.table.entry(scope, id);
    return e !== undefined && usable(e);
  }

  /** Why the named hand was lost, or null when it was not. */
  async lostReason(scope: HandScope, id: string): Promise<string | null> {
    const { e } = await this.table.entry(scope, id);
    return e?.status === 'lost' ? (e.reason ?? 'it is gone') : null;
  }

  /**
   * A hand provisioned after the call at `seq` was made and lost since: the hand a call that
   * named none (the session had none yet) was running on when its server died.
   */
  async lostSince(scope: HandScope, seq: number): Promise<{ id: string; reason: string } | null> {
    const s = await this.table.state(scope);
    const e = [...s.entries.values()].find((x) => x.kind !== 'browser' && x.provisionedSeq !== undefined && x.provisionedSeq > seq);
    return e?.status === 'lost' ? { id: e.id, reason: e.reason ?? 'it is gone' } : null;
  }

  /** The id calls without a `hand` would go to right now, without provisioning anything. */
  async peekCurrent(scope: HandScope): Promise<string | null> {
    const s = await this.table.state(scope);
    return [...s.entries.values()].reverse().find(usable)?.id ?? null;
  }

  /**
   * Runs a call on a hand, resuming it first if it was suspended meanwhile. While the call runs
   * the hand counts as busy, so it is never suspended under it.
   */
  async use<T>(scope: HandScope, entry: HandEntry, fn: (hand: Hand) => Promise<T>): Promise<T> {
    entry.inFlight += 1;
    entry.lastUsed = Date.now();
    try {
      if (entry.status === 'suspended') await this.resume(scope, entry);
      const hand = entry.hand;
      if (entry.status !== 'ready' || !hand) throw new ToolError(entry.status === 'lost' ? lostHandText(entry.id, entry.reason ?? 'it is gone') : `hand ${entry.id} is ${entry.status}`);
      return await withMounts(this.o.mounts, scope.sessionId, entry.id, hand, fn);
    } finally {
      entry.inFlight -= 1;
      entry.lastUsed = Date.now();
    }
  }

  async release(scope: HandScope, id: string): Promise<void> {
    const s = await this.table.state(scope);
    const e = s.entries.get(id);
    if (!e) throw new ToolError(`no hand named ${id} in this session`);
    if (e.status !== 'ready' && e.status !== 'suspended') throw new ToolError(`hand ${id} is already ${e.status}`);
    e.status = 'released';
    const hand = e.hand;
    e.hand = null;
    await this.o.repositories?.revoke(scope.sessionId, id);
    await hand?.close().catch((err: unknown) => log.warn('hand close failed', { hand: id, ...errorFields(err) }));
    // Released hands are cattle: their files go with them (a suspended one's too).
    await this.o.workspaces?.remove(scope.sessionId, id);
    await scope.emit({ type: 'hand.released', hand: id }, `hand:${id}:released`);
  }

  async list(scope: HandScope): Promise<HandEntry[]> {
    return [...(await this.table.state(scope)).entries.values()];
  }

  /**
   * Moves a ready hand, workspace and all, to another session. Both logs record it; the hand is
   * the receiving session's current hand from then on.
   */
  async transfer(from: HandScope, id: string, to: HandScope): Promise<HandEntry> {
    const src = await this.table.state(from);
    const e = src.entries.get(id);
    if (e?.status === 'suspended') await this.resume(from, e);
    if (!e || e.status !== 'ready' || !e.hand) throw new ToolError(`hand ${id} is not a ready hand of session ${from.sessionId}`);
    // Its tabs serve the session page they are open on: moved, it would have no tab and be lost.
    if (e.kind === 'browser') throw new ToolError(`hand ${id} lives in the browser tabs of session ${from.sessionId} and cannot move: open the other session in a tab to give it a browser hand`);
    const dst = await this.table.state(to, { fresh: true });
    dst.counter += 1;
    const moved: HandEntry = { ...newEntry(`${e.kind}-${dst.counter}`, e.kind, 'ready'), hand: e.hand, startedAt: e.startedAt, ...(e.spec ? { spec: e.spec } : {}) };
    dst.entries.set(moved.id, moved);
    e.status = 'released';
    e.reason = `transferred to ${to.sessionId}`;
    e.hand = null;
    const hand = moved.hand!;
    if (isSuspendable(hand)) hand.rename(moved.id);
    await this.o.workspaces?.move({ sessionId: from.sessionId, handId: id }, { sessionId: to.sessionId, handId: moved.id });
    // Its repositories' capabilities belong to the session it leaves.
    await this.o.repositories?.revoke(from.sessionId, id);
    this.watch(to.sessionId, moved.id, hand);
    await from.emit({ type: 'hand.released', hand: id, transferred_to: { session_id: to.sessionId, hand: moved.id } }, `hand:${id}:released`);
    const stored = await to.emit({ type: 'hand.provisioned', hand: moved.id, kind: e.kind, provision_ms: 0, transferred_from: { session_id: from.sessionId, hand: id } }, `hand:${moved.id}:provisioned`);
    moved.provisionedSeq = stored.seq;
    return moved;
  }

  async closeAll(): Promise<void> {
    this.reaper?.stop();
    const all = await this.table.drain();
    const hands = all.flatMap((s) => [...s.entries.values()]).flatMap((e) => (e.hand ? [e.hand] : []));
    await Promise.allSettled(hands.map((h) => h.close()));
    await this.o.pool?.close();
  }

  /**
   * The server is stopping: idle local hands are suspended (their files kept, `hand.suspended`), so
   * the next start resumes them on the same files instead of finding them lost; then the pool, the
   * reaper and every other hand stop.
   */
  async stopAll(): Promise<void> {
    this.reaper?.stop();
    const entries = [...this.table.settledSessions()].flatMap((s) => [...s.entries.values()].map((e) => ({ sessionId: s.sessionId, e })));
    await Promise.allSettled(entries.map(({ sessionId, e }) => suspendEntry(this.suspendDeps, sessionId, e, 'shutdown')));
    await this.closeAll();
  }

  /** The sessions whose hands this process holds in memory (for tests and the bench). */
  knownSessions(): string[] {
    return this.table.knownSessions();
  }

  /** Local hand processes of every session here, for the reaper. */
  liveHands(): LiveHand[] {
    const out: LiveHand[] = [];
    for (const s of this.table.settledSessions()) {
      for (const e of s.entries.values()) {
        if (e.status === 'ready' && isSuspendable(e.hand)) out.push({ sessionId: s.sessionId, hand: e.id, lastUsed: e.lastUsed, inFlight: e.inFlight });
      }
    }
    return out;
  }

  /** Stops a hand's process and keeps its workspace; the next call resumes it (see `use`). */
  async suspend(sessionId: string, id: string, reason: SuspendReason): Promise<void> {
    const e = this.table.settledSession(sessionId)?.entries.get(id);
    if (e) await suspendEntry(this.suspendDeps, sessionId, e, reason);
  }

  /** Starts a suspended hand again on its workspace, under its name (parallel calls share it). */
  private async resume(scope: HandScope, e: HandEntry): Promise<HandEntry> {
    e.resuming ??= resumeEntry(this.suspendDeps, scope, e)
      .then(() => this.reaper?.enforce({ sessionId: scope.sessionId, hand: e.id }))
      .finally(() => {
        e.resuming = undefined;
      });
    await e.resuming;
    return e;
  }

  private get suspendDeps(): SuspendDeps {
    return {
      store: this.o.store,
      provisioners: this.o.provisioners,
      workspaces: this.o.workspaces,
      watch: (sessionId, id, hand) => this.watch(sessionId, id, hand),
    };
  }

  /**
   * Lets go of sessions that hold no hand process and were not used for `idleMs`: a busy server
   * does not keep every session it ever saw. Their hands are read from the log again on next use.
   */
  forgetIdleSessions(now: number, idleMs: number): void {
    this.table.forgetIdle(now, idleMs);
  }

  /** Ends a deleted session's hands and removes their workspaces (also those of suspended and lost hands). */
  async deleteSession(sessionId: string): Promise<void> {
    const s = await this.table.forget(sessionId);
    const hands = [...(s?.entries.values() ?? [])].flatMap((e) => {
      const h = e.hand;
      Object.assign(e, { status: 'released', hand: null });
      return h ? [h] : [];
    });
    await Promise.allSettled(hands.map((h) => h.close()));
    await this.o.workspaces?.removeSession(sessionId);
  }

  /** Records the hand lost when it dies. */
  private watch(sessionId: string, id: string, hand: Hand): void {
    void hand.lost.then((reason) => this.markLost(sessionId, id, hand, reason));
  }

  /** Records a hand's death once, whoever notices first (the watcher or a failing call). */
  private async markLost(sessionId: string, id: string, hand: Hand, reason: string): Promise<void> {
    const s = await this.table.held(sessionId);
    const e = s?.entries.get(id);
    if (!e || e.hand !== hand || e.status !== 'ready') return;
    e.status = 'lost';
    e.reason = reason;
    e.hand = null;
    log.warn('hand lost', { session: sessionId, hand: id, reason });
    await this.o.repositories?.revoke(sessionId, id);
    // The model is told its files are gone: so they are, and they take no disk.
    await this.o.workspaces?.remove(sessionId, id);
    await this.o.store
      .emitEvent(sessionId, { type: 'hand.lost', hand: id, reason }, { idempotencyKey: `hand:${id}:lost` })
      .catch((err: unknown) => log.error('could not record a lost hand', { session: sessionId, hand: id, ...errorFields(err) }));
  }

  /**
   * What a session may reach over the network (read fresh: its environment may have changed): the
   * one answer its sandbox hands and the web_fetch tool both go by.
   */
  networkPolicy(sessionId: string): Promise<NetworkPolicy> {
    return networkPolicyOf(this.o, sessionId);
  }

  private specFor(sessionId: string, request: ProvisionRequest): Promise<ProvisionSpec> {
    return provisionSpec(this.o, sessionId, request);
  }
}

function describe(s: SessionHands): string {
  return [...s.entries.values()].map((e) => `${e.id} (${e.status})`).join(', ');
}
