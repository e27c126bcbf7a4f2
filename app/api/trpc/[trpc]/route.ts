import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { appRouter } from '~/server/api/root';
import { getRuntime } from '~/server/runtime';
import { logger } from '~/server/log';

const log = logger('trpc');

export const dynamic = 'force-dynamic';

function handler(req: Request) {
  return fetchRequestHandler({
    endpoint: '/api/trpc',
    req,
    router: appRouter,
    createContext: async () => ({ runtime: await getRuntime() }),
    onError({ error, path }) {
      if (error.code === 'INTERNAL_SERVER_ERROR') log.error('procedure failed', { path, error: error.message });
    },
  });
}

export { handler as GET, handler as POST };
