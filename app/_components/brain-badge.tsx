'use client';
import { useQuery } from '@tanstack/react-query';
import { type ReactNode, useState } from 'react';
import { useTRPC } from '~/lib/browser/trpc';
import '~/app/_components/brain-badge.css';

/** Where this browser remembers that the demo line was dismissed (it then stays a chip). */
export const DEMO_DISMISSED_KEY = 'paddock.demoBannerDismissed';

function dismissedHere(): boolean {
  try {
    return typeof window !== 'undefined' && window.localStorage.getItem(DEMO_DISMISSED_KEY) === '1';
  } catch {
    return false;
  }
}

const WHY = 'No ANTHROPIC_API_KEY is configured, so sessions run on a deterministic stand-in that shows how Paddock works. Set ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL for a local model) and restart.';

/**
 * Says which brain answers; the offline demo brain is labelled so nobody mistakes it for Claude:
 * one line (a chip at phone width) that `extra` (the session's token line) folds into. Dismissed,
 * it stays a chip — the label never goes — and this browser remembers it.
 */
export function BrainBadge({ extra, demoOnly = false }: { extra?: ReactNode; /** Only the demo's notice: where a model line would say nothing useful (the home page). */ demoOnly?: boolean }) {
  const trpc = useTRPC();
  const brain = useQuery(trpc.sessions.brain.queryOptions(undefined, { staleTime: Infinity }));
  // Read once: the server renders nothing here (no brain yet), so this cannot mismatch hydration.
  const [dismissed, setDismissed] = useState(dismissedHere);
  if (!brain.data) return null;
  if (brain.data.isDemo) {
    const dismiss = () => {
      try {
        window.localStorage.setItem(DEMO_DISMISSED_KEY, '1');
      } catch {
        // storage off: dismissed for this page only
      }
      setDismissed(true);
    };
    return (
      <div className={`demo-line${dismissed ? ' demo-chip' : ''}`} data-testid="demo-banner" data-dismissed={dismissed} title={WHY}>
        <strong className="demo-label">Demo brain, not Claude</strong>
        {!dismissed && (
          <span className="demo-why" data-testid="demo-why">
            · answers are canned: set ANTHROPIC_API_KEY and restart for a real model
          </span>
        )}
        {extra && <span className="demo-extra">{extra}</span>}
        {!dismissed && (
          <button type="button" className="demo-dismiss" aria-label="Dismiss the demo notice" data-testid="demo-dismiss" onClick={dismiss}>
            ✕
          </button>
        )}
      </div>
    );
  }
  if (demoOnly) return null;
  return (
    <span className="brain" data-testid="brain-label">
      model: {brain.data.label}
    </span>
  );
}
