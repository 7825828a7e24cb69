import { createReadStream } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { Logger } from 'pino';
import { extract } from 'tar';
import { holdsSvcDatabase, TransferError, writeDatabaseImage, type DatabaseImage, type ProgressReport } from '../db/transfer/database-image.ts';
import { describeEndpoint, hasEmbeddedCluster, openEndpoint, type Endpoint } from '../db/transfer/endpoint.ts';
import { SECRET_FILES } from '../db/transfer/transfer-command.ts';
import { BACKUP_FORMAT, listFiles, MANIFEST_FILE, sha256File, type BackupManifest } from './backup-manifest.ts';

export interface RestoreResult {
  to: string;
  rows: number;
  tables: number;
  objects: number;
  secrets: string[];
  seconds: number;
}

/**
 * `svc-server restore <file>`: the backup unpacked into a temporary directory beside the data
 * directory, every file checked against the manifest (size and SHA-256; a file it does not name
 * is refused too), then the database written and verified as `import` does, and the secret files
 * and objects put into the data directory. Only into an empty place: a data directory with an
 * embedded database, or a PostgreSQL database with svc's tables, is refused.
 */
export async function runRestore(options: { file: string; to: Endpoint; dataDir: string; progress: ProgressReport; log: Logger }): Promise<RestoreResult> {
  const started = performance.now();
  const { to, dataDir } = options;
  if (to.kind === 'dir' && (await hasEmbeddedCluster(to.dataDir)))
    throw new TransferError(`${describeEndpoint(to)} already exists: restore goes into an empty data directory`);
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const unpacked = await mkdtemp(path.join(dataDir, '.restore-'));
  try {
    await extract({ file: path.resolve(options.file), cwd: unpacked, strict: true }).catch((error: Error) => {
      throw new TransferError(`${options.file} is not a readable backup: ${error.message}`);
    });
    const manifest = await verifyUnpacked(unpacked);
    const secrets: string[] = [];
    for (const secret of SECRET_FILES) {
      const value = await readFile(path.join(unpacked, 'secrets', secret.file), 'utf8').catch(() => undefined);
      if (!value) continue;
      const existing = (await readFile(path.join(dataDir, secret.file), 'utf8').catch(() => undefined))?.trim();
      if (existing && existing !== value.trim())
        throw new TransferError(`${path.join(dataDir, secret.file)} holds another secret: restore goes into an empty data directory`);
      secrets.push(secret.file);
    }
    const target = await openEndpoint(to, { newDirectoryFromTemplate: true });
    try {
      if (to.kind === 'url' && (await holdsSvcDatabase(target.client)))
        throw new TransferError(`${describeEndpoint(to)} already holds an svc database: restore goes into an empty database`);
      await target.migrate(options.log);
      await writeDatabaseImage(target.client, imageOf(unpacked, manifest), options.progress);
    } finally {
      await target.close();
    }
    for (const name of secrets) await writeFile(path.join(dataDir, name), await readFile(path.join(unpacked, 'secrets', name)), { mode: 0o600 });
    const objects = manifest.files.filter((file) => file.path.startsWith('objects/')).length;
    if (objects) await cp(path.join(unpacked, 'objects'), path.join(dataDir, 'objects'), { recursive: true, force: false, errorOnExist: false });
    return {
      to: describeEndpoint(to),
      rows: manifest.tables.reduce((sum, table) => sum + table.rows, 0),
      tables: manifest.tables.length,
      objects,
      secrets,
      seconds: Math.round(performance.now() - started) / 1000,
    };
  } finally {
    await rm(unpacked, { recursive: true, force: true });
  }
}

/** The manifest, once every file it names is there with its size and hash, and no other file is. */
async function verifyUnpacked(root: string): Promise<BackupManifest> {
  const manifest = JSON.parse(await readFile(path.join(root, MANIFEST_FILE), 'utf8').catch(() => '{}')) as BackupManifest;
  if (manifest.format !== BACKUP_FORMAT) throw new TransferError(`Not an svc backup (no ${BACKUP_FORMAT} manifest)`);
  const named = new Map(manifest.files.map((file) => [file.path, file]));
  for (const file of await listFiles(root)) {
    if (file === MANIFEST_FILE) continue;
    const entry = named.get(file);
    if (!entry) throw new TransferError(`The backup holds ${file}, which its manifest does not name`);
    const hash = await sha256File(path.join(root, file));
    if (hash !== entry.sha256) throw new TransferError(`The backup's ${file} does not match its manifest (sha256 ${hash}, expected ${entry.sha256})`);
    named.delete(file);
  }
  if (named.size) throw new TransferError(`The backup lacks ${[...named.keys()].slice(0, 3).join(', ')}, named in its manifest`);
  return manifest;
}

/** The backup's tables as a database image: each line of tables/<name>.jsonl is a batch. */
function imageOf(root: string, manifest: BackupManifest): DatabaseImage {
  return {
    plan: manifest.plan,
    tables: manifest.tables,
    sequences: manifest.sequences,
    async *batches(table) {
      const lines = createInterface({ input: createReadStream(path.join(root, 'tables', `${table.name}.jsonl`)), crlfDelay: Number.POSITIVE_INFINITY });
      for await (const line of lines) if (line) yield JSON.parse(line) as string[];
    },
  };
}
