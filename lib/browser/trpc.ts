import 'client-only';
import { type TRPCLink, createTRPCClient, httpBatchLink, httpSubscriptionLink, splitLink } from '@trpc/client';
import { observable } from '@trpc/server/observable';
import { createTRPCContext } from '@trpc/tanstack-react-query';
import { SHARE_HEADER } from '~/lib/share-token';
import { VISITOR_HEADER } from '~/lib/widget';
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

/**
 * The share page's client: every request carries the link's token (a header; a subscription,
 * which EventSource cannot give headers, a connection parameter), so the server answers it as the
 * link's viewer, never as whoever is signed in in this browser. No sign-in redirect: a refused
 * viewer's page says its link ended.
 */
export function makeShareTrpcClient(token: string) {
  return createTRPCClient<AppRouter>({
    links: [
      splitLink({
        condition: (op) => op.type === 'subscription',
        true: httpSubscriptionLink({ url: '/api/trpc', connectionParams: { share: token } }),
        false: httpBatchLink({ url: '/api/trpc', headers: { [SHARE_HEADER]: token } }),
      }),
    ],
  });
}

/**
 * The docs widget's client (`/embed/<agent>`): every request carries the visitor's token, read
 * when the request is made (the first `widget.open` may hand out a new one), as a header or, for a
 * subscription, a connection parameter. Never the owner's cookie's identity, and no sign-in redirect.
 */
export function makeWidgetTrpcClient(token: () => string | null) {
  return createTRPCClient<AppRouter>({
    links: [
      splitLink({
        condition: (op) => op.type === 'subscription',
        true: httpSubscriptionLink({ url: '/api/trpc', connectionParams: () => ({ visitor: token() ?? '' }) }),
        false: httpBatchLink({
          url: '/api/trpc',
          headers: () => {
            const t = token();
            return t ? { [VISITOR_HEADER]: t } : {};
          },
        }),
      }),
    ],
  });
}

export type WidgetTrpcClient = ReturnType<typeof makeWidgetTrpcClient>;

/** Whether a tRPC error says this caller may not (any more) read: a share link revoked or expired. */
export function accessRefused(err: unknown): boolean {
  const data = typeof err === 'object' && err !== null && 'data' in err ? (err as { data?: { code?: unknown } | null }).data : null;
  return data?.code === 'UNAUTHORIZED' || data?.code === 'FORBIDDEN' || data?.code === 'NOT_FOUND';
}

/** Whether a tRPC error says the server is up but its session store (database) is not (a 503). */
export function storeUnavailable(err: unknown): boolean {
  const data = typeof err === 'object' && err !== null && 'data' in err ? (err as { data?: { code?: unknown } | null }).data : null;
  return data?.code === 'SERVICE_UNAVAILABLE';
}
