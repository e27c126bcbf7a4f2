import { SessionList } from '~/app/_components/session-list/session-list';

export default function HomePage() {
  return (
    <main className="page">
      <SessionList />
    </main>
  );
}
