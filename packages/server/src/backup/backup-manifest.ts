import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { SequenceValue, TableSummary } from '../db/transfer/database-image.ts';
import type { SchemaPlan } from '../db/transfer/schema-plan.ts';

export const BACKUP_FORMAT = 'svc-backup/1';
export const MANIFEST_FILE = 'manifest.json';

/** The first file of a backup: what it holds, and each other file's size and SHA-256. */
export interface BackupManifest {
  format: typeof BACKUP_FORMAT;
  svcVersion: string;
  createdAt: string;
  plan: SchemaPlan;
  tables: TableSummary[];
  sequences: SequenceValue[];
  files: Array<{ path: string; size: number; sha256: string }>;
}

export async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Every file under `root`, as paths relative to it with `/` between names, sorted. */
export async function listFiles(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'))
    .sort();
}

/** The manifest's entry of each file under `root` but the manifest itself. */
export async function describeFiles(root: string): Promise<BackupManifest['files']> {
  const files: BackupManifest['files'] = [];
  for (const file of await listFiles(root)) {
    if (file === MANIFEST_FILE) continue;
    const full = path.join(root, file);
    files.push({ path: file, size: (await stat(full)).size, sha256: await sha256File(full) });
  }
  return files;
}
