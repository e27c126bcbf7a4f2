import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { isDomainError } from '~/lib/errors';
import { appRouter } from '~/server/api/root';
import { domainToTRPC } from '~/server/api/trpc';
import { getRuntime } from '~/server/runtime';
import { logger } from '~/server/log';

const log = logger('trpc');

export const dynamic = 'force-dynamic';

function handler(req: Request) {
  return fetchRequestHandler({
    endpoint: '/api/trpc',
    req,
    router: appRouter,
    createContext: async () => {
      try {
        return { runtime: await getRuntime() };
      } catch (e) {
        // Started while PostgreSQL was down: a 503 the client retries (getRuntime tries again on
        // the next request), not a 500.
        if (isDomainError(e)) throw domainToTRPC(e);
        throw e;
      }
    },
    onError({ error, path }) {
      if (error.code === 'INTERNAL_SERVER_ERROR') log.error('procedure failed', { path, error: error.message });
      else if (error.code === 'SERVICE_UNAVAILABLE') log.warn('store unavailable', { path });
    },
  });
}

export { handler as GET, handler as POST };
