import type { Metadata } from 'next';
import { DeploymentList } from '~/app/_components/deployments/deployment-list';

export const metadata: Metadata = { title: 'Deployments · Paddock' };

export default function DeploymentsPage() {
  return (
    <main className="page">
      <DeploymentList />
    </main>
  );
}
