import 'server-only';
import { headers } from 'next/headers';
import { redirect } from 'next/navigation';
import { isStoreUnavailable } from '~/lib/errors';
import { signInPath } from '~/server/access/next-path';
import type { Runtime } from '~/server/runtime';

/**
 * Pages are for the signed-in owner: anyone else is sent to sign in. While the database is down
 * the page (an app shell: every byte of data comes through the API, which refuses strangers)
 * is served as it is, so the owner can still read the copy in their browser. The page passes
 * `getRuntime` (the runtime is the layer above).
 */
export async function requireOwnerPage(runtime: () => Promise<Pick<Runtime, 'access'>>): Promise<void> {
  const h = await headers();
  let kind: string;
  try {
    kind = (await (await runtime()).access.identify(h)).kind;
  } catch (e) {
    if (isStoreUnavailable(e)) return;
    throw e;
  }
  if (kind !== 'owner') redirect(signInPath(h.get('x-paddock-path')));
}
