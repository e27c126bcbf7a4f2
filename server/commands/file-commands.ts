import 'server-only';
import type { Readable } from 'node:stream';
import { InvalidInputError, NotFoundError } from '~/lib/errors';
import { KeyLock } from '~/lib/key-lock';
import type { BlobStore, StoredBlob } from '~/server/files/blob-store';
import type { FileMetadata, FileStore } from '~/server/files/file-store';
import { errorFields, logger } from '~/server/log';
import type { ListPage } from '~/server/session/keyset-page';

/**
 * The Files API's use cases, whichever edge calls: an upload is streamed to the blob store aside,
 * recorded, then committed (so a delete of the same bytes meanwhile cannot leave it dangling); a
 * delete frees the bytes once no file refers to them.
 */
const log = logger('files');

export interface FileDeps {
  files: FileStore;
  blobs: BlobStore;
}

/**
 * Recording a file and committing its bytes, and deleting a file and freeing its bytes, happen one
 * at a time per content address: a delete that found no other file with those bytes cannot free
 * them under an upload that just recorded one. (In this process; between PostgreSQL instances the
 * window stays open: stated in the README.)
 */
export const byContent = new KeyLock();

export interface Upload {
  filename: string;
  mimeType: string;
  source: Readable;
  maxBytes: number;
  /**
   * The rest of the upload's form, known once the whole body is read (a field may come after the
   * file): seconds the file is kept, absent for until deleted.
   */
  fields: Promise<{ expiresInSeconds?: number | undefined }>;
  scopeId?: string | null;
}

/** At most a year: a longer `expires_in_seconds` is almost certainly a unit mistake. */
export const MAX_EXPIRES_IN_SECONDS = 365 * 24 * 3600;

export async function uploadFile(d: FileDeps, u: Upload): Promise<FileMetadata> {
  if (u.filename.length === 0 || u.filename.length > 255 || u.filename.includes('\0')) throw new InvalidInputError('file: its filename must be 1 to 255 characters, without NUL');
  const blob = await d.blobs.put(u.source, u.maxBytes);
  let expiresAt: string | null;
  try {
    const { expiresInSeconds } = await u.fields;
    if (expiresInSeconds !== undefined && !(Number.isInteger(expiresInSeconds) && expiresInSeconds >= 60 && expiresInSeconds <= MAX_EXPIRES_IN_SECONDS)) {
      throw new InvalidInputError(`expires_in_seconds: must be a whole number of seconds from 60 to ${MAX_EXPIRES_IN_SECONDS}`);
    }
    expiresAt = expiresInSeconds === undefined ? null : new Date(Date.now() + expiresInSeconds * 1000).toISOString();
  } catch (e) {
    await blob.discard();
    throw e;
  }
  return byContent.run(blob.sha256, () => record(d, u, blob, expiresAt));
}

async function record(d: FileDeps, u: Upload, blob: StoredBlob, expiresAt: string | null): Promise<FileMetadata> {
  try {
    const { metadata } = await d.files.create({ filename: u.filename, mimeType: u.mimeType, size: blob.size, sha256: blob.sha256, expiresAt, scopeId: u.scopeId ?? null });
    await blob.commit();
    return metadata;
  } catch (e) {
    await blob.discard();
    throw e;
  }
}

export function getFile(d: FileDeps, id: string): Promise<FileMetadata> {
  return d.files.get(id);
}

export function listFiles(d: FileDeps, q: Parameters<FileStore['list']>[0]): Promise<ListPage<FileMetadata>> {
  return d.files.list(q);
}

/** A file's bytes, streamed, with what a download answers with. */
export async function downloadFile(d: FileDeps, id: string): Promise<{ metadata: FileMetadata; body: Readable }> {
  const row = await d.files.row(id);
  const metadata = await d.files.get(id);
  if (!metadata.downloadable) throw new InvalidInputError(`file ${id} is not downloadable`);
  try {
    return { metadata, body: await d.blobs.open(row.sha256) };
  } catch (e) {
    // Its row without its bytes: a storage fault, said plainly rather than as a 500.
    log.error('file bytes missing', { file: id, ...errorFields(e) });
    throw new NotFoundError('content of file', id);
  }
}

export async function deleteFile(d: FileDeps, id: string): Promise<{ id: string; type: 'file_deleted' }> {
  // An expired file can still be deleted (its bytes freed now rather than by a sweep).
  const sha = await d.files.contentOf(id);
  if (sha === null) throw new NotFoundError('file', id);
  return byContent.run(sha, async () => {
    const { sha256, shared } = await d.files.delete(id);
    if (!shared) await d.blobs.delete(sha256);
    return { id, type: 'file_deleted' as const };
  });
}
