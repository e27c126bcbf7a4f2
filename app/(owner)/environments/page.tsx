import type { Metadata } from 'next';
import { EnvironmentList } from '~/app/_components/environments/environment-list';

export const metadata: Metadata = { title: 'Environments · Paddock' };

export default function EnvironmentsPage() {
  return (
    <main className="page">
      <EnvironmentList />
    </main>
  );
}
