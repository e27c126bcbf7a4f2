'use client';
import { useQuery } from '@tanstack/react-query';
import { useTRPC } from '~/lib/browser/trpc';

/** Says which brain answers; the offline demo brain is labelled so nobody mistakes it for Claude. */
export function BrainBadge() {
  const trpc = useTRPC();
  const brain = useQuery(trpc.sessions.brain.queryOptions(undefined, { staleTime: Infinity }));
  if (!brain.data) return null;
  if (brain.data.isDemo) {
    return (
      <div className="demo-banner" data-testid="demo-banner">
        <strong>Offline demo brain — not Claude.</strong> No ANTHROPIC_API_KEY is configured, so sessions run on a deterministic
        stand-in that shows how Paddock works. Set ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL for a local model) and restart.
      </div>
    );
  }
  return (
    <span className="brain" data-testid="brain-label">
      model: {brain.data.label}
    </span>
  );
}
