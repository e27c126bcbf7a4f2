import 'server-only';
import { z } from 'zod';
import type { LiveDelta, StoredEvent } from '~/lib/events';
import { followWithDeltas } from '~/server/api/follow';
import { logger } from '~/server/log';
import { CommonQuery, List, parseInput, queryObject } from '~/server/rest/query';
import type { RestRequest } from '~/server/rest/route-table';
import { loadSession } from '~/server/rest/session-id';

const log = logger('rest-stream');
const DELTA_TYPES = ['agent.message', 'agent.thinking'] as const;
const StreamQuery = z.object({ event_deltas: List(z.enum(DELTA_TYPES)), ...CommonQuery }).strict();
/** A comment-free keep-alive the SDK ignores (`event: ping`), so proxies keep the stream open. */
const PING_MS = Number(process.env.PADDOCK_SSE_PING_MS ?? 15_000);

/** One SSE frame. Every frame has an `event:` line: the SDK skips frames without one. */
export function sseFrame(event: string, data: unknown, id?: string): string {
  return `${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** Live previews of events being produced, as `event_start` / `event_delta` frames (never stored). */
export class DeltaFrames {
  readonly #started = new Set<string>();
  constructor(private readonly wanted: ReadonlySet<string>) {}

  frames(d: LiveDelta): string[] {
    if ((d.kind !== 'text' && d.kind !== 'thinking') || !d.event_id) return [];
    const type = d.kind === 'text' ? 'agent.message' : 'agent.thinking';
    if (!this.wanted.has(type)) return [];
    const out: string[] = [];
    if (!this.#started.has(d.event_id)) {
      this.#started.add(d.event_id);
      out.push(sseFrame('event_start', { type: 'event_start', event: { type, id: d.event_id } }));
    }
    // agent.thinking is start-only: the stored event follows with its content.
    if (d.kind === 'text') out.push(sseFrame('event_delta', { type: 'event_delta', event_id: d.event_id, delta: { type: 'content_delta', content: { type: 'text', text: d.text }, index: d.index } }));
    return out;
  }

  /** The stored event closes its preview. */
  done(e: StoredEvent): void {
    this.#started.delete(e.id);
  }
}

/**
 * GET /v1/sessions/{id}/events/stream: events from now on (or after `Last-Event-ID`, the seq of
 * the last one a reconnecting client saw: no gap, no duplicate), live deltas when asked for, and
 * pings. Runs until the client goes away or the session is deleted.
 */
export async function streamEvents({ rt, params, query, headers, signal }: RestRequest, shows: (e: StoredEvent) => boolean = () => true): Promise<Response> {
  const session = await loadSession(rt, params.id);
  // Deltas belong to a model request: hidden when its span start was (another thread's request).
  const hidden = new Set<string>();
  const q = parseInput(StreamQuery, queryObject(query), 'query');
  const lastId = headers.get('last-event-id');
  const after = lastId && /^\d{1,15}$/.test(lastId) ? Math.min(Number(lastId), session.last_seq) : session.last_seq;
  const deltas = new DeltaFrames(new Set(q.event_deltas ?? []));
  const stop = new AbortController();
  const done = AbortSignal.any([signal, stop.signal]);
  const encoder = new TextEncoder();

  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      const write = (s: string) => {
        try {
          controller.enqueue(encoder.encode(s));
        } catch {
          stop.abort(); // the client went away
        }
      };
      // A first frame at once: the response's headers go out with it (a server sends none before
      // the body starts), and the SDK's stream() resolves on the headers, not after the first ping.
      write(sseFrame('ping', { type: 'ping' }));
      const ping = setInterval(() => write(sseFrame('ping', { type: 'ping' })), PING_MS);
      ping.unref?.();
      try {
        for await (const item of followWithDeltas(rt, session.id, after, done)) {
          if (item.kind === 'event') {
            deltas.done(item.event);
            if (!shows(item.event)) {
              if (item.event.type === 'span.model_request_start') hidden.add(item.event.id);
              continue;
            }
            write(sseFrame(item.event.type, item.event, String(item.event.seq)));
          } else if (item.kind === 'delta') {
            const span = 'model_request_start_id' in item.delta ? item.delta.model_request_start_id : null;
            if (span !== null && hidden.has(span)) continue;
            for (const f of deltas.frames(item.delta)) write(f);
          } else if (item.kind === 'restarting') {
            // The SDK raises an error frame as an APIError: its caller reconnects with Last-Event-ID.
            write(sseFrame('error', { type: 'error', error: { type: 'overloaded_error', message: item.message } }));
          }
        }
      } catch (e) {
        if (!done.aborted) {
          // The session was deleted, or something failed: say so in the stream's own error frame.
          const gone = e instanceof Error && /not found/.test(e.message);
          log.info('event stream ended', { session: session.id, reason: e instanceof Error ? e.message : String(e) });
          write(sseFrame('error', { type: 'error', error: { type: gone ? 'not_found_error' : 'api_error', message: gone ? `session ${session.id} not found` : 'the event stream failed; reconnect with Last-Event-ID' } }));
        }
      } finally {
        clearInterval(ping);
        try {
          controller.close();
        } catch {
          // already closed by the client
        }
      }
    },
    cancel() {
      stop.abort();
    },
  });
  return new Response(body, {
    headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive', 'x-accel-buffering': 'no' },
  });
}
