'use client';
import { useEffect } from 'react';
import { useStickToBottomContext } from 'use-stick-to-bottom';

/** Shown once the reader has scrolled up: one click back to the newest rows. */
export function JumpToLatest({ label, testId }: { label: string; testId: string }) {
  const { isAtBottom, scrollToBottom } = useStickToBottomContext();
  if (isAtBottom) return null;
  return (
    <button type="button" className="jump-latest" data-testid={testId} onClick={() => void scrollToBottom()}>
      {label}
    </button>
  );
}

/**
 * use-stick-to-bottom follows the content growing, not the pane shrinking: when the pane gets
 * shorter (a bar above it fills in, a panel is dragged, the window resized) a reader who was at
 * the bottom would be left a few rows short of it, and stay there until the next event. This
 * keeps them at the bottom unless they scrolled away.
 */
export function FollowPaneResize() {
  const { scrollRef, scrollToBottom, state } = useStickToBottomContext();
  useEffect(() => {
    const pane = scrollRef.current;
    if (!pane) return;
    const observer = new ResizeObserver(() => {
      if (!state.escapedFromLock) void scrollToBottom('instant');
    });
    observer.observe(pane);
    return () => observer.disconnect();
  }, [scrollRef, scrollToBottom, state]);
  return null;
}
