import { createWriteStream } from 'node:fs';
import { chmod, copyFile, link, mkdir, mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { finished } from 'node:stream/promises';
import { SVC_VERSION } from '@svc/schemas';
import { create } from 'tar';
import { readDatabaseImage, type ProgressReport } from '../db/transfer/database-image.ts';
import { openEndpoint, type Endpoint } from '../db/transfer/endpoint.ts';
import { SECRET_FILES } from '../db/transfer/transfer-command.ts';
import { BACKUP_FORMAT, describeFiles, listFiles, MANIFEST_FILE, type BackupManifest } from './backup-manifest.ts';

export interface BackupResult {
  file: string;
  bytes: number;
  rows: number;
  tables: number;
  objects: number;
  seconds: number;
}

/**
 * `svc-server backup <file>`: one gzip'd tar of a manifest, the database as the export reads it
 * (tables/<name>.jsonl, one JSON array of row texts a line, all from one REPEATABLE READ
 * snapshot), the data directory's secret files and its local objects. Objects are immutable by
 * name, so those listed right after the snapshot is taken are the ones its rows can name
 * (linked, or copied, into the staging directory). Written beside `file` and renamed at the end:
 * a cut-off backup never leaves a file that looks whole. The file holds secrets: mode 0600.
 */
export async function runBackup(options: { from: Endpoint; dataDir: string; file: string; progress: ProgressReport }): Promise<BackupResult> {
  const started = performance.now();
  const file = path.resolve(options.file);
  const staging = await mkdtemp(path.join(path.dirname(file), `.${path.basename(file)}.staging-`));
  const partial = `${file}.partial`;
  try {
    const source = await openEndpoint(options.from);
    let manifest: Omit<BackupManifest, 'files'>;
    let objects = 0;
    try {
      const image = await readDatabaseImage(source.client);
      // Listed after the snapshot: every object a row of the snapshot names is there already.
      objects = await stageObjects(path.join(options.dataDir, 'objects'), path.join(staging, 'objects'));
      await mkdir(path.join(staging, 'tables'));
      for (const table of image.plan.groups.flat()) {
        const out = createWriteStream(path.join(staging, 'tables', `${table.name}.jsonl`));
        let written = 0;
        for await (const batch of image.batches(table)) {
          if (!out.write(`${JSON.stringify(batch)}\n`)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
          written += batch.length;
          if (written % 10_000 === 0) options.progress(`  ${table.name}: ${written} rows`);
        }
        out.end();
        await finished(out);
      }
      manifest = {
        format: BACKUP_FORMAT,
        svcVersion: SVC_VERSION,
        createdAt: new Date().toISOString(),
        plan: image.plan,
        tables: image.tables,
        sequences: image.sequences,
      };
    } finally {
      await source.close();
    }
    await mkdir(path.join(staging, 'secrets'));
    for (const secret of SECRET_FILES) {
      const value = await readFile(path.join(options.dataDir, secret.file), 'utf8').catch(() => undefined);
      if (value?.trim()) await writeFile(path.join(staging, 'secrets', secret.file), value, { mode: 0o600 });
    }
    const full: BackupManifest = { ...manifest, files: await describeFiles(staging) };
    await writeFile(path.join(staging, MANIFEST_FILE), `${JSON.stringify(full, null, 1)}\n`);
    const entries = [MANIFEST_FILE, ...(await listFiles(staging)).filter((name) => name !== MANIFEST_FILE)];
    await create({ gzip: true, file: partial, cwd: staging, portable: true }, entries);
    await chmod(partial, 0o600);
    await rename(partial, file);
    return {
      file,
      bytes: (await stat(file)).size,
      rows: full.tables.reduce((sum, table) => sum + table.rows, 0),
      tables: full.tables.length,
      objects,
      seconds: Math.round(performance.now() - started) / 1000,
    };
  } finally {
    await rm(staging, { recursive: true, force: true });
    await rm(partial, { force: true });
  }
}

/** Hard links of the objects (copies across file systems); answers how many. */
async function stageObjects(from: string, to: string): Promise<number> {
  const names = await listFiles(from).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
  for (const name of names) {
    const destination = path.join(to, name);
    await mkdir(path.dirname(destination), { recursive: true });
    await link(path.join(from, name), destination).catch(() => copyFile(path.join(from, name), destination));
  }
  return names.length;
}
