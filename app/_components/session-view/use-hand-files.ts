'use client';
import { useQuery } from '@tanstack/react-query';
import { useCallback, useEffect, useState } from 'react';
import type { BrowserEngine } from '~/lib/browser/engine/types';
import { useTRPC, useTRPCClient } from '~/lib/browser/trpc';

/**
 * Files of the selected hand for the IDE: read from this tab's engine for its own browser hand,
 * through the server for server-side hands. `version` bumps whenever a call may have changed them.
 */
export function useHandFiles(sessionId: string, hand: string | null, engine: BrowserEngine | null, ownBrowserHand: boolean, version: number) {
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
  const unavailable = hand !== null && !local && !remote ? 'This browser hand runs in another tab.' : serverFiles.error ? serverFiles.error.message : null;
  return { files, read, write, unavailable };
}
