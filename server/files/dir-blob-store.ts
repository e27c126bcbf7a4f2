import 'server-only';
import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { NotFoundError } from '~/lib/errors';
import type { BlobStore, StoredBlob } from '~/server/files/blob-store';
import { SHA256, hashingCounter } from '~/server/files/hashing-counter';


/**
 * Blobs as files under `<dataDir>/blobs/<ab>/<abcdef…>` (content-addressed). A put streams to a
 * temporary file beside them while hashing, then renames it into place: a crash mid-upload leaves
 * only a temporary file under `tmp/`, never a blob under a wrong name.
 */
export class DirBlobStore implements BlobStore {
  private readonly tmp: string;

  constructor(private readonly root: string) {
    this.tmp = path.join(root, 'tmp');
  }

  private file(sha256: string): string {
    if (!SHA256.test(sha256)) throw new NotFoundError('blob', sha256);
    return path.join(this.root, sha256.slice(0, 2), sha256);
  }

  async put(source: Readable, maxBytes: number): Promise<StoredBlob> {
    const count = hashingCounter(maxBytes);
    const temp = path.join(this.tmp, randomUUID());
    await mkdir(this.tmp, { recursive: true, mode: 0o700 });
    try {
      await pipeline(source, count.stream, createWriteStream(temp, { mode: 0o600 }));
    } catch (e) {
      await rm(temp, { force: true });
      throw e;
    }
    const sha256 = count.sha256();
    const final = this.file(sha256);
    return {
      sha256,
      size: count.size(),
      commit: async () => {
        await mkdir(path.dirname(final), { recursive: true, mode: 0o700 });
        // The same bytes already here: keep those (same name, same content).
        if (await this.has(sha256)) await rm(temp, { force: true });
        else await rename(temp, final);
      },
      discard: () => rm(temp, { force: true }),
    };
  }

  async open(sha256: string): Promise<Readable> {
    const file = this.file(sha256);
    if (!(await this.has(sha256))) throw new NotFoundError('blob', sha256);
    return createReadStream(file);
  }

  async delete(sha256: string): Promise<void> {
    if (SHA256.test(sha256)) await rm(this.file(sha256), { force: true });
  }

  async has(sha256: string): Promise<boolean> {
    if (!SHA256.test(sha256)) return false;
    return (await stat(this.file(sha256)).catch(() => null))?.isFile() ?? false;
  }
}
