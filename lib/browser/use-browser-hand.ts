'use client';
import 'client-only';
import { useEffect, useRef, useState } from 'react';
import type { StoredEvent } from '~/lib/events';
import type { BrowserEngine } from '~/lib/browser/engine/types';
import { useTRPCClient } from '~/lib/browser/trpc';
import { isHandTool } from '~/lib/tools';
import { giveBackMounts, placeMounts } from '~/lib/browser/tab-mounts';
import { RELOAD_NOTICE, reloadForIsolation, reloadedForIsolation, shouldReloadForIsolation } from '~/lib/browser/isolation-reload';

export interface BrowserHandState {
  engine: BrowserEngine | null;
  /** The hand's id in the session once attached (`browser-1`). */
  hand: string | null;
  status: string;
  error: string | null;
  /** Output of the commands this tab ran, in order (for the terminal). */
  output: string[];
  /** Bumped whenever the workspace may have changed. */
  filesVersion: number;
  /** Dev servers the WebContainer started, by port. */
  previews: Record<number, string>;
}

const HEARTBEAT_MS = 2_000;
/** How long the reload notice shows before the page reloads (long enough to be read). */
const RELOAD_NOTICE_MS = 1_500;

/**
 * This tab as a hand: starts the engine, attaches to the session, heartbeats, and runs every
 * call addressed to its hand that it is granted, answering with `user.tool_result`. It starts
 * only while the server answers (`online`); once started it keeps its engine (and files) through
 * an outage, its heartbeat failing meanwhile, and attaches again when the server is back.
 */
export function useBrowserHand(sessionId: string, events: readonly StoredEvent[] | null, enabled: boolean, online = true): BrowserHandState {
  const client = useTRPCClient();
  const [state, setState] = useState<BrowserHandState>({ engine: null, hand: null, status: 'off', error: null, output: [], filesVersion: 0, previews: {} });
  const tabId = useRef<string>('');
  const attempted = useRef(new Set<string>());
  /** What attach returned: every heartbeat, claim and result of this tab carries it. */
  const secret = useRef('');
  if (!tabId.current) tabId.current = `tab-${crypto.randomUUID()}`;
  const [armed, setArmed] = useState(false);
  useEffect(() => {
    if (!enabled) setArmed(false);
    else if (online) setArmed(true);
  }, [enabled, online]);

  // Engine + attachment + heartbeat, for as long as the hand is enabled.
  useEffect(() => {
    if (!armed) return;
    let cancelled = false;
    let engine: BrowserEngine | null = null;
    let beat: ReturnType<typeof setInterval> | null = null;
    const attach = async (e: BrowserEngine) => {
      const { hand, tabSecret } = await client.hands.attachBrowser.mutate({ sessionId, tabId: tabId.current, engine: e.kind });
      secret.current = tabSecret;
      if (!cancelled) setState((s) => ({ ...s, hand, status: 'ready', error: null }));
      return hand;
    };
    if (shouldReloadForIsolation()) {
      // A page an in-app link opened: one full load makes it isolated, so WebContainer can boot.
      setState((s) => ({ ...s, status: RELOAD_NOTICE }));
      const t = setTimeout(reloadForIsolation, RELOAD_NOTICE_MS);
      return () => clearTimeout(t);
    }
    void (async () => {
      try {
        setState((s) => ({ ...s, status: 'starting engine…' }));
        const { startBrowserEngine } = await import('~/lib/browser/engine/start-engine');
        // Operator/test overrides: force an engine, or shorten the WebContainer boot wait.
        const prefer = localStorage.getItem('paddock.engine');
        const bootTimeout = Number(localStorage.getItem('paddock.wcBootTimeoutMs'));
        engine = await startBrowserEngine({
          sessionId,
          onStatus: (status) => !cancelled && setState((s) => ({ ...s, status })),
          reloadedForIsolation: reloadedForIsolation(),
          ...(prefer === 'offline' || prefer === 'webcontainer' ? { prefer } : {}),
          ...(bootTimeout > 0 ? { bootTimeoutMs: bootTimeout } : {}),
        });
        if (cancelled) return engine.dispose();
        const started = engine;
        started.onFilesChanged(() => setState((s) => ({ ...s, filesVersion: s.filesVersion + 1 })));
        started.onPreview((url, port) => setState((s) => ({ ...s, previews: { ...s.previews, [port]: url } })));
        setState((s) => ({ ...s, engine: started }));
        let hand = await attach(started);
        beat = setInterval(() => {
          void client.hands.heartbeat
            .mutate({ sessionId, hand, tabId: tabId.current, tabSecret: secret.current })
            .then(async ({ alive }) => {
              // Lost (say the server restarted, or the tab slept): offer the tab again.
              if (!alive && !cancelled) hand = await attach(started);
            })
            .catch(() => undefined);
        }, HEARTBEAT_MS);
      } catch (e) {
        if (!cancelled) setState((s) => ({ ...s, status: 'failed', error: e instanceof Error ? e.message : String(e) }));
      }
    })();
    return () => {
      cancelled = true;
      if (beat) clearInterval(beat);
      engine?.dispose();
      setState((s) => ({ ...s, engine: null, hand: null, status: 'off' }));
    };
  }, [client, sessionId, armed]);

  // Run the calls addressed to this hand that have no result yet.
  const { engine, hand } = state;
  useEffect(() => {
    if (!engine || !hand || !events) return;
    const answered = new Set<string>();
    for (const e of events) if (e.type === 'agent.tool_result' || e.type === 'user.tool_result') answered.add(e.tool_use_id);
    for (const e of events) {
      if (e.type !== 'agent.tool_use' || e.hand !== hand || answered.has(e.id) || attempted.current.has(e.id)) continue;
      attempted.current.add(e.id);
      void runCall(e);
    }

    async function runCall(use: Extract<StoredEvent, { type: 'agent.tool_use' }>) {
      const tab = { sessionId, hand: hand!, tabId: tabId.current, tabSecret: secret.current };
      const { granted } = await client.hands.claim.mutate({ ...tab, toolUseId: use.id });
      if (!granted) return;
      const { hand: _h, ...input } = use.input;
      let text: string;
      let isError = false;
      const header = use.name === 'bash' ? `$ ${String(input.command)}\n` : `▸ ${use.name} ${JSON.stringify(input)}\n`;
      setState((s) => ({ ...s, output: [...s.output, header] }));
      const call = { ...tab, toolUseId: use.id };
      const mounts = engine!.mounts;
      const note = (lines: string[]) => lines.length > 0 && setState((s) => ({ ...s, output: [...s.output, ...lines.map((l) => `[mounts] ${l}\n`)] }));
      // The session's files, memory stores and skills under /mnt, as the server lists them now.
      if (mounts) note(await placeMounts(client, call, mounts));
      try {
        if (!isHandTool(use.name)) throw new Error(`unknown tool ${use.name}`);
        text = await engine!.execute(use.name, input, {
          signal: new AbortController().signal,
          onOutput: (chunk) => setState((s) => ({ ...s, output: [...s.output, chunk] })),
        });
      } catch (err) {
        isError = true;
        text = err instanceof Error ? err.message : String(err);
      }
      setState((s) => ({ ...s, output: use.name === 'bash' ? s.output : [...s.output, `${text}\n`], filesVersion: s.filesVersion + 1 }));
      // Outputs kept as the session's files, memory written back; a refused memory change fails the call (the server words it).
      const back = mounts ? await giveBackMounts(client, call, mounts) : { refused: [], notes: [] };
      note(back.notes);
      const memoryRefused = back.refused.slice(0, 100).map((r) => r.slice(0, 2000));
      await postResult(() =>
        client.hands.result.mutate({ ...call, content: [{ type: 'text', text }], ...(isError ? { is_error: true } : {}), ...(memoryRefused.length > 0 ? { memoryRefused } : {}) }),
      );
    }
  }, [client, sessionId, engine, hand, events]);

  return state;
}

/**
 * Sends a result until it is stored: the server waits for it (until the call's deadline), so a
 * lost POST must not leave the session running forever. A refusal (4xx: the call was answered
 * meanwhile, or is not this tab's) is final; a network error or 5xx is tried again, and the
 * server stores one result per call whatever the retries.
 */
async function postResult(send: () => Promise<unknown>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await send();
      return;
    } catch (e) {
      const status = (e as { data?: { httpStatus?: number } }).data?.httpStatus;
      if (status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429) return;
      await new Promise((r) => setTimeout(r, Math.min(10_000, 250 * 2 ** Math.min(attempt, 6))));
    }
  }
}
