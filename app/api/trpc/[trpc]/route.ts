import { handleTrpc } from '~/server/api/http-handler';
import { loadConfig } from '~/server/config';
import { getRuntime } from '~/server/runtime';

export const dynamic = 'force-dynamic';

let maxBodyBytes: number | undefined;

function handler(req: Request) {
  // The limit is read from the environment without the runtime, which may be waiting for its database.
  maxBodyBytes ??= loadConfig().PADDOCK_MAX_BODY_BYTES;
  return handleTrpc(req, { runtime: getRuntime, maxBodyBytes });
}

export { handler as GET, handler as POST };
