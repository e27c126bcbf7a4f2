import type { Metadata } from 'next';
import { AgentList } from '~/app/_components/agents/agent-list';

export const metadata: Metadata = { title: 'Agents · Paddock' };

export default function AgentsPage() {
  return (
    <main className="page">
      <AgentList />
    </main>
  );
}
