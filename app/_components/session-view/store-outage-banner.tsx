'use client';

/**
 * Shown while the server reports its database unreachable: the page keeps showing what this
 * browser saved (`what`: the session, or the session list), and resumes by itself once it is back.
 */
export function StoreOutageBanner({ detail, what = 'this session' }: { detail: string | null; what?: string }) {
  return (
    <p className="offline-banner" role="status" data-testid="store-outage" title={detail ?? undefined}>
      The database is unreachable: showing the copy of {what} saved in your browser. The page resumes by itself once the database is back.
    </p>
  );
}
