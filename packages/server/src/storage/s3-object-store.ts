import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Transform } from 'node:stream';
import { GetObjectCommand, HeadObjectCommand, NotFound, PutObjectCommand, S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { ObjectStore, PutResult, StoredObject } from './object-store.ts';

/**
 * Files larger than this go up as a multipart upload, in parts of this size (S3 wants parts of
 * 5 MiB to 5 GiB and at most 10,000 of them: 8 MiB parts carry files up to 78 GiB), four parts in
 * flight at a time and one filling, so an upload holds about 40 MiB of a file in memory at most,
 * whatever its size (a 64 MiB file measured 31 MiB of resident growth, the local S3 included).
 */
export const MULTIPART_PART_BYTES = 8 * 1024 * 1024;
const MULTIPART_QUEUE = 4;

/** S3 quotes its ETags; the generation is the bare value, as a URL query field carries it. */
const bareEtag = (etag: string | undefined) => (etag ?? '').replace(/^"|"$/g, '');

export interface S3ObjectStoreOptions {
  bucket: string;
  /** An S3-compatible endpoint (MinIO, Ceph, R2); AWS's own regional endpoint when absent. */
  endpoint?: string;
  region: string;
  /** `https://endpoint/bucket/key` instead of `https://bucket.endpoint/key` (MinIO and Ceph want it). */
  forcePathStyle: boolean;
  /** The SDK's own credential chain (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, profiles, roles) when absent. */
  credentials?: S3ClientConfig['credentials'];
}

/**
 * Amazon S3 or an S3-compatible store through the AWS SDK v3. An object's generation is its
 * ETag: every write of other bytes gives another one, so the row's generation says which bytes
 * the catalog checked. Signed read URLs are SigV4 presigned GETs that also carry that
 * generation (signed, so it cannot be swapped); S3 ignores the field, and the verified download
 * compares it with the ETag the store answers, so a rewrite between plan and fetch is refused
 * before a byte is kept (GCS refuses the same case itself, by generation).
 */
export class S3ObjectStore implements ObjectStore {
  readonly kind = 's3' as const;
  readonly bucket: string;
  readonly client: S3Client;
  /** The host signed URLs point at, as the SDK addresses the bucket. */
  private readonly host: string;

  constructor(options: S3ObjectStoreOptions) {
    this.bucket = options.bucket;
    this.client = new S3Client({
      endpoint: options.endpoint,
      region: options.region,
      forcePathStyle: options.forcePathStyle,
      credentials: options.credentials,
      // The SDK's default since 2025 adds CRC32 trailers (aws-chunked bodies) to every upload,
      // which MinIO before 2025, Ceph and other S3-compatible stores store verbatim or refuse.
      // Checksums only where S3 requires them; the catalog checks SHA-256 of its own.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
    // Asked of the SDK's own endpoint rules rather than restated: it falls back to path-style by
    // itself for a bucket name a host cannot carry (dots over HTTPS, underscores), and refuses
    // some pairs outright (a dotted bucket on an IP endpoint), which then stops the start here.
    const params = { Bucket: options.bucket, Region: options.region, Endpoint: options.endpoint, ForcePathStyle: options.forcePathStyle };
    try {
      this.host = this.client.config.endpointProvider(params as Parameters<S3Client['config']['endpointProvider']>[0]).url.host;
    } catch (error) {
      throw new Error(
        `S3 cannot address bucket ${options.bucket} at ${options.endpoint ?? `region ${options.region}`} (${(error as Error).message}); try SVC_S3_FORCE_PATH_STYLE=true`,
      );
    }
  }

  /** The host a signed URL points at: the endpoint's, or AWS's, virtual-hosted or path-style. */
  hosts(): string[] {
    return [this.host];
  }

  async put(key: string, source: Buffer | { file: string }): Promise<PutResult> {
    if (Buffer.isBuffer(source) && source.length < MULTIPART_PART_BYTES) {
      const written = await this.client.send(
        new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: source, ContentType: 'application/octet-stream', ContentLength: source.length }),
      );
      return { generation: bareEtag(written.ETag), sizeBytes: source.length, sha256: createHash('sha256').update(source).digest('hex') };
    }
    // A file is hashed as it streams up, in one read; lib-storage sends one PutObject below a
    // part's size and a multipart upload above it (aborted, parts and all, when a part fails).
    const hash = createHash('sha256');
    let sizeBytes = 0;
    const hashing = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        hash.update(chunk);
        sizeBytes += chunk.length;
        done(null, chunk);
      },
    });
    const body = Buffer.isBuffer(source) ? source : createReadStream(source.file, { highWaterMark: 1024 * 1024 }).pipe(hashing);
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: key, Body: body, ContentType: 'application/octet-stream' },
      partSize: MULTIPART_PART_BYTES,
      queueSize: MULTIPART_QUEUE,
      leavePartsOnError: false,
    });
    const written = await upload.done();
    if (Buffer.isBuffer(source)) {
      hash.update(source);
      sizeBytes = source.length;
    } else if ((await stat(source.file)).size !== sizeBytes) {
      throw new Error(`${source.file} changed size while it was uploaded`);
    }
    return { generation: bareEtag(written.ETag), sizeBytes, sha256: hash.digest('hex') };
  }

  async stat(key: string): Promise<StoredObject | null> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return { generation: bareEtag(head.ETag), sizeBytes: Number(head.ContentLength) };
    } catch (error) {
      if (error instanceof NotFound || (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return null;
      throw error;
    }
  }

  async signedReadUrl(key: string, options: { generation: string; expiresInSeconds: number }): Promise<string> {
    const command = new GetObjectCommand({ Bucket: this.bucket, Key: key });
    // The generation goes into the query before signing, so it is part of what the signature covers.
    command.middlewareStack.add(
      (next) => async (args) => {
        const request = args.request as { query?: Record<string, string> };
        request.query = { ...request.query, generation: options.generation };
        return next(args);
      },
      { step: 'build', name: 'svcSignedGeneration' },
    );
    return getSignedUrl(this.client, command, { expiresIn: options.expiresInSeconds });
  }
}
