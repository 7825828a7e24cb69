import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ByteRange } from './byte-range.ts';
import type { PutResult, ServingObjectStore, StoredObject } from './object-store.ts';
import { signV4Url } from './v4-signing.ts';

export const LOCAL_ACCESS_ID = 'svc-local';

/** The HMAC key from configuration, or one generated once into the data directory (mode 0600). */
export async function ensureSigningKey(configured: string | undefined, dataDir: string): Promise<Buffer> {
  if (configured) return Buffer.from(configured, 'utf8');
  const file = path.join(dataDir, 'storage-signing-key');
  try {
    const existing = (await readFile(file, 'utf8')).trim();
    if (existing.length >= 32) return Buffer.from(existing, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const key = randomBytes(32).toString('base64url');
  await writeFile(file, `${key}\n`, { mode: 0o600 });
  return Buffer.from(key, 'utf8');
}

/**
 * Objects under `<dataDir>/objects/<bucket>/<key>`, served by this server at
 * `/api/storage/<bucket>/<key>` to V4-style signed URLs. The generation is the file's
 * modification time in microseconds (as GCS generations are), so a rewrite voids old URLs.
 */
export class LocalObjectStore implements ServingObjectStore {
  readonly kind = 'local' as const;
  readonly bucket: string;
  readonly root: string;
  private readonly signingKey: Buffer;
  private readonly apiUrl: () => string;

  constructor(options: { dataDir: string; bucket: string; signingKey: Buffer; apiUrl: () => string }) {
    this.bucket = options.bucket;
    this.root = path.join(options.dataDir, 'objects', options.bucket);
    this.signingKey = options.signingKey;
    this.apiUrl = options.apiUrl;
  }

  get key(): Buffer {
    return this.signingKey;
  }

  hosts(): string[] {
    return [new URL(this.apiUrl()).host];
  }

  private fileFor(key: string): string {
    const file = path.resolve(this.root, ...key.split('/'));
    // Keys come from the catalog, but the store is the last line: nothing outside its root.
    if (!file.startsWith(`${this.root}${path.sep}`)) throw new Error(`Object key escapes the store: ${key}`);
    return file;
  }

  async put(key: string, source: Buffer | { file: string }): Promise<PutResult> {
    const file = this.fileFor(key);
    await mkdir(path.dirname(file), { recursive: true });
    const temporary = `${file}.${randomBytes(6).toString('hex')}.partial`;
    const hash = createHash('sha256');
    let sizeBytes = 0;
    try {
      if (Buffer.isBuffer(source)) {
        hash.update(source);
        sizeBytes = source.length;
        await writeFile(temporary, source);
      } else {
        const hashing = new Transform({
          transform(chunk: Buffer, _encoding, callback) {
            hash.update(chunk);
            sizeBytes += chunk.length;
            callback(null, chunk);
          },
        });
        await pipeline(createReadStream(source.file), hashing, createWriteStream(temporary));
      }
      await rename(temporary, file);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
    const object = (await this.stat(key))!;
    return { ...object, sizeBytes, sha256: hash.digest('hex') };
  }

  async stat(key: string): Promise<StoredObject | null> {
    try {
      const info = await stat(this.fileFor(key), { bigint: true });
      if (!info.isFile()) return null;
      return { generation: String(info.mtimeNs / 1000n), sizeBytes: Number(info.size) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  async open(key: string, range?: ByteRange) {
    const object = await this.stat(key);
    if (!object) return null;
    return { stream: createReadStream(this.fileFor(key), { highWaterMark: 1024 * 1024, start: range?.start, end: range?.end }), object };
  }

  async signedReadUrl(key: string, options: { generation: string; expiresInSeconds: number }): Promise<string> {
    return signV4Url({
      key: this.signingKey,
      accessId: LOCAL_ACCESS_ID,
      baseUrl: `${this.apiUrl()}/api/storage`,
      bucket: this.bucket,
      objectKey: key,
      generation: options.generation,
      expiresInSeconds: options.expiresInSeconds,
    });
  }
}
