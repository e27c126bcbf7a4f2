import 'server-only';
import { BrowserHand } from '~/server/hands/browser-hand';
import { type HandEntry, type HandScope, newEntry } from '~/server/hands/hand-entry';
import type { SessionHands } from '~/server/hands/session-hands';
import type { SessionStore } from '~/server/session/store';

export interface BrowserTimeouts {
  heartbeatTimeoutMs?: number;
  claimTimeoutMs?: number;
  callTimeoutMs?: number;
}

/** A browser hand object: any process can serve it, its tabs and claims being in the store. */
export function browserHandFor(store: SessionStore, timeouts: BrowserTimeouts | undefined, sessionId: string, id: string, engine: string): BrowserHand {
  return new BrowserHand(id, { store, sessionId, engine, ...(timeouts ?? {}) });
}

/**
 * A browser tab offers itself as a hand. Tabs of one session share one browser hand (any live
 * tab may run a call; exactly one does): a tab joins the ready one, or a new one is made and
 * becomes the session's current hand. `s` must be fresh from the log: another instance may have
 * numbered hands since this one last looked.
 */
export async function attachTab(
  s: SessionHands,
  scope: HandScope,
  tabId: string,
  make: (id: string) => BrowserHand,
  watch: (hand: BrowserHand, id: string) => void,
): Promise<HandEntry> {
  const existing = [...s.entries.values()].find((e) => e.kind === 'browser' && e.status === 'ready' && e.hand instanceof BrowserHand);
  if (existing && (await (existing.hand as BrowserHand).heartbeat(tabId))) return existing;
  s.counter += 1;
  const id = `browser-${s.counter}`;
  const hand = make(id);
  // Registered before anything is awaited, so a second tab attaching at once joins this hand.
  const entry: HandEntry = { ...newEntry(id, 'browser', 'ready'), hand };
  s.entries.set(id, entry);
  await hand.heartbeat(tabId);
  watch(hand, id);
  await scope.emit({ type: 'hand.provisioned', hand: id, kind: 'browser', provision_ms: 0 }, `hand:${id}:provisioned`);
  return entry;
}
