import { type NextRequest, NextResponse } from 'next/server';
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
  // The owner layout sends a signed-out visitor to /signin?next=<this path>.
  const headers = new Headers(req.headers);
  headers.set('x-paddock-path', req.nextUrl.pathname + req.nextUrl.search);
  return NextResponse.next({ request: { headers } });
}

export const config = {
  // Everything but build assets (content-hashed, public) and the icon.
  matcher: ['/((?!_next/static|_next/image|favicon.svg).*)'],
};
