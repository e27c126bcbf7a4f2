import 'server-only';
import { randomUUID } from 'node:crypto';
import type { Hand, HandKind } from '~/lib/hand';
import { type HandRecord, handsInLog } from '~/lib/hand-log';
import type { BrowserHand } from '~/server/hands/browser-hand';
import { type HandEntry, type HandScope, fromRecord } from '~/server/hands/hand-entry';
import type { ProvisionRequest } from '~/server/hands/provision-spec';
import type { ProvisionSpec, Provisioner } from '~/server/hands/provisioner';
import type { SessionHands } from '~/server/hands/session-hands';
import type { Workspaces } from '~/server/hands/workspaces';
import { logger } from '~/server/log';
import type { HandRepositories } from '~/server/hands/repository-port';
import type { SessionStore } from '~/server/session/store';

const log = logger('hands');

/** How long re-connecting to a remote hand after a takeover may take before it is reported lost. */
const REATTACH_TIMEOUT_MS = 10_000;
const GONE_WITH_SERVER = 'its server process is gone (hands on a server machine do not outlive the server that started them)';

/** The hand lifecycle events a session's log records: what its hands are, read from there. */
export const HAND_EVENT_TYPES = ['hand.provisioned', 'hand.released', 'hand.lost', 'hand.suspended', 'hand.resumed'] as const;

export interface ReconcileDeps {
  store: SessionStore;
  provisioners: Partial<Record<HandKind, Provisioner>>;
  remoteEndpoints?: Record<string, { url: string; token?: string }>;
  workspaces?: Workspaces;
  repositories?: Pick<HandRepositories, 'revoke'>;
  /** A browser hand object any process can serve (its tabs and claims are in the store). */
  browserHand(sessionId: string, id: string, engine: string): BrowserHand;
  /** Records the hand lost when it dies. */
  watch(sessionId: string, id: string, hand: Hand): void;
  specFor(sessionId: string, request: ProvisionRequest): Promise<ProvisionSpec>;
}

/**
 * Makes this process's view of a session's hands agree with the log (the hand registry):
 * hands held here stay; remote hands the log says are ready are re-attached (they outlive any
 * harness); other hands the log says are ready but that have no process here are reported lost.
 */
export async function reconcileWithLog(d: ReconcileDeps, scope: HandScope, s: SessionHands): Promise<void> {
  const records = handsInLog(await d.store.getEvents(scope.sessionId, { types: [...HAND_EVENT_TYPES] }));
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
      const hand = d.browserHand(scope.sessionId, r.id, 'browser');
      s.entries.set(r.id, { ...fromRecord(r), status: 'ready', hand });
      d.watch(scope.sessionId, r.id, hand);
      continue;
    }
    if (r.kind === 'remote' && r.endpoint) {
      reattaching.push(reattach(d, scope, s, r, r.endpoint));
      continue;
    }
    // A suspended local hand stopped cleanly and left its files: it resumes on the next call
    // wherever they are (this machine, after a restart).
    if (r.suspended && (await d.workspaces?.find(scope.sessionId, r.id))) {
      const spec = await d.specFor(scope.sessionId, { kind: r.kind as HandKind, ...(r.resources ? { resources: r.resources } : {}) });
      s.entries.set(r.id, { ...fromRecord(r), status: 'suspended', spec });
      continue;
    }
    // A hand that was running died with its server, mid-command maybe: it is lost, and so are
    // its files (removed here, so that what the model is told is true).
    const reason = r.suspended ? 'it was suspended and its workspace is not on this server' : GONE_WITH_SERVER;
    const entry: HandEntry = { ...fromRecord(r), status: 'lost', reason };
    s.entries.set(r.id, entry);
    await d.repositories?.revoke(scope.sessionId, r.id);
    await d.workspaces?.remove(scope.sessionId, r.id);
    await scope.emit({ type: 'hand.lost', hand: r.id, reason }, `hand:${r.id}:lost`);
  }
  await Promise.all(reattaching);
}

/** Connects again to a remote hand another harness provisioned; on failure it is reported lost. */
async function reattach(d: ReconcileDeps, scope: HandScope, s: SessionHands, r: HandRecord, endpointName: string): Promise<void> {
  const entry: HandEntry = { ...fromRecord(r), status: 'starting', endpoint: endpointName };
  s.entries.set(r.id, entry);
  const endpoint = d.remoteEndpoints?.[endpointName];
  const provisioner = d.provisioners.remote;
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
  d.watch(scope.sessionId, r.id, hand);
  const ms = Math.round(performance.now() - t0);
  log.info('remote hand re-attached', { session: scope.sessionId, hand: r.id, ms });
  // Each re-attachment is its own event: a session may move many times.
  await scope.emit({ type: 'hand.reattached', hand: r.id, reattach_ms: ms }, `hand:${r.id}:reattached:${randomUUID()}`);
}
