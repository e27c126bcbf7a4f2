import type { StoredEvent } from '~/lib/events';
import { sleep } from '~/lib/sleep';
import { createCaller } from '~/server/api/root';
import { OWNER } from '~/server/access/testing/callers';
import type { Runtime } from '~/server/runtime';

/**
 * A fake browser tab serving a session's browser hand, driven exactly as a real tab drives it:
 * through the tRPC API (attach, heartbeat every 100 ms, claim, hands.result with the tab's secret)
 * while following the log. `runtime()` is asked on every request, so a test can move the tab to
 * another server instance (or a restarted one) mid-way.
 */
export interface FakeTabCall {
  api: ReturnType<typeof createCaller>;
  /** What every request about this call carries (the tab's secret, the claimed call). */
  call: { sessionId: string; hand: string; tabId: string; tabSecret: string; toolUseId: string };
}

/** A call's answer: its text, and (a tab with mounts) the memory changes refused meanwhile. */
export type FakeTabAnswer = string | { text: string; memoryRefused?: string[] };

export function fakeTab(runtime: () => Runtime, sessionId: string, tabId: string, run: (e: StoredEvent, tab: FakeTabCall) => FakeTabAnswer | Promise<FakeTabAnswer>) {
  const api = () => createCaller({ runtime: runtime(), caller: OWNER });
  const ac = new AbortController();
  const ran: string[] = [];
  let hand = '';
  let tabSecret = '';
  const ready = (async () => {
    ({ hand, tabSecret } = await api().hands.attachBrowser({ sessionId, tabId, engine: 'offline' }));
  })();
  const beat = setInterval(() => void api().hands.heartbeat({ sessionId, hand, tabId, tabSecret }).catch(() => undefined), 100);
  const loop = (async () => {
    await ready;
    let after = 0;
    // A follow that ends (its server went away) is picked up again where it stopped, as a tab does.
    while (!ac.signal.aborted) {
      try {
        for await (const e of runtime().store.follow(sessionId, after, ac.signal)) {
          after = e.seq;
          if (e.type !== 'agent.tool_use' || e.hand !== hand) continue;
          const { granted } = await api().hands.claim({ sessionId, hand, tabId, tabSecret, toolUseId: e.id });
          if (!granted) continue;
          ran.push(e.id);
          const call = { sessionId, hand, tabId, tabSecret, toolUseId: e.id };
          const answer = await run(e, { api: api(), call });
          const { text, memoryRefused } = typeof answer === 'string' ? { text: answer, memoryRefused: undefined } : answer;
          await api().hands.result({ ...call, content: [{ type: 'text', text }], ...(memoryRefused ? { memoryRefused } : {}) });
        }
      } catch {
        // the store closed under the follow: retry below
      }
      await sleep(50, ac.signal).catch(() => undefined);
    }
  })();
  return {
    ran,
    ready,
    get hand() {
      return hand;
    },
    close: async () => {
      clearInterval(beat);
      ac.abort();
      await loop;
    },
  };
}
