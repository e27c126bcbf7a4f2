import { guardPolicyFromEnv } from '~/server/access/request-guard';
import { loadConfig } from '~/server/config';
import { handleRest } from '~/server/rest/handler';
import { getRuntime } from '~/server/runtime';

export const dynamic = 'force-dynamic';

// Read once from the environment, without the runtime (which may be waiting for its database).
let limits: { maxBodyBytes: number; maxUploadBytes: number; policy: ReturnType<typeof guardPolicyFromEnv> } | undefined;

function handler(req: Request) {
  const config = limits ? null : loadConfig();
  limits ??= { maxBodyBytes: config!.PADDOCK_MAX_BODY_BYTES, maxUploadBytes: config!.PADDOCK_MAX_UPLOAD_BYTES, policy: guardPolicyFromEnv() };
  return handleRest(req, { runtime: getRuntime, ...limits });
}

export { handler as GET, handler as POST, handler as DELETE, handler as PUT, handler as PATCH };
