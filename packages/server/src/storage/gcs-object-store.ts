import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { Storage, type StorageOptions } from '@google-cloud/storage';
import type { ObjectStore, PutResult, StoredObject } from './object-store.ts';

/**
 * Google Cloud Storage through `@google-cloud/storage`: V4 signed read URLs pinned to an object
 * generation. Credentials come the library's usual way (GOOGLE_APPLICATION_CREDENTIALS, workload
 * identity) unless given in `storageOptions`.
 */
export class GcsObjectStore implements ObjectStore {
  readonly kind = 'gcs' as const;
  readonly bucket: string;
  readonly storage: Storage;

  constructor(options: { bucket: string; storageOptions?: StorageOptions }) {
    this.bucket = options.bucket;
    this.storage = new Storage(options.storageOptions);
  }

  hosts(): string[] {
    return ['storage.googleapis.com'];
  }

  async put(key: string, source: Buffer | { file: string }): Promise<PutResult> {
    const file = this.storage.bucket(this.bucket).file(key);
    const hash = createHash('sha256');
    let sizeBytes = 0;
    if (Buffer.isBuffer(source)) {
      hash.update(source);
      sizeBytes = source.length;
      await file.save(source, { resumable: false, contentType: 'application/octet-stream' });
    } else {
      for await (const chunk of createReadStream(source.file)) {
        hash.update(chunk as Buffer);
        sizeBytes += (chunk as Buffer).length;
      }
      await this.storage.bucket(this.bucket).upload(source.file, { destination: key, contentType: 'application/octet-stream' });
    }
    const object = (await this.stat(key))!;
    return { ...object, sizeBytes, sha256: hash.digest('hex') };
  }

  async stat(key: string): Promise<StoredObject | null> {
    try {
      const [metadata] = await this.storage.bucket(this.bucket).file(key).getMetadata();
      return { generation: String(metadata.generation), sizeBytes: Number(metadata.size) };
    } catch (error) {
      if ((error as { code?: number }).code === 404) return null;
      throw error;
    }
  }

  async signedReadUrl(key: string, options: { generation: string; expiresInSeconds: number }): Promise<string> {
    const [url] = await this.storage
      .bucket(this.bucket)
      .file(key, { generation: Number(options.generation) })
      .getSignedUrl({ version: 'v4', action: 'read', expires: Date.now() + options.expiresInSeconds * 1000, queryParams: { generation: options.generation } });
    return url;
  }
}
