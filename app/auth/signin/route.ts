import { isHttps } from '~/server/access/access';
import { safeNext } from '~/server/access/next-path';
import { isStoreUnavailable } from '~/lib/errors';
import { getRuntime } from '~/server/runtime';

export const dynamic = 'force-dynamic';

/**
 * The sign-in URL Paddock prints at start (`/auth/signin?token=…`), and the sign-in page's form:
 * a good token sets the session cookie and goes on to `next`; a bad one goes back to the page.
 */
export async function GET(req: Request): Promise<Response> {
  const url = new URL(req.url);
  const token = url.searchParams.get('token') ?? '';
  const next = safeNext(url.searchParams.get('next'));
  let signed;
  try {
    signed = await (await getRuntime()).access.signIn(token, { host: req.headers.get('host'), secure: isHttps(req.url, req.headers) });
  } catch (e) {
    if (!isStoreUnavailable(e)) throw e;
    return new Response('Paddock cannot reach its database right now, so nobody can sign in. Try again in a moment.', { status: 503, headers: { 'retry-after': '2' } });
  }
  if (!signed) return redirect(`/signin?error=invalid${next === '/' ? '' : `&next=${encodeURIComponent(next)}`}`);
  return redirect(next, signed.setCookie);
}

/** A relative redirect: the browser resolves it against the address it used (no Host trust needed). */
function redirect(location: string, setCookie?: string): Response {
  const headers = new Headers({ location, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' });
  if (setCookie) headers.append('set-cookie', setCookie);
  return new Response(null, { status: 303, headers });
}
