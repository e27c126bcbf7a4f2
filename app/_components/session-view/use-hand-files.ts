'use client';
import { useQuery } from '@tanstack/react-query';
import { useCallback, useEffect, useState } from 'react';
import type { BrowserEngine } from '~/lib/browser/engine/types';
import { storeUnavailable, useTRPC, useTRPCClient } from '~/lib/browser/trpc';

/** Files the IDE cannot show, said as what is true: whose tab holds them, or what is down. */
function unavailableText(hand: string, o: { local: boolean; remote: boolean; thisTabServes: boolean; outage: 'server' | 'database' | null }, error: unknown): string | null {
  if (!o.local && !o.remote) {
    if (!o.thisTabServes) return 'This browser hand runs in another tab.';
    return o.outage === 'server' ? "The server cannot be reached: this tab's engine starts once it is back." : "This tab's engine is starting…";
  }
  if (!error) return null;
  if (storeUnavailable(error)) return `The database is unreachable: the files of ${hand} show again once it is back.`;
  if (o.outage === 'server' || outageError(error)) return `The server cannot be reached: the files of ${hand} show again once it answers.`;
  return error instanceof Error ? error.message : `the files of ${hand} could not be listed`;
}

/** The database unreachable, or no answer at all (a tRPC error with no data never reached a procedure). */
function outageError(error: unknown): boolean {
  return storeUnavailable(error) || !(error instanceof Error && 'data' in error && error.data);
}

/**
 * Files of the selected hand for the IDE: read from this tab's engine for its own browser hand,
 * through the server for server-side hands. `version` bumps whenever a call may have changed them.
 */
export function useHandFiles(
  sessionId: string,
  hand: string | null,
  engine: BrowserEngine | null,
  ownBrowserHand: boolean,
  version: number,
  o: { thisTabServes: boolean; outage: 'server' | 'database' | null } = { thisTabServes: false, outage: null },
) {
  const trpc = useTRPC();
  const client = useTRPCClient();
  const local = ownBrowserHand && engine !== null;
  const remote = hand !== null && !hand.startsWith('browser-');
  const [localFiles, setLocalFiles] = useState<string[]>([]);

  // `version` is part of the key: each change fetches anew. (Invalidating instead would join a first
  // fetch still in flight, which may predate the change, and the tree would miss the new files.)
  const input = { sessionId, hand: hand ?? '' };
  const baseKey = trpc.hands.listFiles.queryKey(input);
  const sameHand = JSON.stringify(baseKey);
  const serverFiles = useQuery({
    queryKey: [...baseKey, version],
    queryFn: () => client.hands.listFiles.query(input),
    enabled: remote,
    retry: false,
    refetchOnWindowFocus: false,
    // A listing an outage failed is asked again until it answers (a refusal, say a lost hand's, is final).
    refetchInterval: (q) => (q.state.status === 'error' && outageError(q.state.error) ? 3_000 : false),
    // While the next version loads, the tree keeps this hand's last listing (never another hand's).
    placeholderData: (prev, prevQuery) => (prevQuery && JSON.stringify(prevQuery.queryKey.slice(0, -1)) === sameHand ? prev : undefined),
  });
  useEffect(() => {
    if (!local) return;
    let live = true;
    void engine.listFiles().then((f) => live && setLocalFiles(f));
    return () => {
      live = false;
    };
  }, [local, engine, version]);

  const read = useCallback(
    async (path: string): Promise<string> => {
      if (local) return engine.readFile(path);
      if (!hand || !remote) throw new Error('this hand lives in another browser tab');
      return (await client.hands.readFile.query({ sessionId, hand, path })).content;
    },
    [local, remote, engine, client, sessionId, hand],
  );

  /** Writes the user's edit to the hand and records it in the log, so the brain sees it. */
  const write = useCallback(
    async (path: string, content: string): Promise<void> => {
      if (!hand) throw new Error('no hand selected');
      if (local) {
        await engine.writeFile(path, content);
        await client.events.send.mutate({ sessionId, event: { type: 'user.file_edit', hand, path, content } });
        return;
      }
      await client.hands.writeFile.mutate({ sessionId, hand, path, content });
    },
    [local, engine, client, sessionId, hand],
  );

  const files = local ? localFiles : remote ? (serverFiles.data?.files ?? []) : [];
  const unavailable = hand === null ? null : unavailableText(hand, { local, remote, ...o }, serverFiles.error);
  return { files, read, write, unavailable };
}
