import 'server-only';
import { randomUUID } from 'node:crypto';
import { type Hand, type HandKind, ToolError, lostHandText } from '~/lib/hand';
import type { SuspendReason } from '~/server/hands/idle-reaper';
import { type Provisioner, isSuspendable } from '~/server/hands/provisioner';
import type { HandEntry, HandScope } from '~/server/hands/hand-entry';
import type { Workspaces } from '~/server/hands/workspaces';
import { errorFields, logger } from '~/server/log';
import type { EventLog } from '~/server/session/store';

const log = logger('hands');

/** What suspending and resuming a registry entry needs from the registry. */
export interface SuspendDeps {
  store: Pick<EventLog, 'emitEvent'>;
  provisioners: Partial<Record<HandKind, Provisioner>>;
  workspaces: Workspaces | undefined;
  /** Watches a resumed hand for its loss. */
  watch(sessionId: string, id: string, hand: Hand): void;
}

/** Stops an idle hand's process and keeps its workspace (`hand.suspended`). Busy hands are left alone. */
export async function suspendEntry(d: SuspendDeps, sessionId: string, e: HandEntry, reason: SuspendReason): Promise<void> {
  const hand = e.hand;
  if (e.status !== 'ready' || e.inFlight > 0 || !isSuspendable(hand)) return;
  e.status = 'suspended';
  e.hand = null;
  const done = (async () => {
    await hand.suspend().catch((err: unknown) => log.warn('hand suspend failed', { hand: e.id, ...errorFields(err) }));
    log.info('hand suspended', { session: sessionId, hand: e.id, reason });
    // A side event, unfenced like a loss: no harness may be running the session now.
    await d.store
      .emitEvent(sessionId, { type: 'hand.suspended', hand: e.id, reason }, { idempotencyKey: `hand:${e.id}:suspended:${randomUUID()}` })
      .catch((err: unknown) => log.error('could not record a suspended hand', { session: sessionId, hand: e.id, ...errorFields(err) }));
  })();
  e.suspending = done;
  await done;
  if (e.suspending === done) e.suspending = undefined;
}

/**
 * Starts a suspended hand again on its workspace under its name (`hand.resumed`). If it cannot
 * start, it is lost (`hand.lost`) and the call fails naming it.
 */
export async function resumeEntry(d: SuspendDeps, scope: HandScope, e: HandEntry): Promise<void> {
  // In the log, the suspend comes before the resume.
  await e.suspending;
  if (e.status !== 'suspended') return;
  const provisioner = d.provisioners[e.kind];
  const workspace = await d.workspaces?.find(scope.sessionId, e.id);
  const t0 = performance.now();
  let hand: Hand;
  try {
    if (!provisioner || !e.spec || !workspace) throw new Error('its workspace is not on this server');
    hand = await provisioner.provision(e.id, e.spec, { signal: scope.signal, workspace });
  } catch (err) {
    const reason = `could not resume after a suspend: ${err instanceof Error ? err.message : String(err)}`;
    Object.assign(e, { status: 'lost', reason });
    await d.workspaces?.remove(scope.sessionId, e.id);
    await scope.emit({ type: 'hand.lost', hand: e.id, reason }, `hand:${e.id}:lost`);
    throw new ToolError(lostHandText(e.id, reason));
  }
  Object.assign(e, { status: 'ready', hand, lastUsed: Date.now() });
  d.watch(scope.sessionId, e.id, hand);
  const ms = Math.round(performance.now() - t0);
  log.info('hand resumed', { session: scope.sessionId, hand: e.id, ms });
  await scope.emit({ type: 'hand.resumed', hand: e.id, resume_ms: ms }, `hand:${e.id}:resumed:${randomUUID()}`);
}
