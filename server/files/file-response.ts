import 'server-only';
import { Readable } from 'node:stream';
import type { FileMetadata } from '~/server/files/file-store';

/**
 * A file's bytes as an HTTP answer, the same for /v1's `/content` and the owner's download link:
 * streamed with its type and length, as an attachment named by its filename, never cached or sniffed.
 */
export function fileResponse({ metadata, body }: { metadata: FileMetadata; body: Readable }): Response {
  return new Response(Readable.toWeb(body) as ReadableStream<Uint8Array>, {
    headers: {
      'content-type': metadata.mime_type,
      'content-length': String(metadata.size_bytes),
      'content-disposition': `attachment; filename*=UTF-8''${encodeURIComponent(metadata.filename)}`,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    },
  });
}
