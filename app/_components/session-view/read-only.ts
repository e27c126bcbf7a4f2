'use client';
import { createContext, useContext } from 'react';

/**
 * A share link's view of a session: everything the owner sees, nothing that writes (no composer,
 * no Allow/Deny, no Retry, no example prompts, no browser hand, no saving from the editor). The
 * server refuses a viewer's writes whatever the page does; this only keeps the page honest.
 */
export const ReadOnlyContext = createContext(false);

export function useReadOnly(): boolean {
  return useContext(ReadOnlyContext);
}
