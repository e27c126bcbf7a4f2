import Link from 'next/link';

/** Answered with HTTP 404: a session (or page) this server does not have. */
export default function NotFound() {
  return (
    <main className="page" data-testid="not-found">
      <h1>Not found</h1>
      <p className="muted">This server has no such session or page. It may have been deleted, or the link is mistyped.</p>
      <p>
        <Link href="/">All sessions</Link>
      </p>
    </main>
  );
}
