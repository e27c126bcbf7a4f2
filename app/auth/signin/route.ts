import { handleSignIn } from '~/server/api/auth-routes';
import { guardPolicyFromEnv } from '~/server/access/request-guard';
import { getRuntime } from '~/server/runtime';

export const dynamic = 'force-dynamic';

const policy = guardPolicyFromEnv();

export function GET(req: Request): Promise<Response> {
  return handleSignIn(req, { runtime: getRuntime, policy });
}
