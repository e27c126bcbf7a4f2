import { createHash } from 'node:crypto';
import { Transform } from 'node:stream';
import { TooLargeError } from '~/lib/errors';

/** A blob's content address: the SHA-256 of its bytes, in hex. */
export const SHA256 = /^[0-9a-f]{64}$/;

/**
 * The pass-through every blob put streams through: it hashes and counts the bytes on their way to
 * storage, and fails the stream (TooLargeError) the moment they pass `maxBytes`.
 */
export function hashingCounter(maxBytes: number): { stream: Transform; sha256: () => string; size: () => number } {
  const hash = createHash('sha256');
  let size = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (size > maxBytes) return done(new TooLargeError(`file over the limit of ${maxBytes} bytes (PADDOCK_MAX_UPLOAD_BYTES)`));
      hash.update(chunk);
      done(null, chunk);
    },
  });
  return { stream, sha256: () => hash.digest('hex'), size: () => size };
}
