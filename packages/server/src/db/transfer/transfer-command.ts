import { cp, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import { holdsSvcDatabase, readDatabaseImage, TransferError, writeDatabaseImage, type ProgressReport, type TableSummary } from './database-image.ts';
import { describeEndpoint, hasEmbeddedCluster, openEndpoint, type Endpoint } from './endpoint.ts';

/**
 * The data directory's files that hold secrets, and the setting each stands for. Receipts and
 * tokens are signed with keys derived from `signing-secret`: without it, a receipt made before
 * the move no longer verifies after it.
 */
export const SECRET_FILES = [
  { file: 'signing-secret', setting: 'SVC_SIGNING_SECRET' },
  { file: 'storage-signing-key', setting: 'SVC_STORAGE_SIGNING_KEY' },
  { file: 'operator-token', setting: 'SVC_OPERATOR_TOKEN' },
] as const;

export interface TransferOptions {
  from: Endpoint;
  to: Endpoint;
  /** The data directory whose secret files and local objects go with the database (the source's), when known. */
  fromDataDir: string | undefined;
  /** Where they go: the target's data directory, or none when the target is only a URL. */
  toDataDir: string | undefined;
  replace: boolean;
  progress: ProgressReport;
  log: Logger;
}

export interface TransferResult {
  from: string;
  to: string;
  tables: TableSummary[];
  rows: number;
  sequences: number;
  /** Secret files written into the target's data directory. */
  carried: string[];
  /** What the user still has to do by hand (secrets and objects a URL cannot receive). */
  notes: string[];
  seconds: number;
}

/** Copies the whole database `from` into `to` (see docs/backup.md), with the secrets and objects that belong to it. */
export async function runTransfer(options: TransferOptions): Promise<TransferResult> {
  const started = performance.now();
  const { from, to } = options;
  if (from.kind === to.kind && (from.kind === 'dir' ? from.dataDir === (to as { dataDir: string }).dataDir : from.url === (to as { url: string }).url))
    throw new TransferError('The source and the target are the same database');
  if (to.kind === 'dir' && !options.replace && (await hasEmbeddedCluster(to.dataDir)))
    throw new TransferError(`${describeEndpoint(to)} already exists: pass --replace to overwrite it`);
  const source = await openEndpoint(from);
  try {
    const image = await readDatabaseImage(source.client);
    const target = await openEndpoint(to, { newDirectoryFromTemplate: true });
    try {
      if (to.kind === 'url' && !options.replace && (await holdsSvcDatabase(target.client)))
        throw new TransferError(
          `${describeEndpoint(to)} already holds an svc database: pass --replace to overwrite it (every svc table there is emptied first)`,
        );
      await target.migrate(options.log);
      options.progress(`copying ${describeEndpoint(from)} into ${describeEndpoint(to)}`);
      const tables = await writeDatabaseImage(target.client, image, options.progress);
      const { carried, notes } = await carryFiles(options);
      return {
        from: describeEndpoint(from),
        to: describeEndpoint(to),
        tables,
        rows: tables.reduce((sum, table) => sum + table.rows, 0),
        sequences: image.sequences.length,
        carried,
        notes,
        seconds: Math.round(performance.now() - started) / 1000,
      };
    } finally {
      await target.close();
    }
  } finally {
    await source.close();
  }
}

/**
 * Secret files and local objects: into the target's data directory when there is one (a secret
 * file already there and different is kept only without --replace, which is refused), or a note
 * of what the new server needs when the target is a URL alone.
 */
async function carryFiles(options: TransferOptions): Promise<{ carried: string[]; notes: string[] }> {
  const carried: string[] = [];
  const notes: string[] = [];
  if (!options.fromDataDir) return { carried, notes };
  const present: Array<(typeof SECRET_FILES)[number]> = [];
  for (const secret of SECRET_FILES) if (await readSecret(path.join(options.fromDataDir, secret.file))) present.push(secret);
  const objects = path.join(options.fromDataDir, 'objects');
  if (!options.toDataDir || options.toDataDir === options.fromDataDir) {
    if (present.length || (await exists(objects)))
      notes.push(
        `Start the new server with SVC_DATA_DIR=${options.fromDataDir} (it keeps ${[...present.map((secret) => secret.file), 'objects/'].join(', ')}), ` +
          `or copy those into its data directory, or set ${present.map((secret) => `${secret.setting} to the content of ${secret.file}`).join(', ')}: ` +
          'receipts made before the move verify only with the same signing secret.',
      );
    return { carried, notes };
  }
  await mkdir(options.toDataDir, { recursive: true, mode: 0o700 });
  for (const secret of present) {
    const value = (await readSecret(path.join(options.fromDataDir, secret.file)))!;
    const destination = path.join(options.toDataDir, secret.file);
    const existing = await readSecret(destination);
    if (existing === value) continue;
    if (existing && !options.replace) throw new TransferError(`${destination} holds another secret: pass --replace to overwrite it`);
    await writeFile(destination, `${value}\n`, { mode: 0o600 });
    carried.push(secret.file);
  }
  // Objects are immutable by name: one already there is the same object.
  if (await exists(objects)) {
    await cp(objects, path.join(options.toDataDir, 'objects'), { recursive: true, force: false, errorOnExist: false });
    carried.push('objects/');
  }
  return { carried, notes };
}

const readSecret = (file: string) =>
  readFile(file, 'utf8').then(
    (text) => text.trim() || undefined,
    (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    },
  );

const exists = (file: string) =>
  stat(file).then(
    () => true,
    () => false,
  );

/** The lines `svc-server export`/`import` print at the end. */
export function describeTransfer(result: TransferResult): string {
  const lines = [
    `Copied ${result.rows} row(s) in ${result.tables.length} tables and ${result.sequences} sequence(s) from ${result.from} into ${result.to} in ${result.seconds} s; every table's row count and checksum match.`,
  ];
  if (result.carried.length) lines.push(`Carried ${result.carried.join(', ')} into the target's data directory.`);
  lines.push(...result.notes);
  return lines.join('\n');
}
