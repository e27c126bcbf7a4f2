import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { afterEach, describe, expect, it } from 'vitest';
import { CHUNK_BYTES } from '~/server/files/db-blob-store';
import type { BlobStore } from '~/server/files/blob-store';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** A source that hands out `total` bytes in small pieces, like a network upload. */
function trickle(bytes: Buffer, piece = 7_001): Readable {
  let at = 0;
  return new Readable({
    read() {
      this.push(at < bytes.length ? bytes.subarray(at, (at += piece)) : null);
    },
  });
}

/** What every BlobStore adapter must do: run against each (a folder, SQLite, PostgreSQL). */
export function runBlobStoreContract(name: string, open: () => Promise<{ blobs: BlobStore; close(): Promise<void> }>): void {
  describe(`blob store contract: ${name}`, () => {
    let close: (() => Promise<void>) | null = null;
    const fresh = async () => {
      const s = await open();
      close = () => s.close();
      return s.blobs;
    };
    afterEach(async () => {
      await close?.();
      close = null;
    });

    it('stores a stream of several chunks under its SHA-256 once committed, and reads it back byte for byte', async () => {
      const blobs = await fresh();
      const bytes = randomBytes(CHUNK_BYTES * 2 + 12_345);
      const put = await blobs.put(trickle(bytes), bytes.length);
      expect(put).toMatchObject({ sha256: sha(bytes), size: bytes.length });
      expect(await blobs.has(put.sha256)).toBe(false);
      await put.commit();
      expect(await blobs.has(put.sha256)).toBe(true);
      expect((await buffer(await blobs.open(put.sha256))).equals(bytes)).toBe(true);
    });

    it('stores an empty blob', async () => {
      const blobs = await fresh();
      const put = await blobs.put(Readable.from([]), 10);
      await put.commit();
      expect(put).toMatchObject({ sha256: sha(Buffer.alloc(0)), size: 0 });
      expect((await buffer(await blobs.open(put.sha256))).length).toBe(0);
    });

    it('keeps one copy of the same bytes put twice, and a delete frees it', async () => {
      const blobs = await fresh();
      const bytes = Buffer.from('the same bytes');
      const a = await blobs.put(trickle(bytes, 3), 100);
      const b = await blobs.put(trickle(bytes, 5), 100);
      await a.commit();
      await b.commit();
      expect((await buffer(await blobs.open(a.sha256))).toString()).toBe('the same bytes');
      await blobs.delete(a.sha256);
      expect(await blobs.has(a.sha256)).toBe(false);
      await expect(blobs.open(a.sha256)).rejects.toMatchObject({ code: 'not_found' });
      await blobs.delete(a.sha256); // again: no error
    });

    it('refuses more than the limit mid-stream and keeps nothing of it', async () => {
      const blobs = await fresh();
      const bytes = randomBytes(CHUNK_BYTES + 1);
      await expect(blobs.put(trickle(bytes), CHUNK_BYTES)).rejects.toMatchObject({ code: 'too_large' });
      expect(await blobs.has(sha(bytes))).toBe(false);
    });

    it('drops a discarded put, so a commit of it never happens', async () => {
      const blobs = await fresh();
      const put = await blobs.put(trickle(Buffer.from('dropped')), 100);
      await put.discard();
      expect(await blobs.has(put.sha256)).toBe(false);
    });

    it('answers an address that is not a blob as not found', async () => {
      const blobs = await fresh();
      await expect(blobs.open('0'.repeat(64))).rejects.toMatchObject({ code: 'not_found' });
      await expect(blobs.open('../../etc/passwd')).rejects.toMatchObject({ code: 'not_found' });
      expect(await blobs.has('../x')).toBe(false);
    });
  });
}
