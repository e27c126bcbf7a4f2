import { notFound } from 'next/navigation';
import { ID_PATTERN } from '~/lib/ids';
import { isStoreUnavailable } from '~/lib/errors';
import { SessionView } from '~/app/_components/session-view/session-view';
import { getRuntime } from '~/server/runtime';

/** Whether the server can say this session does not exist (with its database down it cannot: the page renders from the browser's copy). */
async function knownMissing(id: string): Promise<boolean> {
  if (!ID_PATTERN.session.test(id)) return true;
  try {
    return (await (await getRuntime()).store.getSession(id)) === null;
  } catch (e) {
    if (isStoreUnavailable(e)) return false;
    throw e;
  }
}

export default async function SessionPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  if (await knownMissing(id)) notFound();
  return <SessionView sessionId={id} />;
}
