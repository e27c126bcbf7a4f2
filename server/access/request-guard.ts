/**
 * The first check every request passes, before anyone is identified: is it addressed to us
 * (Host: no DNS rebinding), and if it would change something, does it come from one of our pages
 * or from a program (Origin: no cross-site writes)? Pure and dependency-free, so the Next proxy
 * (every page) and the API handlers (every route) apply the very same rule.
 */

export interface GuardPolicy {
  /** Host names (any port) or host:port pairs answered besides loopback, lowercase. */
  allowedHosts: readonly string[];
  /** Origins (scheme://host[:port]) that may write besides the request's own allowed origin. */
  allowedOrigins: readonly string[];
}

export interface GuardRequest {
  method: string;
  headers: Headers;
  /** The request's address: a path that does not decode is refused before anything reads it. */
  url?: string;
  /**
   * An upload route (the Files API): a program's multipart form is accepted there. Only with an
   * API key header, which a cross-site page cannot attach: a browser form post stays refused.
   */
  upload?: boolean;
}

export interface Refusal {
  status: 400 | 403 | 411 | 413 | 415 | 421;
  message: string;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** What an HTML form (or a cross-site fetch without preflight) can send. */
const SIMPLE_CONTENT_TYPES = ['application/x-www-form-urlencoded', 'multipart/form-data', 'text/plain'];

/** The policy from the environment: PADDOCK_PUBLIC_URL and PADDOCK_ALLOWED_HOSTS. */
export function guardPolicyFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): GuardPolicy {
  const hosts = (env.PADDOCK_ALLOWED_HOSTS ?? '').split(',').map((h) => h.trim().toLowerCase()).filter(Boolean);
  const origins: string[] = [];
  if (env.PADDOCK_PUBLIC_URL) {
    try {
      const u = new URL(env.PADDOCK_PUBLIC_URL);
      hosts.push(u.host.toLowerCase());
      origins.push(u.origin.toLowerCase());
    } catch {
      // loadConfig names the bad value at start; an unparsable URL allows nothing here.
    }
  }
  return { allowedHosts: hosts, allowedOrigins: origins };
}

function splitHost(host: string): { name: string; port: string } {
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(host);
  return m ? { name: m[1]!, port: m[2] ?? '' } : { name: '', port: '' };
}

export function isLoopbackName(name: string): boolean {
  return name === 'localhost' || name.endsWith('.localhost') || name === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
}

/** Whether a Host header (host[:port]) names this server. */
export function isAllowedHost(host: string, policy: GuardPolicy): boolean {
  const h = host.trim().toLowerCase();
  const { name } = splitHost(h);
  if (!name) return false;
  if (isLoopbackName(name)) return true;
  return policy.allowedHosts.some((a) => (a.includes(':') && !a.startsWith('[') ? a === h : a === name || a === h));
}

/** True when the request carries program credentials (which a cross-site page cannot attach). */
export function hasApiKeyHeader(headers: Headers): boolean {
  return headers.has('x-api-key') || /^bearer\s/i.test(headers.get('authorization') ?? '');
}

/** Null when the request may go on, else why not (the status and message to answer with). */
export function guardRequest(req: GuardRequest, policy: GuardPolicy): Refusal | null {
  const malformed = req.url === undefined ? null : malformedPath(req.url);
  if (malformed) return malformed;
  const host = req.headers.get('host');
  if (!host) return { status: 400, message: 'missing Host header' };
  if (!isAllowedHost(host, policy)) {
    return { status: 421, message: `this server does not answer for host "${host.slice(0, 100)}" (set PADDOCK_PUBLIC_URL or PADDOCK_ALLOWED_HOSTS to allow it)` };
  }
  if (SAFE_METHODS.has(req.method.toUpperCase())) return null;

  const origin = req.headers.get('origin');
  const site = req.headers.get('sec-fetch-site');
  if (site === 'cross-site') return { status: 403, message: 'cross-site requests may not change anything' };
  if (origin === null) {
    // Browsers send Origin with every POST; a request without one is a program, which must
    // identify itself with a key (checked after this guard).
    if (!hasApiKeyHeader(req.headers)) return { status: 403, message: 'a request that changes something needs an Origin header (browsers) or an API key (programs)' };
  } else if (!isAllowedOrigin(origin, host, policy)) {
    return { status: 403, message: `origin "${origin.slice(0, 100)}" may not change anything here` };
  }
  const type = (req.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'multipart/form-data' && req.upload === true && hasApiKeyHeader(req.headers)) return null;
  if (SIMPLE_CONTENT_TYPES.includes(type)) return { status: 415, message: `content-type ${type} is not accepted: send application/json` };
  return null;
}

function isAllowedOrigin(origin: string, host: string, policy: GuardPolicy): boolean {
  const o = origin.toLowerCase();
  if (policy.allowedOrigins.includes(o)) return true;
  let u: URL;
  try {
    u = new URL(o);
  } catch {
    return false; // "null" (sandboxed frames, file:) and garbage
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return false;
  // Our own pages: the origin names the very host the request was sent to (itself allowed). The
  // scheme may differ behind a TLS-terminating proxy.
  return u.host === host.trim().toLowerCase();
}

/**
 * A path with a percent-escape that does not decode (`%ZZ`, a lone `%`, bytes that are not UTF-8)
 * is a 400 here: Next's router, a page or a handler decoding it would otherwise throw (a 500).
 */
export function malformedPath(url: string): Refusal | null {
  let pathname: string;
  try {
    pathname = new URL(url, 'http://localhost').pathname;
  } catch {
    return { status: 400, message: 'malformed request URL' };
  }
  try {
    decodeURIComponent(pathname);
    return null;
  } catch {
    return { status: 400, message: 'malformed percent-escape in the request path' };
  }
}

/**
 * Refuses, from its headers alone, a body over `max` bytes, and a body of unknown length (chunked):
 * for a layer that would buffer it whole before anyone reads it.
 */
export function declaredBodyRefusal(req: GuardRequest, max: number): Refusal | null {
  // What Next's proxy layer copies: every body but a GET's or HEAD's.
  if (['GET', 'HEAD'].includes(req.method.toUpperCase())) return null;
  const length = req.headers.get('content-length');
  if (length === null) {
    return req.headers.has('transfer-encoding') ? { status: 411, message: `a request body sent here must declare its Content-Length (at most ${max} bytes)` } : null;
  }
  const n = Number(length);
  if (!/^\d+$/.test(length.trim()) || !Number.isSafeInteger(n)) return { status: 400, message: 'malformed Content-Length header' };
  return n > max ? { status: 413, message: `request body over the limit of ${max} bytes` } : null;
}
