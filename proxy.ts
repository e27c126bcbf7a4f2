import { type NextRequest, NextResponse } from 'next/server';
import { monotonicFactory } from 'ulid';
import { PROXY_MAX_BODY_BYTES } from '~/lib/body-limits';
import { shareTokenExpiry, shareTokenOfPath } from '~/lib/share-token';
import { normalizeOrigin } from '~/lib/widget';
import { type Refusal, declaredBodyRefusal, guardPolicyFromEnv, guardRequest, malformedPath } from '~/server/access/request-guard';

/**
 * Runs before every route: requests for another Host (DNS rebinding) and cross-site writes are
 * refused before any page or handler sees them. Who the caller is, is decided behind it: by the
 * owner layout for pages, by protectedProcedure for the API.
 */
const policy = guardPolicyFromEnv();
const ulid = monotonicFactory();

export function proxy(req: NextRequest): NextResponse {
  // Before anything decodes the path (Next's router answers an undecodable one with a bare 500),
  // and before a body this layer holds in memory grows past its small cap.
  const early = malformedPath(req.url) ?? declaredBodyRefusal(req, PROXY_MAX_BODY_BYTES);
  if (early) return refuse(req, early);
  // The REST API applies this same guard itself and answers in its own error shape.
  if (req.nextUrl.pathname.startsWith('/v1/')) return NextResponse.next();
  const refusal = guardRequest(req, policy);
  if (refusal) return refuse(req, refusal);
  // An expired share link is a 410 before any page runs: its expiry is in the token (a token whose
  // expiry was edited is another token, which the page answers with a 404).
  const share = req.nextUrl.pathname.startsWith('/share/') ? shareTokenOfPath(req.nextUrl.pathname) : null;
  const expiry = share ? shareTokenExpiry(share) : null;
  if (expiry !== null && expiry <= Date.now()) return expiredShare();
  // The owner layout sends a signed-out visitor to /signin?next=<this path>.
  const headers = new Headers(req.headers);
  headers.set('x-paddock-path', req.nextUrl.pathname + req.nextUrl.search);
  const res = NextResponse.next({ request: { headers } });
  if (req.nextUrl.pathname.startsWith('/embed/')) res.headers.set('content-security-policy', embedFrameAncestors(req.nextUrl.searchParams.get('origin')));
  return res;
}

/** A refusal in the shape of the edge the path belongs to: the REST API's for /v1, else the web UI's. */
function refuse(req: NextRequest, r: Refusal): NextResponse {
  const headers = { 'cache-control': 'no-store' };
  if (!req.nextUrl.pathname.startsWith('/v1/')) return NextResponse.json({ error: { message: r.message, status: r.status } }, { status: r.status, headers });
  const type = r.status === 413 ? 'request_too_large' : 'invalid_request_error';
  return NextResponse.json({ type: 'error', error: { type, message: r.message } }, { status: r.status, headers: { ...headers, 'request-id': `req_${ulid()}` } });
}

/**
 * The docs widget's frame may be framed by the one origin it was opened for and nothing else: the
 * page itself shows the widget only when that origin is one its agent allows, and the browser
 * refuses the frame to any page of another origin (so a site cannot borrow an allowed one's name).
 */
export function embedFrameAncestors(origin: string | null): string {
  const o = origin === null ? null : normalizeOrigin(origin);
  return `frame-ancestors ${o ?? "'none'"}`;
}

function expiredShare(): NextResponse {
  const html =
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="robots" content="noindex, nofollow"><meta name="referrer" content="no-referrer">' +
    '<title>Link expired · Paddock</title></head><body style="font-family:system-ui;background:#0f1115;color:#e6e8ee;padding:12vh 20px;text-align:center">' +
    '<h1 data-testid="share-expired">This link has expired</h1><p>Ask the session&#39;s owner for a new one.</p></body></html>';
  return new NextResponse(html, {
    status: 410,
    headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'referrer-policy': 'no-referrer', 'x-robots-tag': 'noindex, nofollow' },
  });
}

export const config = {
  matcher: [
    // Everything but build assets (content-hashed, public), the icon and the two APIs: Next copies
    // the body of every request this runs on into memory, and the APIs cap theirs as they stream
    // (each applies the same request guard itself).
    '/((?!_next/static|_next/image|favicon.svg|v1/|api/trpc/).*)',
    // An API path with an escape that is not plain ASCII still comes here: if it does not decode,
    // Next's router would answer it with a bare 500 before the API's handler runs.
    '/((?:v1|api/trpc)/.*%(?![0-7][0-9A-Fa-f]).*)',
  ],
};
