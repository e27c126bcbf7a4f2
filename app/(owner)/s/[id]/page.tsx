import { SessionView } from '~/app/_components/session-view/session-view';

export default async function SessionPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  return <SessionView sessionId={id} />;
}
