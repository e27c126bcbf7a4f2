import type { Readable } from 'node:stream';

/**
 * What a put received: its content address (the SHA-256 of its bytes, hex) and its size, held
 * aside until `commit` makes it the blob of that address (or `discard` drops it). The caller
 * records the file that refers to it first, then commits: a delete that frees the same bytes
 * meanwhile either sees that file, or runs before the commit puts them back.
 */
export interface StoredBlob {
  sha256: string;
  size: number;
  commit(): Promise<void>;
  discard(): Promise<void>;
}

/**
 * Bytes by content address, for the Files API (uploads, session outputs). A put streams its
 * source to storage and never holds it whole in memory; the same bytes put twice are stored once.
 * One adapter per place bytes can live: the data dir (the embedded default, `dir-blob-store.ts`).
 * Deleting is the caller's decision: it frees a blob once no file refers to it.
 */
export interface BlobStore {
  /** Streams `source` in, aside; more than `maxBytes` is refused (TooLargeError) and nothing stays behind. */
  put(source: Readable, maxBytes: number): Promise<StoredBlob>;
  /** The bytes of a blob, streamed; NotFoundError when it is not here. */
  open(sha256: string): Promise<Readable>;
  /** Frees a blob's bytes (no error when already gone). */
  delete(sha256: string): Promise<void>;
  /** Whether the blob's bytes are here. */
  has(sha256: string): Promise<boolean>;
}
