import type { Metadata } from 'next';
import { SkillList } from '~/app/_components/skills/skill-list';

export const metadata: Metadata = { title: 'Skills · Paddock' };

export default function SkillsPage() {
  return (
    <main className="page">
      <SkillList />
    </main>
  );
}
