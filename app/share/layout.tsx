import type { Metadata } from 'next';
import type { ReactNode } from 'react';

export const dynamic = 'force-dynamic';

/**
 * Share links (`/share/<token>`): no sign-in, no owner navigation. Never indexed, and the token in
 * the address never leaves in a Referer (next.config.ts sends the same as headers).
 */
export const metadata: Metadata = {
  title: 'Shared session · Paddock',
  robots: { index: false, follow: false },
  referrer: 'no-referrer',
};

export default function ShareLayout({ children }: { children: ReactNode }) {
  return (
    <>
      <header className="topbar">
        <span className="brand">Paddock</span>
        <span className="tagline">a shared session, read-only</span>
      </header>
      {children}
    </>
  );
}
