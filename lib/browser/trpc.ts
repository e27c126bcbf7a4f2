import 'client-only';
import { type TRPCLink, createTRPCClient, httpBatchLink, httpSubscriptionLink, splitLink } from '@trpc/client';
import { observable } from '@trpc/server/observable';
import { createTRPCContext } from '@trpc/tanstack-react-query';
import type { AppRouter } from '~/server/api/root';

export const { TRPCProvider, useTRPC, useTRPCClient } = createTRPCContext<AppRouter>();

/** A sign-in that ended (expired, signed out elsewhere) sends the page to the sign-in page, then back. */
const signInWhenUnauthorized: TRPCLink<AppRouter> = () => ({ op, next }) =>
  observable((observer) =>
    next(op).subscribe({
      next: (v) => observer.next(v),
      complete: () => observer.complete(),
      error: (err) => {
        if (err.data?.code === 'UNAUTHORIZED' && typeof window !== 'undefined' && window.location.pathname !== '/signin') {
          window.location.assign(`/signin?next=${encodeURIComponent(window.location.pathname + window.location.search)}`);
        }
        observer.error(err);
      },
    }),
  );

export function makeTrpcClient() {
  return createTRPCClient<AppRouter>({
    links: [
      signInWhenUnauthorized,
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
