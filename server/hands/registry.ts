import 'server-only';
import type { Hand } from '~/lib/hand';
import { ToolError } from '~/lib/hand';
import { MemoryHand } from '~/server/hands/memory-hand';

/**
 * The hands each session holds. Hands are provisioned lazily: none exists until the first call
 * that needs one. (Sandboxed and remote provisioners plug in here.)
 */
export class HandRegistry {
  private readonly bySession = new Map<string, Map<string, Hand>>();

  /** The id a call will run on: the named hand, else the session's default. */
  resolveId(_sessionId: string, requested: unknown): string {
    return typeof requested === 'string' && requested.length > 0 ? requested : 'memory-1';
  }

  /** The hand for a call, provisioning the session's default hand on first use. */
  acquire(sessionId: string, handId: string): Hand {
    let hands = this.bySession.get(sessionId);
    if (!hands) this.bySession.set(sessionId, (hands = new Map<string, Hand>()));
    const existing = hands.get(handId);
    if (existing) return existing;
    if (handId !== 'memory-1') throw new ToolError(`no hand named ${handId} in this session`);
    const hand = new MemoryHand(handId);
    hands.set(handId, hand);
    return hand;
  }

  async closeAll(): Promise<void> {
    const all = [...this.bySession.values()].flatMap((m) => [...m.values()]);
    this.bySession.clear();
    await Promise.allSettled(all.map((h) => h.close()));
  }
}
