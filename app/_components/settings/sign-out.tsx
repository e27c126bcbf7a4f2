'use client';
import { useState } from 'react';
import { forgetMirror } from '~/lib/browser/mirror';

/** Signs out (the server ends the sign-in everywhere), then forgets this browser's offline copy. */
export function SignOut() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const signOut = async () => {
    setBusy(true);
    try {
      const res = await fetch('/auth/signout', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      if (!res.ok) throw new Error(`sign-out failed (HTTP ${res.status})`);
      await forgetMirror();
      window.location.assign('/signin');
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
      setBusy(false);
    }
  };
  return (
    <>
      <button type="button" onClick={() => void signOut()} disabled={busy} data-testid="sign-out">
        {busy ? 'Signing out…' : 'Sign out'}
      </button>
      {error && <p className="error">{error}</p>}
    </>
  );
}
