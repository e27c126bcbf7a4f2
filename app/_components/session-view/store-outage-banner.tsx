'use client';

/**
 * Shown while the server reports its database unreachable: the page keeps showing the copy of the
 * session mirrored in this browser, and the server resumes the session by itself once it is back.
 */
export function StoreOutageBanner({ detail }: { detail: string | null }) {
  return (
    <p className="offline-banner" role="status" data-testid="store-outage" title={detail ?? undefined}>
      The database is unreachable: showing the copy of this session saved in your browser. The session resumes by itself once the database is back.
    </p>
  );
}
