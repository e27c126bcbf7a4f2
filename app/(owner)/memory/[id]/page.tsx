import type { Metadata } from 'next';
import { notFound } from 'next/navigation';
import { MemoryBrowser } from '~/app/_components/memory/memory-browser';
import { ID_PATTERN } from '~/lib/ids';

export const metadata: Metadata = { title: 'Memory store · Paddock' };

export default async function MemoryStorePage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  if (!ID_PATTERN.memoryStore.test(id)) notFound();
  return (
    <main className="page">
      <MemoryBrowser storeId={id} />
    </main>
  );
}
