import Link from 'next/link';

/**
 * Every unknown route (a 404), in Paddock's colours rather than Next's white page. Outside the
 * owner's layout, so it says nothing about what this server holds: the same page for everyone.
 */
export default function NotFound() {
  return (
    <>
      <header className="topbar">
        <Link href="/" className="brand">
          Paddock
        </Link>
      </header>
      <main className="page" data-testid="not-found">
        <h1>Not found</h1>
        <p className="muted">This server has no page at this address. The link may be mistyped, or what it pointed to was deleted.</p>
        <p>
          <Link href="/">Go to Paddock&apos;s home</Link>
        </p>
      </main>
    </>
  );
}
