import type { Metadata } from 'next';
import type { ReactNode } from 'react';

export const dynamic = 'force-dynamic';

/**
 * The docs widget's frame (`/embed/<agent>`), loaded by `public/embed.js` on another site. Never
 * indexed; proxy.ts gives it a `frame-ancestors` CSP naming the one origin it was opened for.
 */
export const metadata: Metadata = {
  title: 'Chat · Paddock',
  robots: { index: false, follow: false },
  referrer: 'no-referrer',
};

export default function EmbedLayout({ children }: { children: ReactNode }) {
  return children;
}
