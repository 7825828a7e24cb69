import type { Readable } from 'node:stream';
import type { ByteRange } from './byte-range.ts';

/** What the store knows of one object: its generation changes on every write. */
export interface StoredObject {
  generation: string;
  sizeBytes: number;
}

export interface PutResult extends StoredObject {
  sha256: string;
}

/**
 * Where hosted catalog files live: the built-in store under the data directory (served by this
 * server), Google Cloud Storage, or S3 and S3-compatible stores. Each hands out signed URLs that
 * carry `generation` and either the V4 `x-goog-*` or the SigV4 `X-Amz-*` query fields, so the
 * client's checks are the same.
 */
export interface ObjectStore {
  readonly kind: 'local' | 'gcs' | 's3';
  readonly bucket: string;
  /** Hosts a client must allow to download from this store (`host[:port]`). */
  hosts(): string[];
  /** Writes bytes (a Buffer, or a file path streamed in) and answers the new generation and digest. */
  put(key: string, source: Buffer | { file: string }): Promise<PutResult>;
  stat(key: string): Promise<StoredObject | null>;
  /** A short-lived URL reading exactly this generation of the object. */
  signedReadUrl(key: string, options: { generation: string; expiresInSeconds: number }): Promise<string>;
}

/** The built-in store also serves its objects. */
export interface ServingObjectStore extends ObjectStore {
  /** The object's bytes, or only `range` of them (inclusive offsets, within the object). */
  open(key: string, range?: ByteRange): Promise<{ stream: Readable; object: StoredObject } | null>;
}

/** Object keys are "/"-joined segments; each is encoded the way V4 canonical paths expect. */
export function encodeObjectKey(key: string): string {
  return key
    .split('/')
    .map((segment) => encodeURIComponent(segment).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`))
    .join('/');
}
