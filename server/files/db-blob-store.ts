import 'server-only';
import { createHash, randomUUID } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Kysely } from 'kysely';
import { NotFoundError, TooLargeError } from '~/lib/errors';
import type { BlobStore, StoredBlob } from '~/server/files/blob-store';
import type { Database } from '~/server/session/schema';

/** Bytes per stored chunk: what one insert or one read holds in memory. */
export const CHUNK_BYTES = 256 * 1024;

/**
 * Blobs in the session database (SQLite or PostgreSQL), cut into chunks: several instances on one
 * PostgreSQL share them with nothing else to run. A put writes its chunks under a temporary key as
 * they arrive; committing re-keys them to the content's SHA-256 (or drops them when those bytes
 * are stored already) in one transaction.
 */
export class DbBlobStore implements BlobStore {
  constructor(private readonly db: Kysely<Database>) {}

  async put(source: Readable, maxBytes: number): Promise<StoredBlob> {
    const temp = `tmp:${randomUUID()}`;
    const hash = createHash('sha256');
    let size = 0;
    let n = 0;
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    const flush = async () => {
      if (pendingBytes === 0) return;
      const data = Buffer.concat(pending, pendingBytes);
      pending = [];
      pendingBytes = 0;
      await this.db.insertInto('blob_chunks').values({ blob_key: temp, n: n++, data }).execute();
    };
    const sink = new Writable({
      write: (chunk: Buffer, _enc, done) => {
        size += chunk.length;
        if (size > maxBytes) return done(new TooLargeError(`file over the limit of ${maxBytes} bytes (PADDOCK_MAX_UPLOAD_BYTES)`));
        hash.update(chunk);
        pending.push(chunk);
        pendingBytes += chunk.length;
        if (pendingBytes < CHUNK_BYTES) return done();
        flush().then(() => done(), done);
      },
      final: (done) => void flush().then(() => done(), done),
    });
    const discard = () => this.db.deleteFrom('blob_chunks').where('blob_key', '=', temp).execute().then(() => undefined);
    try {
      await pipeline(source, sink);
    } catch (e) {
      await discard();
      throw e;
    }
    const sha256 = hash.digest('hex');
    return {
      sha256,
      size,
      commit: () =>
        this.db.transaction().execute(async (trx) => {
          const inserted = await trx.insertInto('blobs').values({ sha256, size }).onConflict((oc) => oc.column('sha256').doNothing()).executeTakeFirst();
          // Already stored: the same bytes under the same name; the upload's copy goes.
          if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 0) await trx.deleteFrom('blob_chunks').where('blob_key', '=', temp).execute();
          else await trx.updateTable('blob_chunks').set({ blob_key: sha256 }).where('blob_key', '=', temp).execute();
        }),
      discard,
    };
  }

  async open(sha256: string): Promise<Readable> {
    if (!(await this.has(sha256))) throw new NotFoundError('blob', sha256);
    const db = this.db;
    // One chunk in memory at a time, read in order.
    async function* chunks() {
      for (let n = 0; ; n++) {
        const row = await db.selectFrom('blob_chunks').select('data').where('blob_key', '=', sha256).where('n', '=', n).executeTakeFirst();
        if (!row) return;
        yield Buffer.from(row.data);
      }
    }
    return Readable.from(chunks());
  }

  async delete(sha256: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('blobs').where('sha256', '=', sha256).execute();
      await trx.deleteFrom('blob_chunks').where('blob_key', '=', sha256).execute();
    });
  }

  async has(sha256: string): Promise<boolean> {
    return (await this.db.selectFrom('blobs').select('sha256').where('sha256', '=', sha256).executeTakeFirst()) !== undefined;
  }
}
