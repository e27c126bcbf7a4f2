import type { Metadata } from 'next';
import type { ReactNode } from 'react';
import { Providers } from '~/app/_components/providers';
import '~/app/globals.css';

export const metadata: Metadata = {
  title: 'Paddock',
  description: 'Long-running Claude agents: durable sessions, a stateless harness, disposable hands.',
  icons: { icon: '/favicon.svg' },
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        <Providers>{children}</Providers>
      </body>
    </html>
  );
}
