import { handleTrpc } from '~/server/api/http-handler';
import type { Runtime } from '~/server/runtime';

/** What a browser on our own page sends: an allowed Host, our Origin, JSON. */
export const SAME_ORIGIN: Record<string, string> = { host: 'localhost:3000', origin: 'http://localhost:3000', 'content-type': 'application/json' };

export interface HttpAnswer {
  status: number;
  /** The raw answer (an event stream for a subscription). */
  text: string;
  body: { result?: { data?: unknown }; error?: { message?: string; code?: number; data?: { code?: string; httpStatus?: number } } } | null;
  headers: Headers;
}

/**
 * Calls the tRPC endpoint over the same handler the Next route uses (guard, body limit, caller,
 * procedures), as HTTP requests: a query is a GET with `?input=`, a mutation a POST with a body.
 */
export function httpApi(rt: Runtime, o: { maxBodyBytes?: number } = {}) {
  const send = async (req: Request): Promise<HttpAnswer> => {
    const res = await handleTrpc(req, { runtime: () => Promise.resolve(rt), maxBodyBytes: o.maxBodyBytes ?? rt.config.PADDOCK_MAX_BODY_BYTES, policy: { allowedHosts: [], allowedOrigins: [] } });
    const text = res.headers.get('content-type')?.includes('text/event-stream') && res.body ? await readStreamBriefly(res.body) : await res.text();
    let body: HttpAnswer['body'];
    try {
      body = JSON.parse(text) as HttpAnswer['body'];
    } catch {
      body = null;
    }
    return { status: res.status, text, body, headers: res.headers };
  };
  return {
    send,
    query: (path: string, input: unknown, headers: Record<string, string> = SAME_ORIGIN) =>
      send(new Request(`http://localhost:3000/api/trpc/${path}${input === undefined ? '' : `?input=${encodeURIComponent(JSON.stringify(input))}`}`, { headers })),
    mutate: (path: string, input: unknown, headers: Record<string, string> = SAME_ORIGIN) =>
      send(new Request(`http://localhost:3000/api/trpc/${path}`, { method: 'POST', headers, body: input === undefined ? '' : JSON.stringify(input) })),
  };
}

/**
 * A subscription's stream never ends by itself: read it until a complete error event (it arrives
 * in pieces), its end, or 300 ms, then cancel it.
 */
async function readStreamBriefly(body: ReadableStream<Uint8Array>): Promise<string> {
  const reader = body.getReader();
  let text = '';
  const deadline = Date.now() + 300;
  // One read in flight at a time: a read that loses the race to the timer still holds its chunk.
  let pending = reader.read();
  while (Date.now() < deadline && !/event: serialized-error\ndata: .*\n\n/.test(text)) {
    const next = await Promise.race([pending, new Promise<null>((r) => setTimeout(() => r(null), 50))]);
    if (next === null) continue;
    if (next.done) break;
    text += new TextDecoder().decode(next.value);
    pending = reader.read();
  }
  await reader.cancel().catch(() => undefined);
  return text;
}

/**
 * The status a caller was answered with: the HTTP status, or for a subscription (an event stream
 * that always opens with 200) the status of the error it ended with. A stream that carried any
 * data before its error counts as 200: something was let through.
 */
export function answeredStatus(r: HttpAnswer): number {
  if (!r.headers.get('content-type')?.includes('text/event-stream')) return r.status;
  const events = r.text.split('\n\n').map((b) => b.trim()).filter((b) => b.length > 0 && !b.startsWith('event: connected'));
  const first = events[0] ?? '';
  const m = /^event: serialized-error\ndata: (.*)$/s.exec(first);
  if (!m) return 200;
  return (JSON.parse(m[1]!) as { data?: { httpStatus?: number } }).data?.httpStatus ?? 500;
}
