import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { handleSignIn } from '~/server/api/auth-routes';
import { createDemoBrain } from '~/server/harness/demo-brain';
import { testRuntime } from '~/server/harness/testing/test-runtime';
import { openSqliteStore } from '~/server/session/sqlite-store';

let dir: string;
let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function world() {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-auth-'));
  const store = await openSqliteStore({ file: path.join(dir, 'db.sqlite') });
  close = () => store.close();
  const rt = testRuntime({ store, model: createDemoBrain({ chunkDelayMs: 0 }), dataDir: dir });
  const deps = { runtime: () => Promise.resolve(rt), policy: { allowedHosts: [], allowedOrigins: [] } };
  const open = (token: string, cookie?: string, next?: string) =>
    handleSignIn(new Request(`http://localhost:3000/auth/signin?token=${token}${next ? `&next=${encodeURIComponent(next)}` : ''}`, { headers: { host: 'localhost:3000', ...(cookie ? { cookie } : {}) } }), deps);
  return { rt, open };
}

describe('sign-in link', () => {
  it('sends a signed-in person who opens the used link again home, without a new sign-in', async () => {
    const { rt, open } = await world();
    const token = await rt.access.newSigninToken();
    const first = await open(token);
    expect(first.status).toBe(303);
    const cookie = (first.headers.get('set-cookie') ?? '').split(';')[0]!;
    expect(cookie).toMatch(/^paddock_session_3000=/);

    const again = await open(token, cookie);
    expect(again.status).toBe(303);
    expect(again.headers.get('location')).toBe('/');
    expect(again.headers.get('set-cookie')).toBeNull();
    // And to the page the link named, when it named one of this site's.
    expect((await open(token, cookie, '/settings')).headers.get('location')).toBe('/settings');
  });

  it('still sends a stranger with a used link back to the sign-in page', async () => {
    const { rt, open } = await world();
    const token = await rt.access.newSigninToken();
    await open(token);
    const stranger = await open(token);
    expect(stranger.headers.get('location')).toBe('/signin?error=invalid');
    const forged = await open(token, 'paddock_session_3000=eyJhbGciOiJub25lIn0.e30.');
    expect(forged.headers.get('location')).toBe('/signin?error=invalid');
  });
});
