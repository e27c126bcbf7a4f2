import 'server-only';
import { ID_PATTERN } from '~/lib/ids';
import { isDomainError } from '~/lib/errors';
import { downloadFile } from '~/server/commands/file-commands';
import { fileResponse } from '~/server/files/file-response';
import { refuse } from '~/server/api/http-handler';
import type { Runtime } from '~/server/runtime';

/**
 * `GET /files/<file id>`: a file's bytes for the owner's browser (the session page's download
 * links; `/v1/files/{id}/content` takes API keys only). Streamed, as an attachment, never cached.
 */
export async function handleFileDownload(req: Request, id: string, rt: Runtime): Promise<Response> {
  const caller = await rt.access.identify(req.headers);
  if (caller.kind !== 'owner') return refuse(401, 'sign in to download files');
  if (!ID_PATTERN.file.test(id)) return refuse(404, `file ${id.slice(0, 80)} not found`);
  try {
    return fileResponse(await downloadFile(rt, id));
  } catch (e) {
    if (isDomainError(e) && e.code === 'not_found') return refuse(404, e.message);
    if (isDomainError(e) && e.code === 'invalid_input') return refuse(400, e.message);
    throw e;
  }
}
