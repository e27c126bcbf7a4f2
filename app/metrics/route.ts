import { guardPolicyFromEnv } from '~/server/access/request-guard';
import { loadConfig } from '~/server/config';
import { handleRest } from '~/server/rest/handler';
import { getRuntime } from '~/server/runtime';

export const dynamic = 'force-dynamic';

let limits: { maxBodyBytes: number; policy: ReturnType<typeof guardPolicyFromEnv> } | undefined;

/** `/metrics`, where Prometheus looks by default: the same route as `/v1/metrics`, with the same key check. */
export function GET(req: Request) {
  limits ??= { maxBodyBytes: loadConfig().PADDOCK_MAX_BODY_BYTES, policy: guardPolicyFromEnv() };
  const url = new URL(req.url);
  url.pathname = '/v1/metrics';
  return handleRest(new Request(url, { method: 'GET', headers: req.headers, signal: req.signal }), { runtime: getRuntime, ...limits });
}
