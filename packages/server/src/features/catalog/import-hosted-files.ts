import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import path from 'node:path';
import { QueryTypes, type Sequelize } from 'sequelize';
import type { ObjectStore } from '../../storage/object-store.ts';
import type { ImportIssue, ImportRecord, ParsedLine } from './import-records.ts';

type FileRecord = Extract<ImportRecord, { kind: 'file' }>;

/** Where a file line's bytes are in the object store; a file listed without bytes has none. */
export interface HostedFile {
  sha256: string;
  sizeBytes: number;
  objectKey: string;
  generation: string;
}

export interface HostingOptions {
  sequelize: Sequelize;
  store: ObjectStore;
  /** The JSONL file's folder, which `contentFile` paths are relative to. */
  baseDir?: string;
}

/**
 * Puts the bytes of every file line that carries them (inline content, a content file, or an
 * object already in the store) into the object store, checking each against the digest and size
 * the line gives. The store is not part of the database transaction, so this runs before it, and
 * any problem stops the import before a row is written.
 */
export async function hostFiles(
  options: HostingOptions,
  parsed: ParsedLine[],
): Promise<{ hosted: Map<number, HostedFile>; hostedBytes: number; issues: ImportIssue[] }> {
  const hosted = new Map<number, HostedFile>();
  const issues: ImportIssue[] = [];
  let hostedBytes = 0;
  for (const { line, record } of parsed) {
    if (record.kind !== 'file') continue;
    const placed = await placeFile(options, record, line, issues);
    if (placed) {
      hosted.set(line, placed);
      hostedBytes += placed.sizeBytes;
    }
  }
  return { hosted, hostedBytes, issues };
}

/**
 * Where a hosted file's bytes are stored: under its artifact and revision, named by the SHA-256
 * of its path. A path may be 512 characters with one segment nearly as long, and a name made from
 * it failed on a file system (ENAMETOOLONG past 255 bytes a segment); the digest is 64 characters
 * whatever the path. The row keeps the path, and each file its own object.
 */
export const hostedObjectKey = (file: { artifactId: string; revision: string; path: string }) =>
  `${file.artifactId}/${file.revision}/path-sha256-${createHash('sha256').update(file.path).digest('hex')}`;

async function placeFile(options: HostingOptions, record: FileRecord, line: number, issues: ImportIssue[]): Promise<HostedFile | undefined> {
  const check = (sha256: string, sizeBytes: number) => {
    if (record.sha256 && record.sha256 !== sha256) issues.push({ line, message: `sha256 ${record.sha256} does not match the content (${sha256})` });
    if (record.sizeBytes !== undefined && record.sizeBytes !== sizeBytes)
      issues.push({ line, message: `sizeBytes ${record.sizeBytes} does not match the content (${sizeBytes} bytes)` });
  };
  if (record.objectKey) {
    const object = await options.store.stat(record.objectKey);
    if (!object) {
      issues.push({ line, message: `objectKey "${record.objectKey}" is not in the ${options.store.kind} store (bucket ${options.store.bucket})` });
      return undefined;
    }
    if (object.sizeBytes !== record.sizeBytes)
      issues.push({ line, message: `sizeBytes ${record.sizeBytes} does not match the stored object (${object.sizeBytes} bytes)` });
    return { sha256: record.sha256!, sizeBytes: object.sizeBytes, objectKey: record.objectKey, generation: object.generation };
  }
  if (record.content === undefined && record.contentFile === undefined) return undefined;
  const objectKey = hostedObjectKey(record);
  let source: Buffer | { file: string };
  if (record.content !== undefined) source = Buffer.from(record.content, 'utf8');
  else {
    if (!options.baseDir) {
      issues.push({ line, message: 'contentFile needs an import from a file (relative paths resolve against it)' });
      return undefined;
    }
    source = { file: path.resolve(options.baseDir, record.contentFile!) };
  }
  let digest: { sha256: string; sizeBytes: number };
  try {
    digest = await digestOf(source);
  } catch (error) {
    issues.push({ line, message: `cannot read the content: ${(error as Error).message}` });
    return undefined;
  }
  const before = issues.length;
  check(digest.sha256, digest.sizeBytes);
  if (issues.length > before) return undefined;
  // Idempotence: the same bytes already stored under this key are not written again.
  const [existing] = await options.sequelize.query<{ sha256: string; object_generation: string | null }>(
    `SELECT sha256, object_generation FROM catalog_files WHERE artifact_id = :artifactId AND revision = :revision AND path = :path AND object_key = :objectKey`,
    { replacements: { artifactId: record.artifactId, revision: record.revision, path: record.path, objectKey }, type: QueryTypes.SELECT },
  );
  if (existing && existing.sha256 === digest.sha256) {
    const object = await options.store.stat(objectKey);
    if (object && object.generation === existing.object_generation && object.sizeBytes === digest.sizeBytes)
      return { ...digest, objectKey, generation: object.generation };
  }
  try {
    const put = await options.store.put(objectKey, source);
    if (put.sha256 !== digest.sha256) {
      issues.push({ line, message: `the content changed while importing (sha256 ${digest.sha256}, then ${put.sha256})` });
      return undefined;
    }
    return { sha256: put.sha256, sizeBytes: put.sizeBytes, objectKey, generation: put.generation };
  } catch (error) {
    issues.push({ line, message: `cannot store the content: ${(error as Error).message}` });
    return undefined;
  }
}

async function digestOf(source: Buffer | { file: string }): Promise<{ sha256: string; sizeBytes: number }> {
  const hash = createHash('sha256');
  if (Buffer.isBuffer(source)) return { sha256: hash.update(source).digest('hex'), sizeBytes: source.length };
  let sizeBytes = 0;
  for await (const chunk of createReadStream(source.file, { highWaterMark: 1024 * 1024 })) {
    hash.update(chunk as Buffer);
    sizeBytes += (chunk as Buffer).length;
  }
  return { sha256: hash.digest('hex'), sizeBytes };
}
