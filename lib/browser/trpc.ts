import 'client-only';
import { createTRPCClient, httpBatchLink, httpSubscriptionLink, splitLink } from '@trpc/client';
import { createTRPCContext } from '@trpc/tanstack-react-query';
import type { AppRouter } from '~/server/api/root';

export const { TRPCProvider, useTRPC, useTRPCClient } = createTRPCContext<AppRouter>();

export function makeTrpcClient() {
  return createTRPCClient<AppRouter>({
    links: [
      splitLink({
        condition: (op) => op.type === 'subscription',
        true: httpSubscriptionLink({ url: '/api/trpc' }),
        false: httpBatchLink({ url: '/api/trpc' }),
      }),
    ],
  });
}

export type TrpcClient = ReturnType<typeof makeTrpcClient>;

/** Whether a tRPC error says the server is up but its session store (database) is not (a 503). */
export function storeUnavailable(err: unknown): boolean {
  const data = typeof err === 'object' && err !== null && 'data' in err ? (err as { data?: { code?: unknown } | null }).data : null;
  return data?.code === 'SERVICE_UNAVAILABLE';
}
