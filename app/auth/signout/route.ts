import { isHttps } from '~/server/access/access';
import { getRuntime } from '~/server/runtime';

export const dynamic = 'force-dynamic';

/** Ends this browser's sign-in everywhere (the row goes) and clears its cookie. POST only: a link cannot sign anyone out. */
export async function POST(req: Request): Promise<Response> {
  const clear = await (await getRuntime()).access.signOut(req.headers, isHttps(req.url, req.headers));
  return Response.json({ signedOut: true }, { headers: { 'set-cookie': clear, 'cache-control': 'no-store' } });
}
