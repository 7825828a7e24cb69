import { readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { HASHING_THREAD_MIN_BYTES } from './hashed-file-write.ts';
import { hashFileInline } from './hashing-sink.ts';
import { hashFileOnThread } from './hashing-thread.ts';

/** What the catalog says a file is. */
export interface PlannedFile {
  sha256: string;
  sizeBytes: number;
}

/**
 * A local file against its plan entry: `up-to-date` (same size and SHA-256), `missing`, or
 * `differs` (its size, and its digest when the size matched, are in `actual`).
 */
export type LocalFileState =
  | { state: 'up-to-date'; actual: PlannedFile }
  | { state: 'missing' }
  | { state: 'differs'; actual: { sizeBytes: number; sha256?: string } };

/**
 * Hashes a whole file: on the hashing thread from HASHING_THREAD_MIN_BYTES of `sizeBytes` (or
 * where worker threads are not allowed, inline), inline below it, where a thread would first
 * have to boot.
 */
export function hashLocalFile(file: string, sizeBytes: number): Promise<PlannedFile> {
  return (sizeBytes >= HASHING_THREAD_MIN_BYTES ? hashFileOnThread(file) : undefined) ?? hashFileInline(file);
}

/**
 * Compares the file at `file` with the plan. A size that differs answers at once; only a file of
 * the planned size is read and hashed. Anything but a regular file counts as differing.
 */
export async function checkLocalFile(file: string, planned: PlannedFile): Promise<LocalFileState> {
  const info = await stat(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return null;
    throw error;
  });
  if (!info) return { state: 'missing' };
  if (!info.isFile() || info.size !== planned.sizeBytes) return { state: 'differs', actual: { sizeBytes: info.size } };
  const actual = await hashLocalFile(file, info.size);
  return actual.sha256 === planned.sha256 && actual.sizeBytes === planned.sizeBytes ? { state: 'up-to-date', actual } : { state: 'differs', actual };
}

/**
 * What a partial file is a partial of, kept beside it: the artifact, the plan path, the planned
 * digest and size, and the object generation and ETag its bytes came from. A re-run resumes the
 * partial only when every field still holds, so its bytes are never spliced onto another file's.
 */
export interface PartialRecord extends PlannedFile {
  artifactId: string;
  path: string;
  generation: string;
  etag: string | null;
}

/** The stable partial name of a destination and its record: `.<name>.svc-partial` and `.<name>.svc-partial.json`. */
export function partialFiles(destination: string): { partial: string; record: string } {
  const partial = path.join(path.dirname(destination), `.${path.basename(destination)}.svc-partial`);
  return { partial, record: `${partial}.json` };
}

/** Removes the partial file and its record. */
export async function discardPartial(destination: string): Promise<void> {
  const { partial, record } = partialFiles(destination);
  await rm(partial, { force: true });
  await rm(record, { force: true });
}

export async function writePartialRecord(destination: string, record: PartialRecord): Promise<void> {
  await writeFile(partialFiles(destination).record, `${JSON.stringify(record)}\n`, { mode: 0o644 });
}

/**
 * The bytes already held for `expected` and the generation they came from, or undefined (and the
 * partial removed) when there is no partial, no record, or the record names another file.
 */
export async function readPartial(
  destination: string,
  expected: Omit<PartialRecord, 'generation' | 'etag'>,
): Promise<{ bytes: number; record: PartialRecord } | undefined> {
  const files = partialFiles(destination);
  const [record, info] = await Promise.all([
    readFile(files.record, 'utf8').then(
      (text) => JSON.parse(text) as Partial<PartialRecord>,
      () => undefined,
    ),
    stat(files.partial).catch(() => undefined),
  ]);
  const same =
    record !== undefined &&
    info?.isFile() === true &&
    record.artifactId === expected.artifactId &&
    record.path === expected.path &&
    record.sha256 === expected.sha256 &&
    record.sizeBytes === expected.sizeBytes &&
    typeof record.generation === 'string' &&
    info.size <= expected.sizeBytes;
  if (!same) {
    if (record !== undefined || info !== undefined) await discardPartial(destination);
    return undefined;
  }
  return { bytes: info!.size, record: record as PartialRecord };
}

/**
 * Removes the partials that versions before resumable downloads left beside a destination
 * (`.<name>.<12 hex>.svc-partial`, a new random name each run, never cleaned up).
 */
export async function removeLegacyPartials(destination: string): Promise<void> {
  const directory = path.dirname(destination);
  const prefix = `.${path.basename(destination)}.`;
  const entries = await readdir(directory).catch(() => [] as string[]);
  for (const entry of entries) {
    if (entry.startsWith(prefix) && /^[0-9a-f]{12}\.svc-partial$/.test(entry.slice(prefix.length))) await rm(path.join(directory, entry), { force: true });
  }
}
