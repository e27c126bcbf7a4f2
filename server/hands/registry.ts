import 'server-only';
import { randomUUID } from 'node:crypto';
import type { EnvironmentConfig } from '~/lib/agent';
import { type Hand, type HandKind, ToolError, lostHandText } from '~/lib/hand';
import { type HandRecord, handsInLog } from '~/lib/hand-log';
import type { NetworkPolicy } from '~/lib/network-policy';
import { type HandEntry, type HandScope, fromRecord, newEntry, usable } from '~/server/hands/hand-entry';
import { type ProvisionRequest, networkPolicyOf, provisionSpec } from '~/server/hands/provision-spec';
import { type ProvisionSpec, type Provisioner, isSuspendable } from '~/server/hands/provisioner';
import { IdleReaper, type LiveHand, type ReaperLimits, type SuspendReason } from '~/server/hands/idle-reaper';
import { type SuspendDeps, resumeEntry, suspendEntry } from '~/server/hands/suspend';
import type { Workspaces } from '~/server/hands/workspaces';
import type { HandSecret } from '~/server/hands/sandbox/hand-secret';
import type { WarmPool } from '~/server/hands/warm-pool';
import { BrowserHand } from '~/server/hands/browser-hand';
import type { LiveBus } from '~/server/session/live-bus';
import { errorFields, logger } from '~/server/log';
import { metrics } from '~/server/metrics/metrics';
import type { SessionStore } from '~/server/session/store';
import type { RepositoryHands } from '~/server/proxy/repository-hands';

const log = logger('hands');

export type { HandEntry, HandScope } from '~/server/hands/hand-entry';

export type { ProvisionRequest } from '~/server/hands/provision-spec';

interface SessionHands {
  sessionId: string;
  entries: Map<string, HandEntry>;
  /** When a call or request last looked at this session's hands (ms). */
  touchedAt: number;
  counter: number;
  /** The in-flight provisioning of the default hand, shared by parallel calls. */
  provisioningDefault: Promise<HandEntry> | null;
  /** The newest lease epoch this process has reconciled the session's hands for. */
  epoch: number;
  syncing: Promise<void> | null;
}

/** How long re-connecting to a remote hand after a takeover may take before it is reported lost. */
const REATTACH_TIMEOUT_MS = 10_000;
const GONE_WITH_SERVER = 'its server process is gone (hands on a server machine do not outlive the server that started them)';

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
  browserTimeouts?: { heartbeatTimeoutMs?: number; claimTimeoutMs?: number; callTimeoutMs?: number };
  /** Where local hands' folders are, by session (resume after a restart, delete with the session). */
  workspaces?: Workspaces;
  /** Suspend idle hands and cap live ones (absent: hands run until released or lost). */
  lifecycle?: ReaperLimits;
  /** A session's repositories: the git proxy on its hands' allowlist, cloned into each new hand, capabilities revoked with the hand. */
  repositories?: Pick<RepositoryHands, 'hosts' | 'cloneInto' | 'revoke'>;
  /** A session's `environment_variable` secrets (decrypted by the vault, never here): for its sandbox hands' egress proxies. */
  handSecrets?: (sessionId: string) => Promise<HandSecret[]>;
}

/**
 * The hands each session holds on this process. Hands are provisioned lazily (no hand exists
 * until a call needs one), are cattle (a lost hand is recorded and replaced on demand), and their
 * lifecycle is written to the session log as `hand.*` events.
 */
export class HandRegistry {
  private readonly sessions = new Map<string, Promise<SessionHands>>();
  /** The same sessions once read: what the reaper walks without awaiting. */
  private readonly settled = new Map<string, SessionHands>();
  private readonly reaper: IdleReaper | null;

  constructor(private readonly o: HandRegistryOptions) {
    this.reaper = o.lifecycle ? new IdleReaper(this, o.lifecycle).start() : null;
  }

  /** Hands with a live process or connection on this process, by kind (the metrics' gauge). */
  liveHandCounts(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const s of this.settled.values()) {
      for (const e of s.entries.values()) if (e.hand !== null && e.status === 'ready') counts[e.kind] = (counts[e.kind] ?? 0) + 1;
    }
    return counts;
  }

  get defaultKind(): HandKind {
    return this.o.defaultKind;
  }

  /** The hand a call runs on: the one it names, else the current one, else a fresh default. */
  async resolve(scope: HandScope, requested: string | undefined): Promise<HandEntry> {
    if (requested) {
      const { s, e } = await this.entry(scope, requested);
      if (!e) throw new ToolError(`no hand named ${requested} in this session (hands: ${describe(s) || 'none yet'})`);
      if (e.status === 'lost') throw new ToolError(lostHandText(e.id, e.reason ?? 'it is gone'));
      if (e.status === 'suspended') return this.resume(scope, e);
      if (e.status !== 'ready' || !e.hand) {
        throw new ToolError(`hand ${requested} is ${e.status}${e.reason ? ` (${e.reason})` : ''}; call provision for a new one, or omit "hand" to get one`);
      }
      return e;
    }
    const s = await this.state(scope);
    const current = [...s.entries.values()].reverse().find(usable);
    if (current) return current.status === 'suspended' ? this.resume(scope, current) : current;
    s.provisioningDefault ??= this.provision(scope, { kind: this.o.defaultKind }).finally(() => {
      s.provisioningDefault = null;
    });
    return s.provisioningDefault;
  }

  /** Starts a new hand of the given kind and makes it the session's current one. */
  async provision(scope: HandScope, request: ProvisionRequest): Promise<HandEntry> {
    const s = await this.state(scope);
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
    void hand.lost.then((reason) => this.markLost(scope.sessionId, entry.id, hand, reason));
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

  /**
   * A browser tab offers itself as a hand. Tabs of one session share one browser hand (any live
   * tab may run a call; exactly one does): a tab joins the ready one, or a new one is made and
   * becomes the session's current hand.
   */
  async attachBrowser(scope: HandScope, tabId: string, engine: string): Promise<HandEntry> {
    // Fresh from the log: another instance may have numbered hands since this one last looked.
    const s = await this.state(scope, { fresh: true });
    const existing = [...s.entries.values()].find((e) => e.kind === 'browser' && e.status === 'ready' && e.hand instanceof BrowserHand);
    if (existing && (await (existing.hand as BrowserHand).heartbeat(tabId))) return existing;
    s.counter += 1;
    const id = `browser-${s.counter}`;
    const hand = this.browserHandObject(scope.sessionId, id, engine);
    // Registered before anything is awaited, so a second tab attaching at once joins this hand.
    const entry: HandEntry = { ...newEntry(id, 'browser', 'ready'), hand };
    s.entries.set(id, entry);
    await hand.heartbeat(tabId);
    void hand.lost.then((reason) => this.markLost(scope.sessionId, id, hand, reason));
    await scope.emit({ type: 'hand.provisioned', hand: id, kind: 'browser', provision_ms: 0 }, `hand:${id}:provisioned`);
    return entry;
  }

  private browserHandObject(sessionId: string, id: string, engine: string): BrowserHand {
    return new BrowserHand(id, { store: this.o.store, sessionId, engine, ...(this.o.browserTimeouts ?? {}) });
  }

  /** The live browser hand of a session by id, for heartbeats and claims from its tabs. */
  async browserHand(scope: HandScope, id: string): Promise<BrowserHand | null> {
    const { e } = await this.entry(scope, id);
    return e?.status === 'ready' && e.hand instanceof BrowserHand ? e.hand : null;
  }

  /** Whether the named hand can take a call now, or after a resume (without provisioning anything). */
  async isReady(scope: HandScope, id: string): Promise<boolean> {
    const { e } = await this.entry(scope, id);
    return e !== undefined && usable(e);
  }

  /** Why the named hand was lost, or null when it was not. */
  async lostReason(scope: HandScope, id: string): Promise<string | null> {
    const { e } = await this.entry(scope, id);
    return e?.status === 'lost' ? (e.reason ?? 'it is gone') : null;
  }

  /**
   * A hand provisioned after the call at `seq` was made and lost since: the hand a call that
   * named none (the session had none yet) was running on when its server died.
   */
  async lostSince(scope: HandScope, seq: number): Promise<{ id: string; reason: string } | null> {
    const s = await this.state(scope);
    const e = [...s.entries.values()].find((x) => x.kind !== 'browser' && x.provisionedSeq !== undefined && x.provisionedSeq > seq);
    return e?.status === 'lost' ? { id: e.id, reason: e.reason ?? 'it is gone' } : null;
  }

  /** The id calls without a `hand` would go to right now, without provisioning anything. */
  async peekCurrent(scope: HandScope): Promise<string | null> {
    const s = await this.state(scope);
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
      return await fn(hand);
    } finally {
      entry.inFlight -= 1;
      entry.lastUsed = Date.now();
    }
  }

  async release(scope: HandScope, id: string): Promise<void> {
    const s = await this.state(scope);
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
    return [...(await this.state(scope)).entries.values()];
  }

  /**
   * Moves a ready hand, workspace and all, to another session. Both logs record it; the hand is
   * the receiving session's current hand from then on.
   */
  async transfer(from: HandScope, id: string, to: HandScope): Promise<HandEntry> {
    const src = await this.state(from);
    const e = src.entries.get(id);
    if (e?.status === 'suspended') await this.resume(from, e);
    if (!e || e.status !== 'ready' || !e.hand) throw new ToolError(`hand ${id} is not a ready hand of session ${from.sessionId}`);
    const dst = await this.state(to, { fresh: true });
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
    void hand.lost.then((reason) => this.markLost(to.sessionId, moved.id, hand, reason));
    await from.emit({ type: 'hand.released', hand: id, transferred_to: { session_id: to.sessionId, hand: moved.id } }, `hand:${id}:released`);
    const stored = await to.emit({ type: 'hand.provisioned', hand: moved.id, kind: e.kind, provision_ms: 0, transferred_from: { session_id: from.sessionId, hand: id } }, `hand:${moved.id}:provisioned`);
    moved.provisionedSeq = stored.seq;
    return moved;
  }

  async closeAll(): Promise<void> {
    this.reaper?.stop();
    const all = await Promise.all(this.sessions.values());
    this.sessions.clear();
    this.settled.clear();
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
    const entries = [...this.settled.values()].flatMap((s) => [...s.entries.values()].map((e) => ({ sessionId: s.sessionId, e })));
    await Promise.allSettled(entries.map(({ sessionId, e }) => suspendEntry(this.suspendDeps, sessionId, e, 'shutdown')));
    await this.closeAll();
  }

  /** The sessions whose hands this process holds in memory (for tests and the bench). */
  knownSessions(): string[] {
    return [...this.sessions.keys()];
  }

  /** Local hand processes of every session here, for the reaper. */
  liveHands(): LiveHand[] {
    const out: LiveHand[] = [];
    for (const s of this.settled.values()) {
      for (const e of s.entries.values()) {
        if (e.status === 'ready' && isSuspendable(e.hand)) out.push({ sessionId: s.sessionId, hand: e.id, lastUsed: e.lastUsed, inFlight: e.inFlight });
      }
    }
    return out;
  }

  /** Stops a hand's process and keeps its workspace; the next call resumes it (see `use`). */
  async suspend(sessionId: string, id: string, reason: SuspendReason): Promise<void> {
    const e = this.settled.get(sessionId)?.entries.get(id);
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
      watch: (sessionId, id, hand) => void hand.lost.then((reason) => this.markLost(sessionId, id, hand, reason)),
    };
  }

  /**
   * Lets go of sessions that hold no hand process and were not used for `idleMs`: a busy server
   * does not keep every session it ever saw. Their hands are read from the log again on next use.
   */
  forgetIdleSessions(now: number, idleMs: number): void {
    for (const [id, s] of this.settled) {
      const holds = [...s.entries.values()].some((e) => e.hand !== null || e.status === 'starting' || e.inFlight > 0 || e.resuming !== undefined || e.suspending !== undefined);
      if (holds || s.provisioningDefault || s.syncing || now - s.touchedAt < idleMs) continue;
      this.settled.delete(id);
      this.sessions.delete(id);
    }
  }

  /** Ends a deleted session's hands and removes their workspaces (also those of suspended and lost hands). */
  async deleteSession(sessionId: string): Promise<void> {
    const pending = this.sessions.get(sessionId);
    this.sessions.delete(sessionId);
    this.settled.delete(sessionId);
    const s = await pending?.catch(() => null);
    const hands = [...(s?.entries.values() ?? [])].flatMap((e) => {
      const h = e.hand;
      Object.assign(e, { status: 'released', hand: null });
      return h ? [h] : [];
    });
    await Promise.allSettled(hands.map((h) => h.close()));
    await this.o.workspaces?.removeSession(sessionId);
  }

  /** Records a hand's death once, whoever notices first (the watcher or a failing call). */
  private async markLost(sessionId: string, id: string, hand: Hand, reason: string): Promise<void> {
    const s = await this.sessions.get(sessionId);
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
   * The session's hands on this process. First touch reads them from the log; a harness with a
   * newer lease epoch reconciles again, because the session may have run elsewhere meanwhile.
   */
  private async state(scope: HandScope, opts: { fresh?: boolean } = {}): Promise<SessionHands> {
    let pending = this.sessions.get(scope.sessionId);
    if (!pending) {
      const fresh: SessionHands = { sessionId: scope.sessionId, entries: new Map(), touchedAt: Date.now(), counter: 0, provisioningDefault: null, epoch: scope.epoch ?? 0, syncing: null };
      pending = this.sync(scope, fresh).then(() => fresh);
      this.sessions.set(scope.sessionId, pending);
      pending.then(
        (s) => this.settled.set(scope.sessionId, s),
        () => this.sessions.delete(scope.sessionId),
      );
      const s = await pending;
      if (s.syncing) await s.syncing;
      return s;
    }
    const s = await pending;
    s.touchedAt = Date.now();
    const newEpoch = scope.epoch !== undefined && scope.epoch > s.epoch;
    if (newEpoch) s.epoch = scope.epoch!;
    if (newEpoch || opts.fresh) {
      const previous = s.syncing ?? Promise.resolve();
      const run: Promise<void> = previous.then(() => this.sync(scope, s)).finally(() => {
        if (s.syncing === run) s.syncing = null;
      });
      s.syncing = run;
    }
    if (s.syncing) await s.syncing;
    return s;
  }

  /**
   * A hand by id. One this process has not seen may have been added through another instance
   * since it last read the log: look again before saying there is none.
   */
  private async entry(scope: HandScope, id: string): Promise<{ s: SessionHands; e: HandEntry | undefined }> {
    let s = await this.state(scope);
    let e = s.entries.get(id);
    if (!e) {
      s = await this.state(scope, { fresh: true });
      e = s.entries.get(id);
    }
    return { s, e };
  }

  /**
   * Makes this process's view of a session's hands agree with the log (the hand registry):
   * hands held here stay; remote hands the log says are ready are re-attached (they outlive any
   * harness); other hands the log says are ready but that have no process here are reported lost.
   */
  private async sync(scope: HandScope, s: SessionHands): Promise<void> {
    const records = handsInLog(await this.o.store.getEvents(scope.sessionId, { types: ['hand.provisioned', 'hand.released', 'hand.lost', 'hand.suspended', 'hand.resumed'] }));
    s.counter = Math.max(s.counter, records.length);
    const reattaching: Promise<void>[] = [];
    for (const r of records) {
      const held = s.entries.get(r.id);
      if (held?.status === 'starting') continue; // this process is provisioning it right now
      // A loss or release seen here is at least as new as the log (its event may still be on its way).
      if (held && held.status !== 'ready') continue;
      if (r.status !== 'ready') {
        // Released or lost through another process: let go of the copy held here, if any.
        if (held?.hand) void held.hand.close().catch(() => undefined);
        s.entries.set(r.id, fromRecord(r));
        continue;
      }
      if (held?.status === 'ready' && held.hand) continue;
      if (r.kind === 'browser') {
        // Its tabs and claims are in the store: any process can serve it while its tabs beat
        // (else it reports itself lost after the heartbeat timeout).
        const hand = this.browserHandObject(scope.sessionId, r.id, 'browser');
        s.entries.set(r.id, { ...fromRecord(r), status: 'ready', hand });
        void hand.lost.then((reason) => this.markLost(scope.sessionId, r.id, hand, reason));
        continue;
      }
      if (r.kind === 'remote' && r.endpoint) {
        reattaching.push(this.reattach(scope, s, r, r.endpoint));
        continue;
      }
      // A suspended local hand stopped cleanly and left its files: it resumes on the next call
      // wherever they are (this machine, after a restart).
      if (r.suspended && (await this.o.workspaces?.find(scope.sessionId, r.id))) {
        const spec = await this.specFor(scope.sessionId, { kind: r.kind as HandKind, ...(r.resources ? { resources: r.resources } : {}) });
        s.entries.set(r.id, { ...fromRecord(r), status: 'suspended', spec });
        continue;
      }
      // A hand that was running died with its server, mid-command maybe: it is lost, and so are
      // its files (removed here, so that what the model is told is true).
      const reason = r.suspended ? 'it was suspended and its workspace is not on this server' : GONE_WITH_SERVER;
      const entry: HandEntry = { ...fromRecord(r), status: 'lost', reason };
      s.entries.set(r.id, entry);
      await this.o.repositories?.revoke(scope.sessionId, r.id);
      await this.o.workspaces?.remove(scope.sessionId, r.id);
      await scope.emit({ type: 'hand.lost', hand: r.id, reason }, `hand:${r.id}:lost`);
    }
    await Promise.all(reattaching);
  }

  /** Connects again to a remote hand another harness provisioned; on failure it is reported lost. */
  private async reattach(scope: HandScope, s: SessionHands, r: HandRecord, endpointName: string): Promise<void> {
    const entry: HandEntry = { ...fromRecord(r), status: 'starting', endpoint: endpointName };
    s.entries.set(r.id, entry);
    const endpoint = this.o.remoteEndpoints?.[endpointName];
    const provisioner = this.o.provisioners.remote;
    const t0 = performance.now();
    let hand: Hand;
    try {
      if (!endpoint || !provisioner) throw new Error(`endpoint ${endpointName} is not configured on this server (PADDOCK_REMOTE_HANDS)`);
      const signal = AbortSignal.any([scope.signal, AbortSignal.timeout(REATTACH_TIMEOUT_MS)]);
      const spec: ProvisionSpec = { kind: 'remote', transport: 'http', url: endpoint.url, ...(endpoint.token ? { token: endpoint.token } : {}) };
      hand = await provisioner.provision(r.id, spec, { signal });
    } catch (e) {
      const reason = `could not re-attach after the session moved to this server: ${e instanceof Error ? e.message : String(e)}`;
      Object.assign(entry, { status: 'lost', reason });
      log.warn('remote hand not re-attached', { session: scope.sessionId, hand: r.id, reason });
      await scope.emit({ type: 'hand.lost', hand: r.id, reason }, `hand:${r.id}:lost`);
      return;
    }
    Object.assign(entry, { status: 'ready', hand });
    void hand.lost.then((reason) => this.markLost(scope.sessionId, r.id, hand, reason));
    const ms = Math.round(performance.now() - t0);
    log.info('remote hand re-attached', { session: scope.sessionId, hand: r.id, ms });
    // Each re-attachment is its own event: a session may move many times.
    await scope.emit({ type: 'hand.reattached', hand: r.id, reattach_ms: ms }, `hand:${r.id}:reattached:${randomUUID()}`);
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
