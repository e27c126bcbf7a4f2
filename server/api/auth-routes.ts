import 'server-only';
import { isStoreUnavailable } from '~/lib/errors';
import { isHttps } from '~/server/access/access';
import { safeNext } from '~/server/access/next-path';
import { type GuardPolicy, guardRequest } from '~/server/access/request-guard';
import { refuse } from '~/server/api/http-handler';
import type { Runtime } from '~/server/runtime';

export interface AuthRouteDeps {
  runtime: () => Promise<Runtime>;
  policy: GuardPolicy;
}

/**
 * `GET /auth/signin?token=…&next=…`: the URL Paddock prints at start, and the sign-in page's form.
 * A good token sets the session cookie and goes on to `next` (a path on this site only); a bad
 * one goes back to the page. The request guard runs here too, as in the API handler.
 */
export async function handleSignIn(req: Request, deps: AuthRouteDeps): Promise<Response> {
  const refusal = guardRequest(req, deps.policy);
  if (refusal) return refuse(refusal.status, refusal.message);
  const url = new URL(req.url);
  const token = url.searchParams.get('token') ?? '';
  const next = safeNext(url.searchParams.get('next'));
  const signed = await withStore(async () => (await deps.runtime()).access.signIn(token, { host: req.headers.get('host'), secure: isHttps(req.url, req.headers) }));
  if (signed instanceof Response) return signed;
  if (!signed) {
    // A used (or expired) link opened again in a browser already signed in: nothing to refuse, go on.
    const caller = await withStore(async () => (await deps.runtime()).access.identify(req.headers));
    if (!(caller instanceof Response) && caller.kind === 'owner') return redirect(next);
    return redirect(`/signin?error=invalid${next === '/' ? '' : `&next=${encodeURIComponent(next)}`}`);
  }
  return redirect(next, signed.setCookie);
}

/** `POST /auth/signout`: ends this browser's sign-in everywhere (the row goes) and clears its cookie. */
export async function handleSignOut(req: Request, deps: AuthRouteDeps): Promise<Response> {
  const refusal = guardRequest(req, deps.policy);
  if (refusal) return refuse(refusal.status, refusal.message);
  const clear = await withStore(async () => (await deps.runtime()).access.signOut(req.headers, isHttps(req.url, req.headers)));
  if (clear instanceof Response) return clear;
  return Response.json({ signedOut: true }, { headers: { 'set-cookie': clear, 'cache-control': 'no-store' } });
}

/** A database that cannot answer is a 503 the browser may retry, never a 500. */
async function withStore<T>(work: () => Promise<T>): Promise<T | Response> {
  try {
    return await work();
  } catch (e) {
    if (!isStoreUnavailable(e)) throw e;
    return new Response('Paddock cannot reach its database right now. Try again in a moment.', { status: 503, headers: { 'retry-after': '2', 'cache-control': 'no-store' } });
  }
}

/** A relative redirect: the browser resolves it against the address it used (no Host trust needed). */
function redirect(location: string, setCookie?: string): Response {
  const headers = new Headers({ location, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' });
  if (setCookie) headers.append('set-cookie', setCookie);
  return new Response(null, { status: 303, headers });
}
