import 'server-only';
import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { NotFoundError, TooLargeError } from '~/lib/errors';
import type { BlobStore, StoredBlob } from '~/server/files/blob-store';

const SHA256 = /^[0-9a-f]{64}$/;

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
    const hash = createHash('sha256');
    let size = 0;
    const count = new Transform({
      transform(chunk: Buffer, _enc, done) {
        size += chunk.length;
        if (size > maxBytes) return done(new TooLargeError(`file over the limit of ${maxBytes} bytes (PADDOCK_MAX_UPLOAD_BYTES)`));
        hash.update(chunk);
        done(null, chunk);
      },
    });
    const temp = path.join(this.tmp, randomUUID());
    await mkdir(this.tmp, { recursive: true, mode: 0o700 });
    try {
      await pipeline(source, count, createWriteStream(temp, { mode: 0o600 }));
    } catch (e) {
      await rm(temp, { force: true });
      throw e;
    }
    const sha256 = hash.digest('hex');
    const final = this.file(sha256);
    return {
      sha256,
      size,
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
