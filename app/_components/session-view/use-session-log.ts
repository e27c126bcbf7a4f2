'use client';
import { useLiveQuery } from 'dexie-react-hooks';
import { useEffect, useRef, useState } from 'react';
import type { LiveDelta, StoredEvent } from '~/lib/events';
import { lastMirroredSeq, mirror, mirrorEvents } from '~/lib/browser/mirror';
import { useTRPCClient } from '~/lib/browser/trpc';

export type Connection = 'connecting' | 'live' | 'reconnecting' | 'offline';

/** A hand being provisioned right now (live only; the log records the outcome). */
export type HandProgress = Record<string, { kind: string; phase: 'starting' | 'ready' | 'failed'; detail?: string }>;

/** Text streamed for a model request that has not been stored yet, keyed by its start event. */
export type Streaming = Record<string, { text: string; thinking: string; tools: string[] }>;

/**
 * The session's log as this tab knows it: rendered from IndexedDB first (instant, works
 * offline), then kept current by following the server from the last mirrored seq.
 */
export function useSessionLog(sessionId: string) {
  const client = useTRPCClient();
  const [connection, setConnection] = useState<Connection>('connecting');
  const [error, setError] = useState<string | null>(null);
  const [streaming, setStreaming] = useState<Streaming>({});
  const [handProgress, setHandProgress] = useState<HandProgress>({});
  const pending = useRef<StoredEvent[]>([]);

  const events = useLiveQuery(
    async () => (await mirror().events.where('[session_id+seq]').between([sessionId, 0], [sessionId, Infinity]).toArray()).map((r) => r.event),
    [sessionId],
  );

  useEffect(() => {
    let cancelled = false;
    let flushing: Promise<void> | null = null;
    let unsubscribe: (() => void) | null = null;

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
    const onDelta = (d: LiveDelta) => {
      if (d.kind === 'hand') {
        setHandProgress((prev) => ({ ...prev, [d.hand]: { kind: d.hand_kind, phase: d.phase, ...(d.detail ? { detail: d.detail } : {}) } }));
        return;
      }
      setStreaming((prev) => {
        const cur = prev[d.model_request_start_id] ?? { text: '', thinking: '', tools: [] };
        const next = { ...cur };
        if (d.kind === 'text') next.text += d.text;
        else if (d.kind === 'thinking') next.thinking += d.text;
        else if (!next.tools.includes(d.name)) next.tools = [...next.tools, d.name];
        return { ...prev, [d.model_request_start_id]: next };
      });
    };
    const onEvent = (e: StoredEvent) => {
      pending.current.push(e);
      flush();
      if (e.type === 'span.model_request_end') {
        setStreaming((prev) => {
          if (!(e.model_request_start_id in prev)) return prev;
          const { [e.model_request_start_id]: _done, ...rest } = prev;
          return rest;
        });
      }
    };

    void (async () => {
      const afterSeq = await lastMirroredSeq(sessionId);
      if (cancelled) return;
      const sub = client.events.follow.subscribe(
        { sessionId, afterSeq },
        {
          onStarted: () => {
            setConnection('live');
            setError(null);
          },
          onData: (item) => {
            const value = 'data' in item && 'id' in item ? item.data : item;
            if (value.kind === 'event') onEvent(value.event);
            else onDelta(value.delta);
          },
          onError: (err) => {
            setConnection('offline');
            setError(err.message);
          },
          onConnectionStateChange: (state) => {
            // The link retries on its own; a connecting state that carries an error means the
            // server is unreachable right now.
            if (state.state === 'connecting' && state.error) {
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
    })();

    return () => {
      cancelled = true;
      unsubscribe?.();
    };
  }, [client, sessionId]);

  return { events: events ?? null, streaming, handProgress, connection, error };
}
