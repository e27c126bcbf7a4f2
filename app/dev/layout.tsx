import { notFound } from 'next/navigation';
import type { ReactNode } from 'react';
import { requireOwnerPage } from '~/server/access/page-guard';
import { getRuntime } from '~/server/runtime';

export const dynamic = 'force-dynamic';

/** Developer pages (engine playground, IDE preview): only with PADDOCK_DEV_PAGES=1. */
export default async function DevLayout({ children }: { children: ReactNode }) {
  if (process.env.PADDOCK_DEV_PAGES !== '1') notFound();
  await requireOwnerPage(getRuntime);
  return children;
}
