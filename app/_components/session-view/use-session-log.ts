'use client';
import { useEffect, useRef, useState } from 'react';
import type { LiveDelta, StoredEvent } from '~/lib/events';
import { mirrorEvents, mirroredEvents, mirroredTail } from '~/lib/browser/mirror';
import { accessRefused, storeUnavailable, useTRPCClient } from '~/lib/browser/trpc';

export type Connection = 'connecting' | 'live' | 'reconnecting' | 'offline';

/** A hand being provisioned right now (live only; the log records the outcome). */
export type HandProgress = Record<string, { kind: string; phase: 'starting' | 'ready' | 'failed'; detail?: string }>;

/** Text streamed for a model request that has not been stored yet, keyed by its start event. */
export type Streaming = Record<string, { text: string; thinking: string; tools: string[] }>;

/** Events painted first on open: the newest ones, read before the whole log. */
const FIRST_PAINT_TAIL = 300;
/** After the follow fails for good because the store is down, when to follow again. */
const REFOLLOW_MS = 2_000;
/** After the server said it is restarting: follow again soon (the link then retries until a server answers). */
const RESTART_REFOLLOW_MS = 250;

/**
 * The mirror read for the session this page opened on starts as soon as this module loads, so it
 * runs while React hydrates instead of after.
 */
const early: { sessionId: string; tail: Promise<StoredEvent[]> } | null = (() => {
  if (typeof window === 'undefined') return null;
  const m = /^\/s\/(sesn_[0-9A-Za-z]+)/.exec(window.location.pathname);
  return m ? { sessionId: m[1]!, tail: mirroredTail(m[1]!, FIRST_PAINT_TAIL) } : null;
})();

/**
 * The session's log as this tab knows it: rendered from IndexedDB first (its tail at once, then
 * the whole log; works offline), then kept current by following the server from the last
 * mirrored seq. Live events go straight into state (IndexedDB is written in the background), so
 * a new event costs one render, not a re-read of the whole mirror.
 */
export function useSessionLog(sessionId: string) {
  const client = useTRPCClient();
  const [connection, setConnection] = useState<Connection>('connecting');
  const [error, setError] = useState<string | null>(null);
  // Set while the server reports its database unreachable: the page shows the mirror meanwhile.
  const [storeOutage, setStoreOutage] = useState<string | null>(null);
  // Set when the server refuses this caller (a share link revoked or expired): the follow is over.
  const [refused, setRefused] = useState<string | null>(null);
  const [streaming, setStreaming] = useState<Streaming>({});
  const [handProgress, setHandProgress] = useState<HandProgress>({});
  const pending = useRef<StoredEvent[]>([]);

  const [events, setEvents] = useState<StoredEvent[] | null>(null);

  useEffect(() => {
    let cancelled = false;
    let flushing: Promise<void> | null = null;
    let unsubscribe: (() => void) | null = null;
    let refollow = 0;

    // Writes are batched: a burst of events becomes one IndexedDB transaction.
    const flush = () => {
      flushing ??= (async () => {
        while (pending.current.length > 0) {
          const batch = pending.current.splice(0);
          await mirrorEvents(batch);
        }
        flushing = null;
      })();
    };
    // Model requests whose answer is stored: a delta of theirs that arrives late (relayed from the
    // instance running the harness) must not bring back a preview nothing would clear.
    const ended = new Set<string>();
    const onDelta = (d: LiveDelta) => {
      if (d.kind === 'hand') {
        setHandProgress((prev) => ({ ...prev, [d.hand]: { kind: d.hand_kind, phase: d.phase, ...(d.detail ? { detail: d.detail } : {}) } }));
        return;
      }
      if (ended.has(d.model_request_start_id)) return;
      setStreaming((prev) => {
        const cur = prev[d.model_request_start_id] ?? { text: '', thinking: '', tools: [] };
        const next = { ...cur };
        if (d.kind === 'text') next.text += d.text;
        else if (d.kind === 'thinking') next.thinking += d.text;
        else if (!next.tools.includes(d.name)) next.tools = [...next.tools, d.name];
        return { ...prev, [d.model_request_start_id]: next };
      });
    };
    // The log in memory; live events are appended (in seq order, once each) and rendered per frame.
    let log: StoredEvent[] = [];
    let frame = 0;
    const render = () => {
      frame ||= requestAnimationFrame(() => {
        frame = 0;
        if (!cancelled) setEvents(log.slice());
      });
    };
    const onEvent = (e: StoredEvent) => {
      const last = log.at(-1)?.seq ?? 0;
      if (e.seq <= last) return;
      log.push(e);
      render();
      pending.current.push(e);
      flush();
      if (e.type === 'span.model_request_end') {
        ended.add(e.model_request_start_id);
        setStreaming((prev) => {
          if (!(e.model_request_start_id in prev)) return prev;
          const { [e.model_request_start_id]: _done, ...rest } = prev;
          return rest;
        });
      }
    };

    // Follows from the last event in memory, so a follow started again resumes without a gap.
    const follow = () => {
      if (cancelled) return;
      unsubscribe?.();
      const sub = client.events.follow.subscribe(
        { sessionId, afterSeq: log.at(-1)?.seq ?? 0 },
        {
          onStarted: () => {
            setConnection('live');
            setError(null);
          },
          onData: (item) => {
            const value = 'data' in item && 'id' in item ? item.data : item;
            if (value.kind === 'event') onEvent(value.event);
            else if (value.kind === 'store') setStoreOutage(value.available ? null : (value.message ?? 'the session store is unreachable'));
            else if (value.kind === 'restarting') {
              // The stream ends here: follow again from the last event held, on whichever server answers.
              setConnection('reconnecting');
              window.clearTimeout(refollow);
              refollow = window.setTimeout(follow, RESTART_REFOLLOW_MS);
            } else onDelta(value.delta);
          },
          onError: (err) => {
            if (storeUnavailable(err)) {
              // Server up, database down: not offline. The link gave up; follow again later.
              setStoreOutage(err.message);
              refollow = window.setTimeout(follow, REFOLLOW_MS);
              return;
            }
            if (accessRefused(err)) setRefused(err.message);
            setConnection('offline');
            setError(err.message);
          },
          onConnectionStateChange: (state) => {
            // The link retries on its own; a connecting state that carries an error means the
            // server is unreachable right now (or, with a 503, its database is).
            if (state.state === 'connecting' && state.error && storeUnavailable(state.error)) setStoreOutage(state.error.message);
            else if (state.state === 'connecting' && state.error) {
              setConnection('offline');
              setError(state.error.message);
            } else if (state.state === 'connecting') setConnection((c) => (c === 'live' ? 'reconnecting' : c));
            else if (state.state === 'pending') {
              setConnection('live');
              setError(null);
            }
          },
        },
      );
      unsubscribe = () => sub.unsubscribe();
    };

    void (async () => {
      const tail = await (early?.sessionId === sessionId ? early.tail : mirroredTail(sessionId, FIRST_PAINT_TAIL));
      if (cancelled) return;
      setEvents(tail);
      log = tail.length < FIRST_PAINT_TAIL ? tail : await mirroredEvents(sessionId);
      if (cancelled) return;
      if (log !== tail) setEvents(log.slice());
      for (const e of log) if (e.type === 'span.model_request_end') ended.add(e.model_request_start_id);
      follow();
    })();

    return () => {
      cancelled = true;
      if (frame) cancelAnimationFrame(frame);
      window.clearTimeout(refollow);
      unsubscribe?.();
      setEvents(null);
      setStoreOutage(null);
      setRefused(null);
    };
  }, [client, sessionId]);

  return { events, streaming, handProgress, connection, error, storeOutage, refused };
}
