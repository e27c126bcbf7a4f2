'use client';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { useState } from 'react';
import { ServiceWorker } from '~/app/_components/service-worker';
import { ReadOnlyContext } from '~/app/_components/session-view/read-only';
import { SessionView } from '~/app/_components/session-view/session-view';
import { TRPCProvider, makeShareTrpcClient } from '~/lib/browser/trpc';

/**
 * The share page's client: its own query cache and a tRPC client that sends the link's token with
 * every request, around the session view in read-only mode. The service worker keeps the page,
 * and the mirror the log, so it stays readable offline once opened.
 */
export function ShareView({ token, sessionId, hideFiles }: { token: string; sessionId: string; hideFiles: boolean }) {
  const [queryClient] = useState(() => new QueryClient({ defaultOptions: { queries: { staleTime: 5_000, retry: 1 } } }));
  const [trpcClient] = useState(() => makeShareTrpcClient(token));
  return (
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
        <ReadOnlyContext.Provider value={true}>
          <SessionView sessionId={sessionId} share={{ hideFiles }} />
        </ReadOnlyContext.Provider>
      </TRPCProvider>
      <ServiceWorker />
    </QueryClientProvider>
  );
}
