import { handleFileDownload } from '~/server/api/file-download';
import { getRuntime } from '~/server/runtime';

export const dynamic = 'force-dynamic';

/** A file's bytes for the signed-in owner (the session page's download links). */
export async function GET(req: Request, ctx: { params: Promise<{ id: string }> }) {
  return handleFileDownload(req, (await ctx.params).id, await getRuntime());
}
