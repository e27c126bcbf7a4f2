import Link from 'next/link';
import type { ReactNode } from 'react';
import { DataDirBanner } from '~/app/_components/data-dir-banner';
import { ServiceWorker } from '~/app/_components/service-worker';
import { requireOwnerPage } from '~/server/access/page-guard';
import { getRuntime } from '~/server/runtime';

export const dynamic = 'force-dynamic';

/** Every page in here is the owner's: a signed-out visitor is sent to /signin and back. */
export default async function OwnerLayout({ children }: { children: ReactNode }) {
  await requireOwnerPage(getRuntime);
  return (
    <>
      <header className="topbar">
        <Link href="/" className="brand">
          Paddock
        </Link>
        <span className="tagline">agent sessions that survive anything</span>
        <nav className="topnav">
          <Link href="/agents">Agents</Link>
          <Link href="/environments">Environments</Link>
          <Link href="/memory">Memory</Link>
          <Link href="/skills">Skills</Link>
          <Link href="/deployments">Deployments</Link>
          <Link href="/settings">Settings</Link>
        </nav>
      </header>
      <DataDirBanner />
      {children}
      {/* Only the owner's pages register the offline worker: a signed-out browser keeps nothing. */}
      <ServiceWorker />
    </>
  );
}
