import 'server-only';
import { randomUUID } from 'node:crypto';
import { PassThrough, Readable } from 'node:stream';
import { CopyObjectCommand, DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { NotFoundError } from '~/lib/errors';
import type { BlobStore, StoredBlob } from '~/server/files/blob-store';
import { SHA256, hashingCounter } from '~/server/files/hashing-counter';


export interface S3Options {
  bucket: string;
  /** Any S3-compatible endpoint (MinIO, R2, s3rver…); absent: AWS. */
  endpoint?: string | undefined;
  region?: string | undefined;
  /** `bucket` in the path rather than the host name (most S3-compatible servers want it). */
  forcePathStyle?: boolean | undefined;
  /** A key prefix, so one bucket can hold several Paddocks. */
  prefix?: string | undefined;
  /** Absent: the SDK's own chain (AWS_ACCESS_KEY_ID…, profiles, instance roles). */
  credentials?: { accessKeyId: string; secretAccessKey: string } | undefined;
}

function notFound(e: unknown): boolean {
  return e instanceof S3ServiceException && (e.$metadata.httpStatusCode === 404 || e.name === 'NotFound' || e.name === 'NoSuchKey');
}

/**
 * Blobs in an S3 bucket: scale without a shared disk. A put streams as a multipart upload to a
 * temporary key while hashing; committing copies it to `blobs/<sha256>` (S3 has no rename) unless
 * those bytes are there already, then drops the temporary object.
 */
export class S3BlobStore implements BlobStore {
  private readonly s3: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;

  constructor(o: S3Options) {
    this.s3 = new S3Client({
      region: o.region ?? 'us-east-1',
      ...(o.endpoint ? { endpoint: o.endpoint } : {}),
      ...(o.forcePathStyle ? { forcePathStyle: true } : {}),
      ...(o.credentials ? { credentials: o.credentials } : {}),
    });
    this.bucket = o.bucket;
    this.prefix = o.prefix ?? '';
  }

  private key(sha256: string): string {
    if (!SHA256.test(sha256)) throw new NotFoundError('blob', sha256);
    return `${this.prefix}blobs/${sha256}`;
  }

  async put(source: Readable, maxBytes: number): Promise<StoredBlob> {
    const temp = `${this.prefix}tmp/${randomUUID()}`;
    const counter = hashingCounter(maxBytes);
    const count = counter.stream;
    const body = new PassThrough();
    // Written by the stream's error handler (an object: TS does not see closures assign a variable).
    const state: { failure: Error | null } = { failure: null };
    source.on('error', (e) => count.destroy(e));
    count.on('error', (e: Error) => {
      state.failure = e;
      body.destroy(e);
    });
    source.pipe(count).pipe(body);
    const upload = new Upload({ client: this.s3, params: { Bucket: this.bucket, Key: temp, Body: body }, queueSize: 2, partSize: 5 * 1024 * 1024, leavePartsOnError: false });
    try {
      await upload.done();
    } catch (e) {
      await this.s3.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: temp })).catch(() => undefined);
      throw state.failure ?? e;
    }
    if (state.failure) {
      await this.s3.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: temp })).catch(() => undefined);
      throw state.failure;
    }
    const sha256 = counter.sha256();
    const size = counter.size();
    const discard = () => this.s3.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: temp })).then(() => undefined);
    return {
      sha256,
      size,
      commit: async () => {
        if (!(await this.has(sha256))) await this.s3.send(new CopyObjectCommand({ Bucket: this.bucket, Key: this.key(sha256), CopySource: `${this.bucket}/${encodeURIComponent(temp).replaceAll('%2F', '/')}` }));
        await discard();
      },
      discard,
    };
  }

  async open(sha256: string): Promise<Readable> {
    try {
      const r = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.key(sha256) }));
      if (!(r.Body instanceof Readable)) throw new Error('S3 answered a body that is not a stream');
      return r.Body;
    } catch (e) {
      if (notFound(e)) throw new NotFoundError('blob', sha256);
      throw e;
    }
  }

  async delete(sha256: string): Promise<void> {
    if (SHA256.test(sha256)) await this.s3.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.key(sha256) }));
  }

  async has(sha256: string): Promise<boolean> {
    if (!SHA256.test(sha256)) return false;
    try {
      await this.s3.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.key(sha256) }));
      return true;
    } catch (e) {
      if (notFound(e)) return false;
      throw e;
    }
  }

  close(): void {
    this.s3.destroy();
  }
}
