import { type NextRequest, NextResponse } from 'next/server';
import { shareTokenExpiry, shareTokenOfPath } from '~/lib/share-token';
import { normalizeOrigin } from '~/lib/widget';
import { guardPolicyFromEnv, guardRequest } from '~/server/access/request-guard';

/**
 * Runs before every route: requests for another Host (DNS rebinding) and cross-site writes are
 * refused before any page or handler sees them. Who the caller is, is decided behind it: by the
 * owner layout for pages, by protectedProcedure for the API.
 */
const policy = guardPolicyFromEnv();

export function proxy(req: NextRequest): NextResponse {
  // The REST API applies this same guard itself and answers in its own error shape.
  if (req.nextUrl.pathname.startsWith('/v1/')) return NextResponse.next();
  const refusal = guardRequest(req, policy);
  if (refusal) return NextResponse.json({ error: { message: refusal.message, status: refusal.status } }, { status: refusal.status });
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
  // Everything but build assets (content-hashed, public) and the icon.
  matcher: ['/((?!_next/static|_next/image|favicon.svg).*)'],
};
