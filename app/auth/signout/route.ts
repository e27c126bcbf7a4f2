import { handleSignOut } from '~/server/api/auth-routes';
import { guardPolicyFromEnv } from '~/server/access/request-guard';
import { getRuntime } from '~/server/runtime';

export const dynamic = 'force-dynamic';

const policy = guardPolicyFromEnv();

/** POST only: a link cannot sign anyone out. */
export function POST(req: Request): Promise<Response> {
  return handleSignOut(req, { runtime: getRuntime, policy });
}
