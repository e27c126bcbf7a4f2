/** An unknown or revoked share link (a 404): the same answer for both, so a link says nothing once revoked. */
export default function ShareNotFound() {
  return (
    <main className="page" data-testid="share-not-found">
      <h1>This link does not work</h1>
      <p className="muted">It was revoked by the session&apos;s owner, or never existed. Ask the owner for a new one.</p>
    </main>
  );
}
