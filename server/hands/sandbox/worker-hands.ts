import 'server-only';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { DEFAULT_HAND_LIMITS, type HandLimits } from '~/lib/hand-limits';
import { type WorkerHands, sessionFolder } from '~/server/hands/paddock-hand/worker';
import { withMounts } from '~/server/hands/hand-mounts';
import { type SuspendableHand, isSuspendable } from '~/server/hands/provisioner';
import { createLocalHandProvisioner } from '~/server/hands/sandbox/provisioner';
import { WORKSPACE_SUBDIR } from '~/server/hands/workspaces';

export interface SandboxWorkerOptions {
  /** The worker's folder: a folder per session, and `.paddock` (the launchers' own state, hidden from every hand). */
  root: string;
  /** Paddock's checkout (the hands' code is built from it). */
  codeRoot: string;
  limits?: Partial<HandLimits>;
  /** `unrestricted`: any public host (the server's rule for such hands); absent: no network at all. */
  network?: 'unrestricted';
}

/**
 * `paddock-hand worker`'s default: each session's tools run in a sandbox hand of its own, made as
 * the server makes one (sandbox/provisioner.ts: bubblewrap, its own uid when root, cgroup and
 * rlimit bounds; no network unless asked), on `<root>/<session>/workspace`, kept across the session's work
 * items and this worker's restarts, with the session's memory stores and skills under its own
 * /mnt as on the server (paddock-hand/worker-mounts.ts). A hand that dies is a failed call; the
 * next call starts another on the same folder.
 */
export function sandboxWorkerHands(o: SandboxWorkerOptions): WorkerHands {
  const provisioner = createLocalHandProvisioner({
    dataDir: path.join(o.root, '.paddock'),
    workspacesDir: o.root,
    root: o.codeRoot,
    limits: { ...DEFAULT_HAND_LIMITS, ...o.limits },
  });
  const live = new Map<string, Promise<SuspendableHand>>();
  const stop = new AbortController();
  const handFor = (id: string): Promise<SuspendableHand> => {
    const known = live.get(id);
    if (known) return known;
    const started = provisioner.provision(`worker-${id}`, { kind: 'sandbox', ...(o.network ? { network: o.network } : {}) }, { signal: stop.signal, workspace: path.join(o.root, id, WORKSPACE_SUBDIR) }).then((hand) => {
      if (!isSuspendable(hand)) throw new Error('a sandbox hand that cannot keep its workspace');
      return hand;
    });
    live.set(id, started);
    const forget = () => {
      if (live.get(id) === started) live.delete(id);
    };
    started.then((hand) => void hand.lost.then(forget), forget);
    return started;
  };
  return {
    placesMounts: true,
    runnerFor(sessionId, mounts) {
      const id = sessionFolder(sessionId);
      // Memory stores and skills placed in the hand's /mnt before each call; memory changes sent back after it.
      return async (name, input, signal) => withMounts(mounts, sessionId, `worker-${id}`, await handFor(id), (hand) => hand.execute(name, input, { callId: randomUUID(), signal: signal ?? stop.signal }));
    },
    async close() {
      stop.abort();
      // Suspended, not closed: a session's folder outlives this worker, as its work items do.
      await Promise.all([...live.values()].map((h) => h.then((hand) => hand.suspend(), () => undefined)));
    },
  };
}
