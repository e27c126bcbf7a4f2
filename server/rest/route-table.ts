import type { Caller } from '~/server/access/access';
import type { RouteCallers } from '~/server/access/route-callers';
import type { Runtime } from '~/server/runtime';

/** What a /v1 handler gets: the parsed request, who calls, and the server. */
export interface RestRequest {
  rt: Runtime;
  caller: Caller;
  params: Record<string, string>;
  query: URLSearchParams;
  /** The JSON body (POST), already size-checked and parsed; undefined without one (and on an upload route). */
  body: unknown;
  /** An upload route's body, unread: the route streams it (under `maxUploadBytes`). */
  stream: ReadableStream<Uint8Array> | null;
  /** The largest upload an upload route may take (PADDOCK_MAX_UPLOAD_BYTES). */
  maxUploadBytes: number;
  headers: Headers;
  signal: AbortSignal;
  requestId: string;
}

/** A handler answers with a JSON value (200) or a full Response (streams, other statuses). */
export type RestHandler = (req: RestRequest) => Promise<unknown>;

export interface Route {
  method: 'GET' | 'POST' | 'DELETE';
  /** Segments after /v1, `:name` capturing one segment. */
  path: string;
  handler: RestHandler;
  /** The body is an upload (multipart): streamed to the handler, capped by PADDOCK_MAX_UPLOAD_BYTES, not parsed as JSON. */
  upload?: boolean;
  /** Callers besides API keys (a self-hosted environment's workers); absent: API keys only. */
  callers?: RouteCallers;
}

/** Finds the route for a method and the path's segments; `allowed` lists methods of a known path. */
export function matchRoute(routes: readonly Route[], method: string, segments: readonly string[]): { route: Route; params: Record<string, string> } | { route: null; allowed: string[] } {
  const allowed: string[] = [];
  for (const route of routes) {
    const parts = route.path.split('/').filter(Boolean);
    if (parts.length !== segments.length) continue;
    const params: Record<string, string> = {};
    const ok = parts.every((p, i) => {
      const s = segments[i]!;
      if (p.startsWith(':')) {
        params[p.slice(1)] = s;
        return s.length > 0;
      }
      return p === s;
    });
    if (!ok) continue;
    if (route.method === method) return { route, params };
    allowed.push(route.method);
  }
  return { route: null, allowed };
}
