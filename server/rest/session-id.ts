import 'server-only';
import { ID_PATTERN } from '~/lib/ids';
import { ApiError } from '~/server/rest/api-error';
import type { Runtime } from '~/server/runtime';
import type { Session } from '~/server/session/store';

/** A path's session id: anything that is not one is simply not found (as any unknown id). */
export function SessionId(id: string | undefined): string {
  if (!id || !ID_PATTERN.session.test(id)) throw new ApiError('not_found_error', `session ${String(id).slice(0, 80)} not found`);
  return id;
}

export async function loadSession(rt: Pick<Runtime, 'store'>, id: string | undefined): Promise<Session> {
  const sid = SessionId(id);
  const session = await rt.store.getSession(sid);
  if (!session) throw new ApiError('not_found_error', `session ${sid} not found`);
  return session;
}
