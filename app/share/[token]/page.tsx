import { notFound } from 'next/navigation';
import { isStoreUnavailable } from '~/lib/errors';
import { ShareView } from '~/app/_components/share-links/share-view';
import type { ShareLookup } from '~/server/access/share-links';
import { getRuntime } from '~/server/runtime';

/**
 * A session through a share link. The page carries the token (it is in the address already), the
 * session id and whether files are hidden: nothing of the owner. Everything else comes through the
 * API as the link's viewer. Unknown or revoked: 404; expired: 410 from the request guard (the
 * expiry is in the token), said here too should the clock have turned since.
 */
export default async function SharePage({ params }: { params: Promise<{ token: string }> }) {
  const { token } = await params;
  let found: ShareLookup;
  try {
    found = await (await getRuntime()).access.shares.lookup(token);
  } catch (e) {
    if (!isStoreUnavailable(e)) throw e;
    return (
      <main className="page">
        <h1>Shared session</h1>
        <p className="muted">The Paddock server cannot reach its database right now. Try again in a moment.</p>
      </main>
    );
  }
  if (found.state === 'gone') notFound();
  if (found.state === 'expired') {
    return (
      <main className="page" data-testid="share-expired">
        <h1>This link has expired</h1>
        <p className="muted">Ask the session&apos;s owner for a new one.</p>
      </main>
    );
  }
  return <ShareView token={token} sessionId={found.link.session_id} hideFiles={found.link.hide_files} />;
}
