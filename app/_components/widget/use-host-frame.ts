'use client';
import { type RefObject, useEffect } from 'react';

/**
 * The widget's frame and the host page: focus on open, the host's theme as it changes, Escape
 * closes, and "ready" once the widget takes input (the loader's first focus request may have come
 * before this page ran).
 */
export function useHostFrame(origin: string, ready: boolean, input: RefObject<HTMLTextAreaElement | null>, setTheme: (t: 'light' | 'dark') => void): void {
  useEffect(() => {
    const onMessage = (e: MessageEvent) => {
      if (e.source !== window.parent || e.origin !== origin) return;
      const data = e.data as { type?: unknown; theme?: unknown } | null;
      if (data?.type === 'paddock:focus') input.current?.focus();
      if (data?.type === 'paddock:theme' && (data.theme === 'light' || data.theme === 'dark')) setTheme(data.theme);
    };
    const onKey = (e: globalThis.KeyboardEvent) => {
      if (e.key === 'Escape' && window.parent !== window) window.parent.postMessage({ type: 'paddock:close' }, origin);
    };
    window.addEventListener('message', onMessage);
    window.addEventListener('keydown', onKey);
    return () => {
      window.removeEventListener('message', onMessage);
      window.removeEventListener('keydown', onKey);
    };
  }, [origin, input, setTheme]);

  useEffect(() => {
    if (ready && window.parent !== window) window.parent.postMessage({ type: 'paddock:ready' }, origin);
  }, [ready, origin]);
}
