import type { Metadata } from 'next';
import { safeNext } from '~/server/access/next-path';

export const metadata: Metadata = { title: 'Sign in · Paddock', referrer: 'no-referrer' };

/**
 * What a stranger sees, and the owner when signed out: a place to paste the token Paddock printed
 * at start. The form sends it to /auth/signin exactly as the printed URL does.
 */
export default async function SignInPage({ searchParams }: { searchParams: Promise<{ next?: string; error?: string }> }) {
  const { next, error } = await searchParams;
  return (
    <main className="signin">
      <h1>
        <span className="brand">Paddock</span> · sign in
      </h1>
      <p className="muted">
        Open the sign-in link Paddock printed in the terminal where it started (<span className="mono">paddock: sign in at …</span>), or paste its token
        here. Each start prints a fresh one-time link; <span className="mono">PADDOCK_OWNER_TOKEN</span> sets a fixed token.
      </p>
      {error === 'invalid' && (
        <p className="error" role="alert" data-testid="signin-error">
          That token is wrong, expired or already used. Use the newest link from the terminal.
        </p>
      )}
      <form method="get" action="/auth/signin">
        <label htmlFor="token">Token</label>
        <input id="token" name="token" type="password" autoComplete="off" required autoFocus />
        <input type="hidden" name="next" value={safeNext(next)} />
        <button type="submit" className="primary">
          Sign in
        </button>
      </form>
      <p className="muted small">Programs do not sign in: they send an API key (made on the settings page) as x-api-key or Authorization: Bearer.</p>
    </main>
  );
}
