import type { Metadata } from 'next';
import { MemoryStoreList } from '~/app/_components/memory/memory-store-list';

export const metadata: Metadata = { title: 'Memory · Paddock' };

export default function MemoryPage() {
  return (
    <main className="page">
      <MemoryStoreList />
    </main>
  );
}
