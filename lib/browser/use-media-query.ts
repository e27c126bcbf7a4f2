import 'client-only';
import { useCallback, useSyncExternalStore } from 'react';

/**
 * Whether a CSS media query matches, following changes. `null` on the server and while
 * hydrating: the server cannot know the width, and a guess would flash the wrong layout.
 */
export function useMediaQuery(query: string): boolean | null {
  const subscribe = useCallback(
    (onChange: () => void) => {
      const list = window.matchMedia(query);
      list.addEventListener('change', onChange);
      return () => list.removeEventListener('change', onChange);
    },
    [query],
  );
  return useSyncExternalStore(
    subscribe,
    () => window.matchMedia(query).matches,
    () => null,
  );
}
